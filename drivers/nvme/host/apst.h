/* SPDX-License-Identifier: GPL-2.0 */
/*
 * APST table computation, separate from controller state so it can be
 * unit-tested.
 */
#ifndef _NVME_APST_H
#define _NVME_APST_H

#include <linux/nvme.h>
#include <linux/types.h>

/**
 * struct nvme_apst_params - inputs of the APST table computation
 * @max_latency_us: states whose exit latency exceeds this are never targets;
 *	0 turns APST off
 * @primary_timeout_ms: idle time before entering a state within
 *	@primary_tol_us; 0 here or in @primary_tol_us selects the heuristic
 *	of spending at most 2% of the time in transitions
 * @primary_tol_us: entry + exit latency bound of the primary target
 * @secondary_timeout_ms: idle time before entering a state within
 *	@secondary_tol_us; 0 allows no secondary target
 * @secondary_tol_us: entry + exit latency bound of the secondary target
 * @skip_deepest: never target the deepest state (NVME_QUIRK_NO_DEEPEST_PS)
 */
struct nvme_apst_params {
	u64 max_latency_us;
	u64 primary_timeout_ms;
	u64 primary_tol_us;
	u64 secondary_timeout_ms;
	u64 secondary_tol_us;
	bool skip_deepest;
};

/**
 * struct nvme_apst_summary - what a computed APST table targets
 * @deepest: deepest power state used as a target, -1 if none
 * @max_lat_us: largest entry + exit latency among the targets
 */
struct nvme_apst_summary {
	int deepest;
	u64 max_lat_us;
};

bool nvme_apst_build_table(const struct nvme_apst_params *p,
			   const struct nvme_id_power_state *psd,
			   unsigned int npss, struct nvme_feat_auto_pst *table,
			   struct nvme_apst_summary *sum);

#endif /* _NVME_APST_H */

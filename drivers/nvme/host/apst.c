// SPDX-License-Identifier: GPL-2.0
/*
 * Autonomous Power State Transition table computation.
 *
 * Each entry of the table tells the controller, while idle in that power
 * state, which deeper non-operational state to move to and after how long
 * (Idle Transition Power State in bits 7:3, Idle Time Prior to Transition
 * in ms in bits 31:8).  Lower-numbered states draw more power; NPSS is the
 * index of the deepest one.
 */
#include <linux/kernel.h>
#include <linux/math.h>
#include <linux/string.h>
#include <kunit/visibility.h>

#include "apst.h"

#define NVME_APST_ITPS_SHIFT	3
#define NVME_APST_ITPT_SHIFT	8
#define NVME_APST_ITPT_MAX	((1ULL << 24) - 1)

/*
 * Idle time before entering a state of the given entry + exit latency, or
 * false if the state is not a target.  With explicit tolerances at most one
 * state per tier is used, the deepest qualifying one, walking deep to
 * shallow; @tier is the last tier used (0 for none yet).
 */
static bool nvme_apst_idle_ms(const struct nvme_apst_params *p, u64 lat_us,
			      unsigned int *tier, u64 *idle_ms)
{
	if (!p->primary_timeout_ms || !p->primary_tol_us) {
		/* spend at most 2% of the time transitioning */
		*idle_ms = min(DIV_ROUND_UP_ULL(lat_us, 20), NVME_APST_ITPT_MAX);
		return true;
	}

	if (lat_us <= p->primary_tol_us) {
		if (*tier == 1)
			return false;
		*tier = 1;
		*idle_ms = p->primary_timeout_ms;
		return true;
	}

	if (p->secondary_timeout_ms && lat_us <= p->secondary_tol_us && !*tier) {
		*tier = 2;
		*idle_ms = p->secondary_timeout_ms;
		return true;
	}
	return false;
}

/**
 * nvme_apst_build_table() - compute the APST table of a controller
 * @p: latency bound and idle timeouts
 * @psd: the controller's power state descriptors, @npss + 1 of them
 * @npss: index of the deepest power state, at most 31
 * @table: filled in; an entry with no deeper target is zero
 * @sum: filled in with the deepest target and the largest latency used
 *
 * Pure function of its arguments.  Context: any.
 *
 * Return: true if APST is to be enabled with @table, false if it is to be
 * turned off (@p->max_latency_us is 0 or @npss is out of range).
 */
bool nvme_apst_build_table(const struct nvme_apst_params *p,
			   const struct nvme_id_power_state *psd,
			   unsigned int npss, struct nvme_feat_auto_pst *table,
			   struct nvme_apst_summary *sum)
{
	unsigned int tier = 0;
	__le64 next = 0;
	int ps;

	memset(table, 0, sizeof(*table));
	sum->deepest = -1;
	sum->max_lat_us = 0;

	if (!p->max_latency_us || npss >= ARRAY_SIZE(table->entries))
		return false;

	/* deepest first: each state points at the best deeper target found */
	for (ps = npss; ps >= 0; ps--) {
		u64 exit_us = le32_to_cpu(psd[ps].exit_lat);
		u64 lat_us, idle_ms;

		table->entries[ps] = next;

		if (ps == npss && p->skip_deepest)
			continue;
		if (!(psd[ps].flags & NVME_PS_FLAGS_NON_OP_STATE))
			continue;
		if (exit_us > p->max_latency_us)
			continue;

		lat_us = exit_us + le32_to_cpu(psd[ps].entry_lat);
		if (!nvme_apst_idle_ms(p, lat_us, &tier, &idle_ms))
			continue;

		next = cpu_to_le64((u64)ps << NVME_APST_ITPS_SHIFT |
				   idle_ms << NVME_APST_ITPT_SHIFT);
		if (sum->deepest < 0)
			sum->deepest = ps;
		sum->max_lat_us = max(sum->max_lat_us, lat_us);
	}
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(nvme_apst_build_table);

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nvme-coal: nvme-pci's adaptive interrupt coalescing policy, run from user
 * space on what user space can read and driving what user space can set.
 */
#ifndef _NVME_COAL_H
#define _NVME_COAL_H

#include <stdbool.h>
#include <linux/types.h>

#include "pci_coalesce_policy.h"

#define COAL_MAX_NS	16	/* namespaces read per controller */

/* One I/O queue of a controller, and what the daemon set on it. */
struct coal_queue {
	unsigned int qid;
	int irq;		/* Linux interrupt of its vector */
	unsigned int vector;	/* its MSI-X vector (Feature 09h) */
	/* signals: cumulative, as the kernel's counters are */
	u64 runs;		/* handler runs, from /proc/interrupts */
	u64 completions;	/* the controller's, apportioned (below) */
	u64 qd_sum;		/* depth x runs, from the sampled depth */
	u64 inflight_sum;	/* commands outstanding over the sub-samples */
	unsigned int inflight_n;
	unsigned int inflight;	/* at the last sub-sample */
	/* the policy */
	struct nvme_coal_policy pol;
	struct nvme_coal_load load;
	bool valid;
	/* genirq: -1 if the vector cannot be moderated from user space */
	int saved_us;
	unsigned int set_us;
	bool refused;		/* a write failed: not tried again */
	/* Feature 09h: the value found, and Coalescing Disable as set now */
	bool have_09h;
	u32 saved_09h;
	bool exempt;
};

enum coal_actuator {
	COAL_ACT_AUTO,		/* the controller if it can, genirq otherwise */
	COAL_ACT_DEVICE,	/* Feature 08h and 09h */
	COAL_ACT_GENIRQ,	/* /proc/irq/N/moderation_us */
};

/* One controller the daemon drives. */
struct coal_ctrl {
	char name[32];		/* nvmeN */
	int fd;			/* /dev/nvmeN, for admin commands */
	char ns[COAL_MAX_NS][64];	/* its namespaces' block devices */
	unsigned int nr_ns;
	struct coal_queue *q;
	unsigned int nr_q;
	enum coal_actuator act;	/* COAL_ACT_DEVICE or COAL_ACT_GENIRQ */
	u32 saved_08h;		/* Feature 08h as found */
	u32 cur_08h;		/* as set now */
	bool touched_08h;
	u64 completions;	/* summed over its namespaces, as last read */
	bool have_completions;
	/* counts, for the summary */
	unsigned long admin_cmds, irq_writes, decisions, periods;
};

/* coal_sample.c */
int coal_discover(struct coal_ctrl *c, const char *name, char *why, size_t len);
int coal_read_depths(struct coal_ctrl *c);
int coal_read_period(struct coal_ctrl *c, u64 now_ns, unsigned int period_ms);

/* coal_act.c */
int coal_admin_features(struct coal_ctrl *c, bool set, unsigned int fid,
			unsigned int sel, u32 dw11, u32 *result);
int coal_act_prepare(struct coal_ctrl *c, enum coal_actuator want,
		     char *why, size_t len);
void coal_act_apply(struct coal_ctrl *c);
void coal_act_restore(struct coal_ctrl *c);

#endif

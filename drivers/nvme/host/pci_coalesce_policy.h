/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The adaptive interrupt coalescing policy of nvme-pci, as pure functions of
 * per-queue samples: no locks, no clocks, no hardware, so that KUnit and
 * user space can run them as the driver does.
 */
#ifndef _NVME_PCI_COALESCE_POLICY_H
#define _NVME_PCI_COALESCE_POLICY_H

#include <linux/bits.h>
#include <linux/types.h>

/*
 * High samples in a row before a queue is moderated; one if another queue
 * of the controller is moderated (the load moved: the scheduler moved its
 * submitter to another CPU).
 */
#define NVME_COAL_ENGAGE_PERIODS	2
/*
 * Periods after a release in which the queue is not moderated again; also
 * the longest a moderated queue is kept while its load is on another queue.
 */
#define NVME_COAL_WINDOW_PERIODS	20
/* Readings further apart than this many periods only set a new baseline. */
#define NVME_COAL_STALE_PERIODS		4
/* A new delay is applied only if it differs from the old one by a quarter. */
#define NVME_COAL_RETUNE_SHIFT		2
/* Average depths are kept in 1/16 of a command: QD1 reads 16. */
#define NVME_COAL_QD_SHIFT		4
#define NVME_COAL_QD1			BIT(NVME_COAL_QD_SHIFT)
/*
 * A storm: fewer than NVME_COAL_STORM_PER_RUN completions per handler run,
 * with more than NVME_COAL_STORM_QD16 (1.125 commands) outstanding on
 * average.  Moderated, a storming queue waits for NVME_COAL_STORM_BATCH
 * completions' time (unless coalescing_max_delay_us is shorter).
 */
#define NVME_COAL_STORM_PER_RUN		2
#define NVME_COAL_STORM_QD16		(NVME_COAL_QD1 + NVME_COAL_QD1 / 8)
#define NVME_COAL_STORM_BATCH		8
/* Idle: under an eighth of the completions of the period that engaged. */
#define NVME_COAL_IDLE_SHIFT		3
/* A storm moderation that lost an eighth of its rate may be undone. */
#define NVME_COAL_LOSS_SHIFT		3

/**
 * struct nvme_coal_params - the thresholds, read once per period
 * @enabled: the policy may moderate at all; off releases every queue
 * @period_ms: nominal sample period
 * @high_io_delta: completions per period of the controller, at least
 * @avg_qd_threshold: a queue whose average depth is at or under it is
 *	never moderated
 * @total_inflight_io_threshold: summed average depth of the controller's
 *	queues, at least
 * @max_delay_us: the longest delay the policy sets
 */
struct nvme_coal_params {
	bool enabled;
	u32 period_ms;
	u32 high_io_delta;
	u32 avg_qd_threshold;
	u32 total_inflight_io_threshold;
	u32 max_delay_us;
};

/**
 * struct nvme_coal_sample - raw counters of one queue, as read each period
 * @now_ns: time of the reading
 * @completions: completions reaped so far (wraps)
 * @qd_sum: sum, over handler runs, of the commands outstanding when the
 *	handler started (wraps)
 * @qd_runs: handler runs added to @qd_sum (wraps)
 * @inflight: commands outstanding now
 */
struct nvme_coal_sample {
	u64 now_ns;
	u32 completions;
	u32 qd_sum;
	u32 qd_runs;
	u32 inflight;
};

/**
 * struct nvme_coal_load - one period of one queue, or of a controller
 * @completions: completions, scaled to the nominal period
 * @runs: interrupt handler runs, scaled to the nominal period
 * @avg_qd: average queue depth (for a controller: the sum over its queues)
 * @avg_qd16: average queue depth in 1/16 of a command (queues only)
 * @engaged: moderated as the period ended, before any decision: 1 or 0
 *	for a queue, the number of such queues for a controller
 * @elapsed_ns: length of the period actually measured
 */
struct nvme_coal_load {
	u32 completions;
	u32 runs;
	u32 avg_qd;
	u32 avg_qd16;
	u32 engaged;
	u64 elapsed_ns;
};

/**
 * enum nvme_coal_state - where a queue is in the policy
 * @NVME_COAL_OFF: not moderated, and the last period was not high
 * @NVME_COAL_ARMING: not moderated; high periods in a row are counted
 *	toward moderating it
 * @NVME_COAL_ENGAGED: moderated
 * @NVME_COAL_HOLDOFF: released while still loaded: not moderated again
 *	for NVME_COAL_WINDOW_PERIODS; high periods are counted meanwhile
 */
enum nvme_coal_state {
	NVME_COAL_OFF,
	NVME_COAL_ARMING,
	NVME_COAL_ENGAGED,
	NVME_COAL_HOLDOFF,
};

/**
 * struct nvme_coal_policy - what the policy remembers of one queue
 * @last: the previous sample
 * @have_last: @last is valid
 * @state: where the queue is
 * @storm: NVME_COAL_ENGAGED for an interrupt storm, not for its depth
 * @checked: a storm moderation's first period was compared with
 *	@ref_completions
 * @trickled: a parked period after the first completed at an average
 *	depth of at most NVME_COAL_STORM_QD16; the next such period
 *	releases the queue
 * @ref_completions: completions in the period that moderated the queue
 * @ref_others: completions of the controller's other queues in that period
 * @delay_us: the delay chosen while NVME_COAL_ENGAGED, 0 otherwise
 * @batch: completions expected per interrupt at @delay_us, 0 if not
 *	NVME_COAL_ENGAGED
 * @high_runs: high periods in a row, while not NVME_COAL_ENGAGED
 * @holdoff: periods of NVME_COAL_HOLDOFF left
 * @parked: idle periods in a row while NVME_COAL_ENGAGED and the
 *	controller kept the load
 */
struct nvme_coal_policy {
	struct nvme_coal_sample last;
	bool have_last;
	enum nvme_coal_state state;
	bool storm;
	bool checked;
	bool trickled;
	u32 ref_completions;
	u32 ref_others;
	u32 delay_us;
	u32 batch;
	u32 high_runs;
	u32 holdoff;
	u32 parked;
};

/* Context: any. */
static inline bool nvme_coal_engaged(const struct nvme_coal_policy *pol)
{
	return pol->state == NVME_COAL_ENGAGED;
}

bool nvme_coal_measure(struct nvme_coal_policy *pol,
		       const struct nvme_coal_sample *s, u32 period_ms,
		       struct nvme_coal_load *load);
void nvme_coal_add_load(struct nvme_coal_load *total,
			const struct nvme_coal_load *load);
bool nvme_coal_decide(struct nvme_coal_policy *pol,
		      const struct nvme_coal_params *p,
		      const struct nvme_coal_load *q,
		      const struct nvme_coal_load *ctrl);
bool nvme_coal_storm(const struct nvme_coal_load *q);
u32 nvme_coal_feat_coalesce(u32 delay_us, u32 batch);
bool nvme_coal_feat_close(u32 cur, u32 want);
u32 nvme_coal_feat_vector(u16 vector, bool exempt);

#endif /* _NVME_PCI_COALESCE_POLICY_H */

// SPDX-License-Identifier: GPL-2.0
/*
 * The adaptive interrupt coalescing policy of nvme-pci.
 *
 * Each period every queue reports its completions, the average number of
 * commands outstanding when its handler ran, and its commands in flight.
 * A queue is moderated after NVME_COAL_ENGAGE_PERIODS high samples in a
 * row and released by the first low one; once released it waits
 * NVME_COAL_WINDOW_PERIODS before it may be moderated again, so a load
 * that swings around a threshold changes the state at most twice per
 * window.  A queue released because it went idle does not wait: its load
 * stopped or moved to another queue (the scheduler moved the submitter to
 * another CPU), and comes back as new load.  Between "high" and "low"
 * lies a band (half the controller thresholds) in which the state is kept.
 *
 * The delay is half the mean time a command spends in the queue (Little's
 * law: average depth / completion rate), so each interrupt reaps about
 * half the queue while the other half keeps the device busy.
 */
#include <kunit/visibility.h>
#include <linux/bits.h>
#include <linux/kernel.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/time64.h>

#include "coalesce_policy.h"

/* Deepest NVMe queue: a larger average is a broken sample. */
#define NVME_COAL_MAX_DEPTH		65536
/* No queue completes more than one command per 10 ns. */
#define NVME_COAL_MIN_NS_PER_CMD	10
/* Readings further apart than this many periods only re-baseline. */
#define NVME_COAL_STALE_PERIODS		4

/**
 * nvme_coal_measure() - turn a queue's raw counters into one period's load
 * @pol: the queue's policy state; remembers @s for the next period
 * @s: the counters now
 * @period_ms: nominal period the completions are scaled to
 * @load: filled in if the sample is usable
 *
 * The first sample, one that does not move forward in time, one older than
 * a few periods, and one whose counters went backwards (read as a huge
 * delta) only set the baseline.
 *
 * Context: any.
 *
 * Return: true if @load holds a usable period.
 */
bool nvme_coal_measure(struct nvme_coal_policy *pol,
		       const struct nvme_coal_sample *s, u32 period_ms,
		       struct nvme_coal_load *load)
{
	struct nvme_coal_sample prev = pol->last;
	bool had = pol->have_last;
	u64 period_ns = (u64)period_ms * NSEC_PER_MSEC;
	u32 done, runs, qd_sum;
	u64 elapsed, scaled;

	pol->last = *s;
	pol->have_last = true;
	if (!had || !period_ns || s->now_ns <= prev.now_ns)
		return false;
	elapsed = s->now_ns - prev.now_ns;
	if (elapsed > NVME_COAL_STALE_PERIODS * period_ns)
		return false;

	done = s->completions - prev.completions;
	runs = s->qd_runs - prev.qd_runs;
	qd_sum = s->qd_sum - prev.qd_sum;
	if (done > div64_u64(elapsed, NVME_COAL_MIN_NS_PER_CMD) + NVME_COAL_MAX_DEPTH)
		return false;
	if (runs && qd_sum / runs > NVME_COAL_MAX_DEPTH)
		return false;
	if (!runs && s->inflight > NVME_COAL_MAX_DEPTH)
		return false;

	scaled = div64_u64((u64)done * period_ns, elapsed);
	load->completions = min_t(u64, scaled, U32_MAX);
	load->avg_qd = runs ? DIV_ROUND_CLOSEST(qd_sum, runs) : s->inflight;
	load->elapsed_ns = elapsed;
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(nvme_coal_measure);

/**
 * nvme_coal_add_load() - add a queue's period to its controller's
 * @total: the controller's load, zeroed before the first queue
 * @load: a usable period of one queue
 *
 * Context: any.
 */
void nvme_coal_add_load(struct nvme_coal_load *total,
			const struct nvme_coal_load *load)
{
	total->completions = min_t(u64, (u64)total->completions +
				   load->completions, U32_MAX);
	total->avg_qd = min_t(u64, (u64)total->avg_qd + load->avg_qd, U32_MAX);
	total->elapsed_ns = max(total->elapsed_ns, load->elapsed_ns);
}
EXPORT_SYMBOL_IF_KUNIT(nvme_coal_add_load);

static u32 nvme_coal_delay(const struct nvme_coal_params *p,
			   const struct nvme_coal_load *q)
{
	/* half of avg_qd / (completions / period), in microseconds */
	u64 us = div64_u64((u64)q->avg_qd * p->period_ms * (USEC_PER_MSEC / 2),
			   q->completions);

	return clamp_t(u64, us, 1, max(p->max_delay_us, 1U));
}

static void nvme_coal_release(struct nvme_coal_policy *pol, bool idle)
{
	/* an idle queue's load went away (or to another queue): no flapping */
	if (pol->engaged && !idle) {
		pol->released = true;
		pol->released_at = pol->periods;
	}
	pol->engaged = false;
	pol->delay_us = 0;
	pol->high_runs = 0;
}

/**
 * nvme_coal_decide() - decide a queue's moderation for the next period
 * @pol: the queue's policy state
 * @p: the thresholds now in force
 * @q: the queue's load in the period that ended
 * @ctrl: its controller's load, the sum over the queues with a usable sample
 *
 * Context: any.
 *
 * Return: true if @pol->engaged or @pol->delay_us changed.
 */
bool nvme_coal_decide(struct nvme_coal_policy *pol,
		      const struct nvme_coal_params *p,
		      const struct nvme_coal_load *q,
		      const struct nvme_coal_load *ctrl)
{
	bool was = pol->engaged;
	u32 old = pol->delay_us;
	bool high, low;
	u32 delay;

	pol->periods++;
	high = p->enabled && q->completions &&
	       q->avg_qd > p->avg_qd_threshold &&
	       ctrl->completions >= p->high_io_delta &&
	       ctrl->avg_qd >= p->total_inflight_io_threshold;
	low = !p->enabled || !q->completions ||
	      q->avg_qd <= p->avg_qd_threshold ||
	      ctrl->completions < p->high_io_delta / 2 ||
	      ctrl->avg_qd < p->total_inflight_io_threshold / 2;

	if (low) {
		nvme_coal_release(pol, p->enabled && !q->completions);
	} else if (pol->engaged) {
		delay = nvme_coal_delay(p, q);
		if (abs_diff(delay, pol->delay_us) >
		    pol->delay_us >> NVME_COAL_RETUNE_SHIFT)
			pol->delay_us = delay;
	} else {
		pol->high_runs = high ? pol->high_runs + 1 : 0;
		if (pol->high_runs >= NVME_COAL_ENGAGE_PERIODS &&
		    (!pol->released ||
		     pol->periods - pol->released_at >= NVME_COAL_WINDOW_PERIODS)) {
			pol->engaged = true;
			pol->delay_us = nvme_coal_delay(p, q);
			pol->high_runs = 0;
		}
	}
	return was != pol->engaged || old != pol->delay_us;
}
EXPORT_SYMBOL_IF_KUNIT(nvme_coal_decide);

/**
 * nvme_coal_feat_coalesce() - CDW11 of Set Features Interrupt Coalescing
 * @delay_us: the delay; 0 turns device coalescing off
 * @avg_qd: the average depth of the moderated queues
 *
 * Aggregation Time is in 100 us units (at least one); the Aggregation
 * Threshold (0's based) is half the average depth, like the software delay.
 *
 * Context: any.
 *
 * Return: the dword.
 */
u32 nvme_coal_feat_coalesce(u32 delay_us, u32 avg_qd)
{
	u32 time, thr;

	if (!delay_us)
		return 0;
	time = clamp_t(u32, DIV_ROUND_UP(delay_us, 100), 1, 255);
	thr = clamp_t(u32, avg_qd / 2, 1, 256) - 1;
	return thr | time << 8;
}
EXPORT_SYMBOL_IF_KUNIT(nvme_coal_feat_coalesce);

/**
 * nvme_coal_feat_vector() - CDW11 of Set Features Interrupt Vector Configuration
 * @vector: the MSI-X vector
 * @exempt: set Coalescing Disable, so the vector signals every completion
 *
 * Context: any.
 *
 * Return: the dword.
 */
u32 nvme_coal_feat_vector(u16 vector, bool exempt)
{
	return vector | (exempt ? BIT(16) : 0);
}
EXPORT_SYMBOL_IF_KUNIT(nvme_coal_feat_vector);

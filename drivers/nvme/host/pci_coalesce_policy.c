// SPDX-License-Identifier: GPL-2.0
/*
 * The adaptive interrupt coalescing policy of nvme-pci.
 *
 * Each period every queue reports its completions, the average number of
 * commands outstanding when its handler ran, and its commands in flight.
 * A queue is moderated after NVME_COAL_ENGAGE_PERIODS high samples in a
 * row (one, when another queue of its controller is moderated: the load
 * moved there) and released by the first low one; once released it waits
 * NVME_COAL_WINDOW_PERIODS before it may be moderated again, so a load
 * that swings around a threshold changes the state at most twice per
 * window.  A queue released because it went idle does not wait: its load
 * stopped or moved to another queue (the scheduler moved the submitter to
 * another CPU), and comes back as new load.  Idle is no completions, or
 * less than an eighth of the queue's own completions in the period it was
 * moderated; a queue moderated for a storm that is down to QD1 does not
 * wait either.  A moderated queue that goes idle while its controller's
 * other queues complete at least half what it did when it was moderated is
 * kept so, for up to NVME_COAL_WINDOW_PERIODS: the submitter moved to
 * another CPU and tends to come back (one fio job on two CPUs moves every
 * 50 to 200 ms), and a queue that completes next to nothing loses next to
 * nothing by its moderation.  Between "high" and "low" lies a band (half the controller
 * thresholds) in which the state is kept.
 *
 * A queue is high when its controller completes high_io_delta commands
 * per period and the queue is deeper than avg_qd_threshold with
 * total_inflight_io_threshold commands outstanding on the controller, or
 * storms: its handler runs for fewer than NVME_COAL_STORM_PER_RUN
 * completions at a time while more than 1.125 commands are outstanding on
 * average.  The storm is the interrupt-bound case: completions arrive one
 * by one faster than the CPU handles them, the submitter falls behind and
 * the depth the driver sees stays low although the application keeps many
 * commands in flight.  The rate is absolute because what an interrupt
 * costs is not visible where the policy looks: one completion per run, or
 * a deep queue, is also a light or slow load where interrupts are cheap,
 * and under a hypervisor most of an interrupt's cost is outside the
 * guest's hardirq time.  A queue moderated for a storm stays so while
 * its controller is busy and it is deeper than QD1 (once moderated its
 * handler runs become rarer by design, so they cannot tell when the storm
 * ends), provided its first moderated period kept its rate, and later
 * while it keeps its rate or fills half its batches: a queue that holds
 * only a few commands (from the start, or once its load falls) cannot
 * fill a batch, waits out every delay, slows down, and is released.  At
 * QD1 the depth is exactly one: such a queue is never moderated.
 *
 * The delay is half the mean time a command spends in the queue (Little's
 * law: average depth / completion rate), so each interrupt reaps about
 * half the queue while the other half keeps the device busy; in a storm at
 * least the time NVME_COAL_STORM_BATCH completions took to arrive before
 * the queue was moderated (its rate since depends on the delay itself).
 */
#include <kunit/visibility.h>
#include <linux/bits.h>
#include <linux/kernel.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/time64.h>

#include "pci_coalesce_policy.h"

/* Deepest NVMe queue: a larger average is a broken sample. */
#define NVME_COAL_MAX_DEPTH		65536
/* No queue completes more than one command per 10 ns. */
#define NVME_COAL_MIN_NS_PER_CMD	10

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
	load->runs = min_t(u64, div64_u64((u64)runs * period_ns, elapsed),
			   U32_MAX);
	load->avg_qd = runs ? DIV_ROUND_CLOSEST(qd_sum, runs) : s->inflight;
	load->avg_qd16 = runs ? div_u64((u64)qd_sum << NVME_COAL_QD_SHIFT, runs)
			      : s->inflight << NVME_COAL_QD_SHIFT;
	load->elapsed_ns = elapsed;
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(nvme_coal_measure);

/**
 * nvme_coal_add_load() - add a queue's period to its controller's
 * @total: the controller's load, zeroed before the first queue
 * @load: a usable period of one queue; its @engaged is 1 if the queue is
 *	moderated, 0 otherwise
 *
 * Context: any.
 */
void nvme_coal_add_load(struct nvme_coal_load *total,
			const struct nvme_coal_load *load)
{
	total->completions = min_t(u64, (u64)total->completions +
				   load->completions, U32_MAX);
	total->engaged += load->engaged;
	total->avg_qd = min_t(u64, (u64)total->avg_qd + load->avg_qd, U32_MAX);
	total->elapsed_ns = max(total->elapsed_ns, load->elapsed_ns);
}
EXPORT_SYMBOL_IF_KUNIT(nvme_coal_add_load);

/**
 * nvme_coal_storm() - whether a queue's period looks like an interrupt storm
 * @q: the queue's load in one period
 *
 * Its handler ran for fewer than NVME_COAL_STORM_PER_RUN completions at a
 * time, and more than NVME_COAL_STORM_QD16 sixteenths of a command were
 * outstanding on average: a queue with a single submitter at QD1 has
 * exactly one at every run, and one with an odd second command now and
 * then stays under the margin.
 *
 * Context: any.
 *
 * Return: true for a storm.
 */
bool nvme_coal_storm(const struct nvme_coal_load *q)
{
	return q->runs && q->completions &&
	       q->completions < (u64)q->runs * NVME_COAL_STORM_PER_RUN &&
	       q->avg_qd16 > NVME_COAL_STORM_QD16;
}
EXPORT_SYMBOL_IF_KUNIT(nvme_coal_storm);

/*
 * The delay for the queue's load, and the completions expected within it
 * (the Aggregation Threshold of device coalescing).  @storm_rate is the
 * completions per period a storm moderation started from, 0 for a deep
 * queue.  Context: any; @q->completions is not zero.
 */
static void nvme_coal_delay(const struct nvme_coal_params *p,
			    const struct nvme_coal_load *q, u32 storm_rate,
			    u32 *delay_us, u32 *batch)
{
	u64 period_us = (u64)p->period_ms * USEC_PER_MSEC;
	/* half of avg_qd / (completions / period), in microseconds */
	u64 us = div64_u64((u64)q->avg_qd * period_us / 2, q->completions);

	if (storm_rate)
		us = max(us, DIV64_U64_ROUND_UP(NVME_COAL_STORM_BATCH * period_us,
						storm_rate));
	*delay_us = clamp_t(u64, us, 1, max(p->max_delay_us, 1U));
	*batch = clamp_t(u64, div64_u64((u64)q->completions * *delay_us,
					period_us), 1, 256);
}

static bool nvme_coal_retune(u32 *cur, u32 want)
{
	if (abs_diff(want, *cur) <= *cur >> NVME_COAL_RETUNE_SHIFT)
		return false;
	*cur = want;
	return true;
}

static void nvme_coal_release(struct nvme_coal_policy *pol, bool window)
{
	pol->state = window ? NVME_COAL_HOLDOFF : NVME_COAL_OFF;
	pol->holdoff = window ? NVME_COAL_WINDOW_PERIODS : 0;
	pol->storm = false;
	pol->checked = false;
	pol->delay_us = 0;
	pol->batch = 0;
	pol->high_runs = 0;
	pol->parked = 0;
	pol->trickled = false;
}

/* Completions of the controller's queues but @q.  Context: any. */
static u32 nvme_coal_others(const struct nvme_coal_load *q,
			    const struct nvme_coal_load *ctrl)
{
	return ctrl->completions - min(ctrl->completions, q->completions);
}

/*
 * Whether a moderated queue is parked: kept moderated, with its delay, for
 * up to NVME_COAL_WINDOW_PERIODS while its load is on another queue of the
 * controller (the scheduler moved the submitter to another CPU), since it
 * tends to come back.  Parked is idle (no completions, or under an eighth
 * of those of the period that moderated it) while the controller's other
 * queues complete at least half as many; not once the knobs no longer
 * allow the delay.  A QD1 trickle (completions at an average depth of at
 * most NVME_COAL_STORM_QD16) is released the second time a parked period
 * trickles.  The period the load left in does not count: the load's last
 * commands complete at a falling depth and look like one.  One trickling
 * period alone is not enough: a load that comes back late in a period
 * looks the same, its first commands completing one at a time while its
 * others still complete on the queue it had moved to.  Other parked
 * periods in between neither count nor reset it, so a trickle too slow to
 * complete in every period is released too.  The period in which the
 * load comes back is not judged either: it was partly idle.
 * Context: any.
 */
static bool nvme_coal_parked(struct nvme_coal_policy *pol,
			     const struct nvme_coal_params *p,
			     const struct nvme_coal_load *q,
			     const struct nvme_coal_load *ctrl)
{
	u32 ref = pol->ref_completions;
	u32 others = nvme_coal_others(q, ctrl);
	u32 parked = pol->parked;
	bool trickled = pol->trickled;
	bool trickle;

	pol->parked = 0;
	pol->trickled = false;
	if (!p->enabled || pol->delay_us > p->max_delay_us)
		return false;
	if ((u64)q->completions << NVME_COAL_IDLE_SHIFT >= ref)
		return parked && q->avg_qd16 > NVME_COAL_STORM_QD16 &&
		       ctrl->completions >= p->high_io_delta / 2;
	trickle = parked && q->completions &&
		  q->avg_qd16 <= NVME_COAL_STORM_QD16;
	if ((trickle && trickled) || (u64)others * 2 < ref ||
	    parked >= NVME_COAL_WINDOW_PERIODS)
		return false;
	pol->parked = parked + 1;
	pol->trickled = trickled || trickle;
	return true;
}

/*
 * Whether a moderated queue is to be released, and whether without the
 * hysteresis window (@idle: its load stopped or moved, or a storm ended
 * at QD1).  Context: any.
 */
static bool nvme_coal_low(struct nvme_coal_policy *pol,
			  const struct nvme_coal_params *p,
			  const struct nvme_coal_load *q,
			  const struct nvme_coal_load *ctrl, bool *idle)
{
	u32 ref = pol->ref_completions;
	u32 others = nvme_coal_others(q, ctrl);
	bool lost;

	*idle = !q->completions ||
		(u64)q->completions << NVME_COAL_IDLE_SHIFT < ref;
	if (*idle || !p->enabled || ctrl->completions < p->high_io_delta / 2)
		return true;
	if (!pol->storm)
		return q->avg_qd <= p->avg_qd_threshold ||
		       ctrl->avg_qd < p->total_inflight_io_threshold / 2;
	if (q->avg_qd16 <= NVME_COAL_QD1) {
		*idle = true;
		return true;
	}
	/*
	 * A storm moderation pays only if the queue keeps its rate: one that
	 * cannot fill a batch waits out every delay and slows down.  Its
	 * first moderated period tells; later, when the load falls, the rate
	 * falls too, but then the batches must have shrunk under half.  A
	 * rate that went to the controller's other queues (at least half of
	 * what this one lost) moved with its submitter and was not lost.
	 */
	lost = q->completions < ref - (ref >> NVME_COAL_LOSS_SHIFT) &&
	       others < (u64)pol->ref_others + (ref - q->completions) / 2;
	if (!pol->checked) {
		pol->checked = true;
		return lost;
	}
	return lost &&
	       (u64)q->completions * 2 < (u64)q->runs * NVME_COAL_STORM_BATCH;
}

/**
 * nvme_coal_decide() - decide a queue's moderation for the next period
 * @pol: the queue's policy state
 * @p: the thresholds now in force
 * @q: the queue's load in the period that ended
 * @ctrl: its controller's load, the sum over the queues with a usable sample
 *
 * A queue on a busy controller that is deep or storms is moderated after
 * NVME_COAL_ENGAGE_PERIODS high periods, one if another queue of the
 * controller is moderated; a moderated one is released by its first low
 * period (nvme_coal_low()), and after a release that was not idle it is
 * not moderated again for NVME_COAL_WINDOW_PERIODS.  One that went idle
 * while its controller kept the load stays moderated for up to as many
 * periods (nvme_coal_parked()).
 *
 * Context: any.
 *
 * Return: true if the queue was moderated or released, or @pol->delay_us
 * changed.
 */
bool nvme_coal_decide(struct nvme_coal_policy *pol,
		      const struct nvme_coal_params *p,
		      const struct nvme_coal_load *q,
		      const struct nvme_coal_load *ctrl)
{
	bool was = nvme_coal_engaged(pol);
	u32 old = pol->delay_us;
	bool deep, storm, high, idle;
	u32 delay, batch, engage;

	if (was) {
		if (nvme_coal_parked(pol, p, q, ctrl))
			return false;
		if (nvme_coal_low(pol, p, q, ctrl, &idle)) {
			nvme_coal_release(pol, !idle && p->enabled);
		} else {
			nvme_coal_delay(p, q, pol->storm ? pol->ref_completions : 0,
					&delay, &batch);
			nvme_coal_retune(&pol->delay_us, delay);
			nvme_coal_retune(&pol->batch, batch);
		}
		return !nvme_coal_engaged(pol) || old != pol->delay_us;
	}

	deep = q->avg_qd > p->avg_qd_threshold &&
	       ctrl->avg_qd >= p->total_inflight_io_threshold;
	storm = nvme_coal_storm(q);
	high = p->enabled && q->completions &&
	       ctrl->completions >= p->high_io_delta && (deep || storm);
	engage = ctrl->engaged ? 1 : NVME_COAL_ENGAGE_PERIODS;
	pol->high_runs = high ? pol->high_runs + 1 : 0;
	if (pol->state == NVME_COAL_HOLDOFF && --pol->holdoff)
		return false;
	pol->state = pol->high_runs ? NVME_COAL_ARMING : NVME_COAL_OFF;
	if (pol->high_runs >= engage) {
		pol->state = NVME_COAL_ENGAGED;
		pol->storm = !deep;
		pol->checked = false;
		pol->ref_completions = q->completions;
		pol->ref_others = nvme_coal_others(q, ctrl);
		nvme_coal_delay(p, q, pol->storm ? q->completions : 0,
				&pol->delay_us, &pol->batch);
		pol->high_runs = 0;
	}
	return nvme_coal_engaged(pol);
}
EXPORT_SYMBOL_IF_KUNIT(nvme_coal_decide);

/**
 * nvme_coal_feat_coalesce() - CDW11 of Set Features Interrupt Coalescing
 * @delay_us: the delay; 0 turns device coalescing off
 * @batch: completions expected per interrupt at that delay
 *
 * Aggregation Time is in 100 us units (at least one); the Aggregation
 * Threshold (0's based) is @batch, so the controller signals as soon as an
 * interrupt's worth of completions is there, and the time bounds the wait.
 * The threshold is at least two entries: at one the controller signals
 * every completion, which is no coalescing at all (a queue whose rate
 * fills less than two entries per delay still gathers the completions that
 * come within the time).
 *
 * Context: any.
 *
 * Return: the dword.
 */
u32 nvme_coal_feat_coalesce(u32 delay_us, u32 batch)
{
	u32 time, thr;

	if (!delay_us)
		return 0;
	time = clamp_t(u32, DIV_ROUND_UP(delay_us, 100), 1, 255);
	thr = clamp_t(u32, batch, 2, 256) - 1;
	return thr | time << 8;
}
EXPORT_SYMBOL_IF_KUNIT(nvme_coal_feat_coalesce);

/**
 * nvme_coal_feat_close() - whether Feature 08h need not change
 * @cur: the value the controller has
 * @want: the value wanted now
 *
 * Off and on always differ; otherwise a threshold within a quarter of the
 * current one or two entries, and a time within a quarter or 100 us, is
 * kept, so that the load's noise from one period to the next does not cost
 * a Set Features command each period.
 *
 * Context: any.
 *
 * Return: true if @cur can stay.
 */
bool nvme_coal_feat_close(u32 cur, u32 want)
{
	u32 thr0 = (cur & 0xff) + 1, thr1 = (want & 0xff) + 1;
	u32 time0 = (cur >> 8) & 0xff, time1 = (want >> 8) & 0xff;

	if (!cur || !want)
		return cur == want;
	return abs_diff(thr0, thr1) <= max(thr0 >> NVME_COAL_RETUNE_SHIFT, 2U) &&
	       abs_diff(time0, time1) <= max(time0 >> NVME_COAL_RETUNE_SHIFT, 1U);
}
EXPORT_SYMBOL_IF_KUNIT(nvme_coal_feat_close);

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

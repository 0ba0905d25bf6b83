// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the nvme-pci adaptive interrupt coalescing policy, fed
 * with synthetic sample sequences.
 */
#include <kunit/test.h>
#include <linux/module.h>
#include <linux/time64.h>

#include "coalesce_policy.h"

#define PERIOD_MS	50

static const struct nvme_coal_params defaults = {
	.enabled = true,
	.period_ms = PERIOD_MS,
	.high_io_delta = 1000,
	.avg_qd_threshold = 8,
	.total_inflight_io_threshold = 16,
	.max_delay_us = 1000,
};

/* A queue driven through raw counters, as the driver reads them. */
struct fake_queue {
	struct nvme_coal_policy pol;
	struct nvme_coal_sample s;
	int engagements;
	int releases;
};

/*
 * One period: @done completions, handler runs that each saw @qd commands
 * outstanding (one run per @batch completions).  The controller is this
 * queue alone.  Returns whether the decision changed anything.
 */
static bool period(struct fake_queue *fq, const struct nvme_coal_params *p,
		   u32 done, u32 qd, u32 batch)
{
	struct nvme_coal_load q = { }, ctrl = { };
	u32 runs = batch ? DIV_ROUND_UP(done, batch) : 0;
	bool was = fq->pol.engaged;
	bool changed;

	fq->s.now_ns += (u64)PERIOD_MS * NSEC_PER_MSEC;
	fq->s.completions += done;
	fq->s.qd_runs += runs;
	fq->s.qd_sum += runs * qd;
	fq->s.inflight = qd;
	if (!nvme_coal_measure(&fq->pol, &fq->s, p->period_ms, &q))
		return false;
	nvme_coal_add_load(&ctrl, &q);
	changed = nvme_coal_decide(&fq->pol, p, &q, &ctrl);
	if (!was && fq->pol.engaged)
		fq->engagements++;
	if (was && !fq->pol.engaged)
		fq->releases++;
	return changed;
}

static void steady_qd1_never_engages(struct kunit *test)
{
	struct fake_queue fq = { };
	int i;

	/* far above the rate threshold, but one command at a time */
	for (i = 0; i < 400; i++)
		period(&fq, &defaults, 50000, 1, 1);
	KUNIT_EXPECT_EQ(test, fq.engagements, 0);
	KUNIT_EXPECT_FALSE(test, fq.pol.engaged);
	KUNIT_EXPECT_EQ(test, fq.pol.delay_us, 0U);
}

static void sustained_load_engages(struct kunit *test)
{
	struct fake_queue fq = { };
	int i, at = -1;

	for (i = 0; i < 10 && at < 0; i++) {
		period(&fq, &defaults, 2000, 32, 8);
		if (fq.pol.engaged)
			at = i;
	}
	/* the first reading is the baseline, then two high periods */
	KUNIT_EXPECT_EQ(test, at, NVME_COAL_ENGAGE_PERIODS);
	/* 32 deep, 2000 per 50 ms: 800 us in the queue, half of it */
	KUNIT_EXPECT_EQ(test, fq.pol.delay_us, 400U);
}

static void load_drop_releases(struct kunit *test)
{
	struct fake_queue fq = { };
	int i;

	for (i = 0; i < 5; i++)
		period(&fq, &defaults, 2000, 32, 8);
	KUNIT_ASSERT_TRUE(test, fq.pol.engaged);
	/* the queue goes back to QD1: released by the very next period */
	KUNIT_EXPECT_TRUE(test, period(&fq, &defaults, 300, 1, 1));
	KUNIT_EXPECT_FALSE(test, fq.pol.engaged);
	KUNIT_EXPECT_EQ(test, fq.pol.delay_us, 0U);

	for (i = 0; i < 5; i++)
		period(&fq, &defaults, 2000, 32, 8);
	for (i = 0; i < 30; i++)
		period(&fq, &defaults, 2000, 32, 8);
	KUNIT_ASSERT_TRUE(test, fq.pol.engaged);
	/* and idle: no completions at all */
	period(&fq, &defaults, 0, 0, 0);
	KUNIT_EXPECT_FALSE(test, fq.pol.engaged);
}

static void oscillating_load_does_not_flap(struct kunit *test)
{
	struct nvme_coal_params p = defaults;
	struct fake_queue fq = { };
	int i, windows = 10;

	/* depth just over and at the threshold: two high periods, one low */
	p.avg_qd_threshold = 16;
	for (i = 0; i < windows * NVME_COAL_WINDOW_PERIODS; i++)
		period(&fq, &p, 2000, i % 3 == 2 ? 16 : 17, 8);
	KUNIT_EXPECT_GT(test, fq.engagements, 0);
	KUNIT_EXPECT_LE(test, fq.engagements, windows);
	KUNIT_EXPECT_LE(test, fq.releases, windows);

	/* high and low in turn never make two high periods in a row */
	memset(&fq, 0, sizeof(fq));
	for (i = 0; i < 200; i++)
		period(&fq, &defaults, i % 2 ? 2000 : 100, 32, 8);
	KUNIT_EXPECT_EQ(test, fq.engagements, 0);

	/* within the band (half the rate threshold) the state is kept */
	memset(&fq, 0, sizeof(fq));
	for (i = 0; i < 5; i++)
		period(&fq, &defaults, 2000, 32, 8);
	for (i = 0; i < 50; i++)
		period(&fq, &defaults, i % 2 ? 2000 : 600, 32, 8);
	KUNIT_EXPECT_EQ(test, fq.engagements, 1);
	KUNIT_EXPECT_EQ(test, fq.releases, 0);
}

static void load_moving_between_queues(struct kunit *test)
{
	struct fake_queue fq = { };
	int i, move;

	/* the submitter moves to another CPU and back, again and again */
	for (move = 0; move < 5; move++) {
		for (i = 0; i < 3; i++)
			period(&fq, &defaults, 2000, 32, 8);
		KUNIT_EXPECT_TRUE(test, fq.pol.engaged);
		period(&fq, &defaults, 0, 0, 0);
		KUNIT_EXPECT_FALSE(test, fq.pol.engaged);
	}
	KUNIT_EXPECT_EQ(test, fq.engagements, 5);
}

static void threshold_change_applies_next_period(struct kunit *test)
{
	struct nvme_coal_params p = defaults;
	struct fake_queue fq = { };
	int i;

	for (i = 0; i < 5; i++)
		period(&fq, &p, 2000, 32, 8);
	KUNIT_ASSERT_TRUE(test, fq.pol.engaged);
	p.avg_qd_threshold = 32;
	period(&fq, &p, 2000, 32, 8);
	KUNIT_EXPECT_FALSE(test, fq.pol.engaged);

	/* a lower rate threshold lets a slow queue engage */
	memset(&fq, 0, sizeof(fq));
	p = defaults;
	for (i = 0; i < 5; i++)
		period(&fq, &p, 200, 32, 8);
	KUNIT_EXPECT_FALSE(test, fq.pol.engaged);
	p.high_io_delta = 100;
	period(&fq, &p, 200, 32, 8);
	period(&fq, &p, 200, 32, 8);
	KUNIT_EXPECT_TRUE(test, fq.pol.engaged);

	/* the delay follows max_delay_us at once */
	p.max_delay_us = 100;
	period(&fq, &p, 200, 32, 8);
	KUNIT_EXPECT_EQ(test, fq.pol.delay_us, 100U);

	/* and switching the policy off releases at once */
	p.enabled = false;
	KUNIT_EXPECT_TRUE(test, period(&fq, &p, 200, 32, 8));
	KUNIT_EXPECT_FALSE(test, fq.pol.engaged);
}

static void delay_tracks_load_with_a_band(struct kunit *test)
{
	struct fake_queue fq = { };
	int i;

	for (i = 0; i < 5; i++)
		period(&fq, &defaults, 2000, 32, 8);
	KUNIT_ASSERT_EQ(test, fq.pol.delay_us, 400U);
	/* 10 % faster: not worth a change */
	KUNIT_EXPECT_FALSE(test, period(&fq, &defaults, 2200, 32, 8));
	KUNIT_EXPECT_EQ(test, fq.pol.delay_us, 400U);
	/* twice as fast: half the delay */
	KUNIT_EXPECT_TRUE(test, period(&fq, &defaults, 4000, 32, 8));
	KUNIT_EXPECT_EQ(test, fq.pol.delay_us, 200U);
	/* very slow and deep: bounded by max_delay_us */
	period(&fq, &defaults, 1000, 4000, 8);
	KUNIT_EXPECT_EQ(test, fq.pol.delay_us, 1000U);
}

static void absurd_samples_are_ignored(struct kunit *test)
{
	struct nvme_coal_policy pol = { };
	struct nvme_coal_sample s = { .now_ns = NSEC_PER_SEC };
	struct nvme_coal_load q = { };

	/* the first sample is a baseline */
	KUNIT_EXPECT_FALSE(test, nvme_coal_measure(&pol, &s, PERIOD_MS, &q));
	/* time that does not move, or moves back */
	KUNIT_EXPECT_FALSE(test, nvme_coal_measure(&pol, &s, PERIOD_MS, &q));
	s.now_ns -= 1000;
	KUNIT_EXPECT_FALSE(test, nvme_coal_measure(&pol, &s, PERIOD_MS, &q));
	/* a zero period */
	s.now_ns += 2 * PERIOD_MS * NSEC_PER_MSEC;
	KUNIT_EXPECT_FALSE(test, nvme_coal_measure(&pol, &s, 0, &q));
	/* a reading long after the last one only re-baselines */
	s.now_ns += 3600 * NSEC_PER_SEC;
	KUNIT_EXPECT_FALSE(test, nvme_coal_measure(&pol, &s, PERIOD_MS, &q));

	/* counters wrapping past U32_MAX give the right deltas */
	s.completions = U32_MAX - 99;
	s.qd_sum = U32_MAX - 9;
	s.qd_runs = U32_MAX;
	s.now_ns += PERIOD_MS * NSEC_PER_MSEC;
	nvme_coal_measure(&pol, &s, PERIOD_MS, &q);
	s.completions += 1000;
	s.qd_sum += 32 * 125;
	s.qd_runs += 125;
	s.now_ns += PERIOD_MS * NSEC_PER_MSEC;
	KUNIT_ASSERT_TRUE(test, nvme_coal_measure(&pol, &s, PERIOD_MS, &q));
	KUNIT_EXPECT_EQ(test, q.completions, 1000U);
	KUNIT_EXPECT_EQ(test, q.avg_qd, 32U);

	/* counters that went back (a restarted queue) read as a huge delta */
	s.completions -= 5000;
	s.now_ns += PERIOD_MS * NSEC_PER_MSEC;
	KUNIT_EXPECT_FALSE(test, nvme_coal_measure(&pol, &s, PERIOD_MS, &q));
	/* an average depth no queue can have */
	s.qd_sum += 100000;
	s.qd_runs += 1;
	s.now_ns += PERIOD_MS * NSEC_PER_MSEC;
	KUNIT_EXPECT_FALSE(test, nvme_coal_measure(&pol, &s, PERIOD_MS, &q));

	/* an empty load never engages, however often it comes */
	memset(&q, 0, sizeof(q));
	pol = (struct nvme_coal_policy) { };
	for (int i = 0; i < 10; i++)
		nvme_coal_decide(&pol, &defaults, &q, &q);
	KUNIT_EXPECT_FALSE(test, pol.engaged);
}

static void busy_controller_needed(struct kunit *test)
{
	struct nvme_coal_load q = { .completions = 2000, .avg_qd = 32 };
	struct nvme_coal_load ctrl = q;
	struct nvme_coal_policy pol = { };
	int i;

	/* one busy queue, but the controller's in-flight sum is too low */
	ctrl.avg_qd = 15;
	for (i = 0; i < 10; i++)
		nvme_coal_decide(&pol, &defaults, &q, &ctrl);
	KUNIT_EXPECT_FALSE(test, pol.engaged);
	ctrl.avg_qd = 16;
	for (i = 0; i < NVME_COAL_ENGAGE_PERIODS; i++)
		nvme_coal_decide(&pol, &defaults, &q, &ctrl);
	KUNIT_EXPECT_TRUE(test, pol.engaged);
}

static void feature_dwords(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, nvme_coal_feat_coalesce(0, 32), 0U);
	/* 250 us -> 3 x 100 us; threshold 16 entries, 0's based */
	KUNIT_EXPECT_EQ(test, nvme_coal_feat_coalesce(250, 32), 0x030fU);
	/* at least 100 us and one entry; at most 25.5 ms and 256 entries */
	KUNIT_EXPECT_EQ(test, nvme_coal_feat_coalesce(1, 1), 0x0100U);
	KUNIT_EXPECT_EQ(test, nvme_coal_feat_coalesce(100000, 4096), 0xffffU);
	KUNIT_EXPECT_EQ(test, nvme_coal_feat_vector(5, true), 0x10005U);
	KUNIT_EXPECT_EQ(test, nvme_coal_feat_vector(5, false), 0x5U);
}

static struct kunit_case nvme_coal_cases[] = {
	KUNIT_CASE(steady_qd1_never_engages),
	KUNIT_CASE(sustained_load_engages),
	KUNIT_CASE(load_drop_releases),
	KUNIT_CASE(oscillating_load_does_not_flap),
	KUNIT_CASE(load_moving_between_queues),
	KUNIT_CASE(threshold_change_applies_next_period),
	KUNIT_CASE(delay_tracks_load_with_a_band),
	KUNIT_CASE(absurd_samples_are_ignored),
	KUNIT_CASE(busy_controller_needed),
	KUNIT_CASE(feature_dwords),
	{}
};

static struct kunit_suite nvme_coal_suite = {
	.name = "nvme_coalesce_policy",
	.test_cases = nvme_coal_cases,
};

kunit_test_suite(nvme_coal_suite);

MODULE_DESCRIPTION("KUnit tests for the nvme-pci adaptive coalescing policy");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the decision of the nvme-pci lost interrupt poller: given
 * successive samples of a completion queue, when is a completion stuck?
 */
#include <kunit/test.h>
#include <linux/module.h>
#include <linux/time64.h>

#include "lost_irq.h"

#define MS(x)	((u64)(x) * NSEC_PER_MSEC)

static struct nvme_cq_sample sample(u64 now_ns, u16 head, bool pending,
				    u32 irqs, u32 outstanding)
{
	return (struct nvme_cq_sample) {
		.now_ns = now_ns, .head = head, .pending = pending,
		.irqs = irqs, .outstanding = outstanding,
	};
}

static enum nvme_cq_verdict check(struct nvme_cq_watch *w, u64 now_ns, u16 head,
				  bool pending, u32 irqs, u32 outstanding, u64 hold)
{
	struct nvme_cq_sample s = sample(now_ns, head, pending, irqs, outstanding);

	return nvme_cq_check(w, &s, hold);
}

static void idle_queue_stops_checking(struct kunit *test)
{
	struct nvme_cq_watch w = { .last_ns = MS(1) };

	KUNIT_EXPECT_EQ(test, check(&w, MS(5), 0, false, 0, 0, 0), NVME_CQ_IDLE);
	/* the timer stops: the check that starts it again is not late */
	KUNIT_EXPECT_EQ(test, w.last_ns, 0);
}

static void outstanding_commands_keep_checking(struct kunit *test)
{
	struct nvme_cq_watch w = { };
	int i;

	for (i = 1; i <= 10; i++)
		KUNIT_EXPECT_EQ(test, check(&w, MS(5 * i), 7, false, 3, 4, 0),
				NVME_CQ_BUSY);
}

static void serviced_completions_never_stuck(struct kunit *test)
{
	struct nvme_cq_watch w = { };
	u16 head = 12;
	u32 irqs = 0;
	int i;

	/*
	 * a completion posted at the same head at every check, but an
	 * interrupt serviced in between each time: only the count decides
	 */
	for (i = 1; i <= 100; i++) {
		irqs++;
		KUNIT_EXPECT_NE(test, check(&w, MS(5 * i), head, true, irqs, 8, 0),
				NVME_CQ_STUCK);
	}
}

static void lost_interrupt_is_stuck_at_second_check(struct kunit *test)
{
	struct nvme_cq_watch w = { };

	KUNIT_EXPECT_EQ(test, check(&w, MS(5), 12, true, 40, 1, 0), NVME_CQ_BUSY);
	KUNIT_EXPECT_EQ(test, check(&w, MS(10), 12, true, 40, 1, 0), NVME_CQ_STUCK);
	KUNIT_EXPECT_EQ(test, w.since_ns, MS(5));
}

static void interrupt_in_between_is_not_stuck(struct kunit *test)
{
	struct nvme_cq_watch w = { };

	/* an interrupt came (a threaded handler not run yet): wait one more */
	KUNIT_EXPECT_EQ(test, check(&w, MS(5), 12, true, 40, 1, 0), NVME_CQ_BUSY);
	KUNIT_EXPECT_EQ(test, check(&w, MS(10), 12, true, 41, 1, 0), NVME_CQ_BUSY);
	KUNIT_EXPECT_EQ(test, check(&w, MS(15), 12, true, 41, 1, 0), NVME_CQ_STUCK);
}

static void recovery_resets_the_watch(struct kunit *test)
{
	struct nvme_cq_watch w = { };

	check(&w, MS(5), 12, true, 40, 1, 0);
	KUNIT_EXPECT_EQ(test, check(&w, MS(10), 12, true, 40, 1, 0), NVME_CQ_STUCK);
	/* reaped: nothing posted now */
	KUNIT_EXPECT_EQ(test, check(&w, MS(15), 13, false, 40, 0, 0), NVME_CQ_IDLE);
	KUNIT_EXPECT_EQ(test, w.since_ns, 0ULL);
	/* the next completion at the new head is judged afresh */
	KUNIT_EXPECT_EQ(test, check(&w, MS(20), 13, true, 40, 1, 0), NVME_CQ_BUSY);
	KUNIT_EXPECT_EQ(test, check(&w, MS(25), 13, true, 40, 1, 0), NVME_CQ_STUCK);
}

static void head_moved_is_not_stuck(struct kunit *test)
{
	struct nvme_cq_watch w = { };

	/* reaped by someone else (nvme_timeout, a poll) between the checks */
	check(&w, MS(5), 12, true, 40, 2, 0);
	KUNIT_EXPECT_EQ(test, check(&w, MS(10), 13, true, 40, 1, 0), NVME_CQ_BUSY);
}

static void moderation_hold_is_allowed(struct kunit *test)
{
	struct nvme_cq_watch w = { };
	u64 hold = MS(12);

	/* a completion held back on purpose for 12 ms is not lost */
	KUNIT_EXPECT_EQ(test, check(&w, MS(5), 3, true, 9, 1, hold), NVME_CQ_BUSY);
	KUNIT_EXPECT_EQ(test, check(&w, MS(10), 3, true, 9, 1, hold), NVME_CQ_BUSY);
	KUNIT_EXPECT_EQ(test, check(&w, MS(15), 3, true, 9, 1, hold), NVME_CQ_BUSY);
	KUNIT_EXPECT_EQ(test, check(&w, MS(20), 3, true, 9, 1, hold), NVME_CQ_STUCK);
}

static void counter_wrap_counts_as_interrupt(struct kunit *test)
{
	struct nvme_cq_watch w = { };

	check(&w, MS(5), 1, true, U32_MAX, 1, 0);
	KUNIT_EXPECT_EQ(test, check(&w, MS(10), 1, true, 0, 1, 0), NVME_CQ_BUSY);
	KUNIT_EXPECT_EQ(test, check(&w, MS(15), 1, true, 0, 1, 0), NVME_CQ_STUCK);
}

static void clock_not_advancing_is_not_stuck(struct kunit *test)
{
	struct nvme_cq_watch w = { };

	/* absurd samples: time zero, then time standing still or going back */
	KUNIT_EXPECT_EQ(test, check(&w, 0, 4, true, 2, 1, 0), NVME_CQ_BUSY);
	KUNIT_EXPECT_EQ(test, check(&w, 0, 4, true, 2, 1, 0), NVME_CQ_BUSY);
	w = (struct nvme_cq_watch) { };
	check(&w, MS(10), 4, true, 2, 1, 0);
	KUNIT_EXPECT_EQ(test, check(&w, MS(10), 4, true, 2, 1, 0), NVME_CQ_BUSY);
	KUNIT_EXPECT_EQ(test, check(&w, MS(3), 4, true, 2, 1, 0), NVME_CQ_BUSY);
}

/*
 * The host stalled the CPU between two checks: a completion that waited
 * across the stall is not judged lost (its interrupt may be late as
 * well); the next check, on time, judges it.
 */
static void late_check_does_not_judge(struct kunit *test)
{
	struct nvme_cq_watch w = { };
	struct nvme_cq_sample s = sample(MS(5), 6, true, 3, 1);

	s.period_ns = MS(5);
	KUNIT_EXPECT_EQ(test, nvme_cq_check(&w, &s, 0), NVME_CQ_BUSY);
	s.now_ns = MS(36);		/* 31 ms later: six periods */
	KUNIT_EXPECT_EQ(test, nvme_cq_check(&w, &s, 0), NVME_CQ_LATE);
	KUNIT_EXPECT_EQ(test, w.since_ns, MS(36));
	s.now_ns = MS(41);		/* on time, still no interrupt */
	KUNIT_EXPECT_EQ(test, nvme_cq_check(&w, &s, 0), NVME_CQ_STUCK);
	/*
	 * Up to two and a half periods between checks is on time: a period
	 * and its slack, and one more.
	 */
	w = (struct nvme_cq_watch) { };
	s.now_ns = MS(100);
	nvme_cq_check(&w, &s, 0);
	s.now_ns = MS(100) + MS(25) / 2;
	KUNIT_EXPECT_EQ(test, nvme_cq_check(&w, &s, 0), NVME_CQ_STUCK);
	w = (struct nvme_cq_watch) { };
	s.now_ns = MS(100);
	nvme_cq_check(&w, &s, 0);
	s.now_ns = MS(100) + MS(25) / 2 + 1;
	KUNIT_EXPECT_EQ(test, nvme_cq_check(&w, &s, 0), NVME_CQ_LATE);
}

static struct kunit_case nvme_lost_irq_cases[] = {
	KUNIT_CASE(idle_queue_stops_checking),
	KUNIT_CASE(outstanding_commands_keep_checking),
	KUNIT_CASE(serviced_completions_never_stuck),
	KUNIT_CASE(lost_interrupt_is_stuck_at_second_check),
	KUNIT_CASE(interrupt_in_between_is_not_stuck),
	KUNIT_CASE(recovery_resets_the_watch),
	KUNIT_CASE(head_moved_is_not_stuck),
	KUNIT_CASE(moderation_hold_is_allowed),
	KUNIT_CASE(counter_wrap_counts_as_interrupt),
	KUNIT_CASE(clock_not_advancing_is_not_stuck),
	KUNIT_CASE(late_check_does_not_judge),
	{}
};

static struct kunit_suite nvme_lost_irq_suite = {
	.name = "nvme_lost_irq",
	.test_cases = nvme_lost_irq_cases,
};

kunit_test_suite(nvme_lost_irq_suite);

MODULE_DESCRIPTION("KUnit tests for the nvme-pci lost interrupt poller");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

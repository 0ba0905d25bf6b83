// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the decision of the nvme-pci lost interrupt poller: given
 * successive samples of a completion queue, when is a completion stuck?
 * And of the probe that tells a CPU with interrupts off from a lost one,
 * and of the early deadline an I/O command starts with.
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/string.h>
#include <linux/time64.h>

#include "pci_lost_irq.h"

#define MS(x)	((u64)(x) * NSEC_PER_MSEC)

/* the verdicts, short enough for a table row */
#define V_IDLE	NVME_LOST_IRQ_IDLE
#define V_BUSY	NVME_LOST_IRQ_BUSY
#define V_STUCK	NVME_LOST_IRQ_STUCK
#define V_LATE	NVME_LOST_IRQ_LATE

static struct nvme_lost_irq_sample sample(u64 now_ns, u16 head, bool pending,
					  u32 irqs, u32 outstanding)
{
	return (struct nvme_lost_irq_sample) {
		.now_ns = now_ns, .at = { .irqs = irqs, .head = head },
		.pending = pending, .outstanding = outstanding,
	};
}

static enum nvme_lost_irq_verdict check(struct nvme_lost_irq_watch *w,
					u64 now_ns, u16 head, bool pending,
					u32 irqs, u32 outstanding, u64 hold)
{
	struct nvme_lost_irq_sample s = sample(now_ns, head, pending, irqs,
					       outstanding);

	return nvme_lost_irq_check(w, &s, hold);
}

static void idle_queue_stops_checking(struct kunit *test)
{
	struct nvme_lost_irq_watch w = { .last_ns = MS(1) };

	KUNIT_EXPECT_EQ(test, check(&w, MS(5), 0, false, 0, 0, 0), V_IDLE);
	/* the timer stops: the check that starts it again is not late */
	KUNIT_EXPECT_EQ(test, w.last_ns, 0);
}

/* One check of a sequence: the sample, and the verdict it must get. */
struct cq_step {
	u32 ms;
	u16 head;
	bool pending;
	u32 irqs;
	u32 outstanding;
	int verdict;		/* enum nvme_lost_irq_verdict, or ANY_VERDICT */
};

#define ANY_VERDICT	-1

/* Checks of one queue, each a row: time, CQ state, expected verdict. */
struct cq_sequence {
	const char *name;
	u64 hold_ns;
	int n;
	struct cq_step steps[10];
};

static const struct cq_sequence cq_sequences[] = {
	{ "outstanding commands keep checking", 0, 10, {
		{ 5, 7, false, 3, 4, V_BUSY },
		{ 10, 7, false, 3, 4, V_BUSY },
		{ 15, 7, false, 3, 4, V_BUSY },
		{ 20, 7, false, 3, 4, V_BUSY },
		{ 25, 7, false, 3, 4, V_BUSY },
		{ 30, 7, false, 3, 4, V_BUSY },
		{ 35, 7, false, 3, 4, V_BUSY },
		{ 40, 7, false, 3, 4, V_BUSY },
		{ 45, 7, false, 3, 4, V_BUSY },
		{ 50, 7, false, 3, 4, V_BUSY } } },
	/* an interrupt came (a threaded handler not run yet): wait one more */
	{ "interrupt in between is not stuck", 0, 3, {
		{ 5, 12, true, 40, 1, V_BUSY },
		{ 10, 12, true, 41, 1, V_BUSY },
		{ 15, 12, true, 41, 1, V_STUCK } } },
	/* reaped by someone else (nvme_timeout, a poll) between the checks */
	{ "head moved is not stuck", 0, 2, {
		{ 5, 12, true, 40, 2, ANY_VERDICT },
		{ 10, 13, true, 40, 1, V_BUSY } } },
	/* a completion held back on purpose for 12 ms is not lost */
	{ "moderation hold is allowed", MS(12), 4, {
		{ 5, 3, true, 9, 1, V_BUSY },
		{ 10, 3, true, 9, 1, V_BUSY },
		{ 15, 3, true, 9, 1, V_BUSY },
		{ 20, 3, true, 9, 1, V_STUCK } } },
	{ "counter wrap counts as interrupt", 0, 3, {
		{ 5, 1, true, U32_MAX, 1, ANY_VERDICT },
		{ 10, 1, true, 0, 1, V_BUSY },
		{ 15, 1, true, 0, 1, V_STUCK } } },
};

static void cq_sequence_desc(const struct cq_sequence *seq, char *desc)
{
	strscpy(desc, seq->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(cq_sequence, cq_sequences, cq_sequence_desc);

static void sequence_verdicts(struct kunit *test)
{
	const struct cq_sequence *seq = test->param_value;
	struct nvme_lost_irq_watch w = { };
	int i, v;

	for (i = 0; i < seq->n; i++) {
		const struct cq_step *st = &seq->steps[i];

		v = check(&w, MS(st->ms), st->head, st->pending, st->irqs,
			  st->outstanding, seq->hold_ns);
		if (st->verdict != ANY_VERDICT)
			KUNIT_EXPECT_EQ_MSG(test, v, st->verdict, "check %d", i);
	}
}

static void serviced_completions_never_stuck(struct kunit *test)
{
	struct nvme_lost_irq_watch w = { };
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
				V_STUCK);
	}
}

static void lost_interrupt_is_stuck_at_second_check(struct kunit *test)
{
	struct nvme_lost_irq_watch w = { };

	KUNIT_EXPECT_EQ(test, check(&w, MS(5), 12, true, 40, 1, 0), V_BUSY);
	KUNIT_EXPECT_EQ(test, check(&w, MS(10), 12, true, 40, 1, 0), V_STUCK);
	KUNIT_EXPECT_EQ(test, w.since_ns, MS(5));
}

/*
 * Polls that reaped the whole queue between two checks, with no interrupt
 * serviced, leave the head where it was: the phase tells.
 */
static void queue_once_round_is_not_stuck(struct kunit *test)
{
	struct nvme_lost_irq_watch w = { };
	struct nvme_lost_irq_sample s = sample(MS(5), 12, true, 40, 1);

	KUNIT_EXPECT_EQ(test, nvme_lost_irq_check(&w, &s, 0), V_BUSY);
	s.now_ns = MS(10);
	s.at.phase ^= 1;
	KUNIT_EXPECT_EQ(test, nvme_lost_irq_check(&w, &s, 0), V_BUSY);
	KUNIT_EXPECT_EQ(test, w.since_ns, MS(10));
	s.now_ns = MS(15);
	KUNIT_EXPECT_EQ(test, nvme_lost_irq_check(&w, &s, 0), V_STUCK);
}

static void recovery_resets_the_watch(struct kunit *test)
{
	struct nvme_lost_irq_watch w = { };

	check(&w, MS(5), 12, true, 40, 1, 0);
	KUNIT_EXPECT_EQ(test, check(&w, MS(10), 12, true, 40, 1, 0), V_STUCK);
	/* reaped: nothing posted now */
	KUNIT_EXPECT_EQ(test, check(&w, MS(15), 13, false, 40, 0, 0), V_IDLE);
	KUNIT_EXPECT_EQ(test, w.since_ns, 0ULL);
	/* the next completion at the new head is judged afresh */
	KUNIT_EXPECT_EQ(test, check(&w, MS(20), 13, true, 40, 1, 0), V_BUSY);
	KUNIT_EXPECT_EQ(test, check(&w, MS(25), 13, true, 40, 1, 0), V_STUCK);
}

static void clock_not_advancing_is_not_stuck(struct kunit *test)
{
	struct nvme_lost_irq_watch w = { };

	/* absurd samples: time zero, then time standing still or going back */
	KUNIT_EXPECT_EQ(test, check(&w, 0, 4, true, 2, 1, 0), V_BUSY);
	KUNIT_EXPECT_EQ(test, check(&w, 0, 4, true, 2, 1, 0), V_BUSY);
	w = (struct nvme_lost_irq_watch) { };
	check(&w, MS(10), 4, true, 2, 1, 0);
	KUNIT_EXPECT_EQ(test, check(&w, MS(10), 4, true, 2, 1, 0), V_BUSY);
	KUNIT_EXPECT_EQ(test, check(&w, MS(3), 4, true, 2, 1, 0), V_BUSY);
}

/*
 * The host stalled the CPU between two checks: a completion that waited
 * across the stall is not judged lost (its interrupt may be late as
 * well); the next check, on time, judges it.
 */
static void late_check_does_not_judge(struct kunit *test)
{
	struct nvme_lost_irq_watch w = { };
	struct nvme_lost_irq_sample s = sample(MS(5), 6, true, 3, 1);

	s.period_ns = MS(5);
	KUNIT_EXPECT_EQ(test, nvme_lost_irq_check(&w, &s, 0), V_BUSY);
	s.now_ns = MS(36);		/* 31 ms later: six periods */
	KUNIT_EXPECT_EQ(test, nvme_lost_irq_check(&w, &s, 0), V_LATE);
	KUNIT_EXPECT_EQ(test, w.since_ns, MS(36));
	s.now_ns = MS(41);		/* on time, still no interrupt */
	KUNIT_EXPECT_EQ(test, nvme_lost_irq_check(&w, &s, 0), V_STUCK);
	/*
	 * Up to two and a half periods between checks is on time: a period
	 * and its slack, and one more.
	 */
	w = (struct nvme_lost_irq_watch) { };
	s.now_ns = MS(100);
	nvme_lost_irq_check(&w, &s, 0);
	s.now_ns = MS(100) + MS(25) / 2;
	KUNIT_EXPECT_EQ(test, nvme_lost_irq_check(&w, &s, 0), V_STUCK);
	w = (struct nvme_lost_irq_watch) { };
	s.now_ns = MS(100);
	nvme_lost_irq_check(&w, &s, 0);
	s.now_ns = MS(100) + MS(25) / 2 + 1;
	KUNIT_EXPECT_EQ(test, nvme_lost_irq_check(&w, &s, 0), V_LATE);
}

struct irqs_off {
	struct completion off;
	unsigned int ms;
};

/* Keep a CPU from taking interrupts for a while, as a long critical section. */
static int irqs_off_fn(void *data)
{
	struct irqs_off *o = data;

	local_irq_disable();
	complete(&o->off);
	mdelay(o->ms);
	local_irq_enable();
	/* kthread_stop() waits for this, so the module outlives the thread */
	set_current_state(TASK_INTERRUPTIBLE);
	while (!kthread_should_stop()) {
		schedule();
		set_current_state(TASK_INTERRUPTIBLE);
	}
	__set_current_state(TASK_RUNNING);
	return 0;
}

/* a healthy CPU's answer: long enough for any host to run the vCPU */
#define ANSWERS	MS(2000)

/*
 * The recovery asks the vector's CPU before it blames the interrupt path: a
 * CPU with interrupts off does not answer in time, and is not asked again
 * before it answered; one that takes interrupts answers.
 */
static void probe_tells_a_cpu_with_interrupts_off(struct kunit *test)
{
	struct nvme_lost_irq_probe *p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);
	struct irqs_off o = { .ms = 40 };
	struct task_struct *t;
	int here, other;

	KUNIT_ASSERT_NOT_NULL(test, p);
	nvme_lost_irq_probe_init(p);
	/* the case's thread stays off the CPU it blocks */
	here = raw_smp_processor_id();
	KUNIT_ASSERT_EQ(test, set_cpus_allowed_ptr(current, cpumask_of(here)), 0);
	other = cpumask_any_but(cpu_online_mask, here);
	if (other >= nr_cpu_ids)
		kunit_skip(test, "needs two online CPUs");
	/*
	 * A CPU taking interrupts answers at once, but a vCPU the host does
	 * not run for a while does not: no deadline here for the answer.
	 */
	KUNIT_EXPECT_TRUE(test, nvme_lost_irq_probe_cpu_responds(p, other, ANSWERS));

	init_completion(&o.off);
	t = kthread_create(irqs_off_fn, &o, "nvme-probe-test");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	get_task_struct(t);
	kthread_bind(t, other);
	wake_up_process(t);
	wait_for_completion(&o.off);
	KUNIT_EXPECT_FALSE(test, nvme_lost_irq_probe_cpu_responds(p, other, MS(5)));
	/* still unanswered: not sent again, still blocked */
	KUNIT_EXPECT_FALSE(test, nvme_lost_irq_probe_cpu_responds(p, other, MS(5)));
	nvme_lost_irq_probe_sync(p);
	KUNIT_EXPECT_GE(test, p->answered_ns - p->sent_ns, MS(5));
	KUNIT_EXPECT_TRUE(test, nvme_lost_irq_probe_cpu_responds(p, other, ANSWERS));
	nvme_lost_irq_probe_sync(p);
	kthread_stop(t);
	put_task_struct(t);
}

/*
 * An I/O command starts with the early deadline only where it comes before
 * io_timeout, on a queue the driver watches, with the deadline on.
 */
static void deadline_comes_first_or_not_at_all(struct kunit *test)
{
	unsigned long io_timeout = 30 * HZ;

	KUNIT_EXPECT_EQ(test, nvme_lost_irq_deadline(500, io_timeout, true),
			msecs_to_jiffies(500));
	KUNIT_EXPECT_EQ(test, nvme_lost_irq_deadline(0, io_timeout, true), 0UL);
	KUNIT_EXPECT_EQ(test, nvme_lost_irq_deadline(500, io_timeout, false), 0UL);
	KUNIT_EXPECT_EQ(test, nvme_lost_irq_deadline(30000, io_timeout, true), 0UL);
	KUNIT_EXPECT_EQ(test, nvme_lost_irq_deadline(60000, io_timeout, true), 0UL);
}

/*
 * The deadline passes once: the command then has blk-mq's io_timeout, and
 * its next timeout is a real one; so is one whose io_timeout was lowered
 * below the deadline since it started.
 */
static void deadline_passes_once(struct kunit *test)
{
	unsigned long io_timeout = 30 * HZ;
	unsigned long t = nvme_lost_irq_deadline(500, io_timeout, true);

	KUNIT_EXPECT_TRUE(test, nvme_lost_irq_in_deadline(t, io_timeout));
	KUNIT_EXPECT_FALSE(test, nvme_lost_irq_in_deadline(io_timeout, io_timeout));
	KUNIT_EXPECT_FALSE(test, nvme_lost_irq_in_deadline(0, io_timeout));
	KUNIT_EXPECT_FALSE(test, nvme_lost_irq_in_deadline(t, t));
	KUNIT_EXPECT_FALSE(test, nvme_lost_irq_in_deadline(t, t / 2));
}

/*
 * An empty run arms a re-check with a command outstanding, but not after a
 * run that reaped several while another command is outstanding: its
 * message reaps what this run missed.
 */
static void empty_run_suspected(struct kunit *test)
{
	KUNIT_EXPECT_FALSE(test, nvme_early_irq_suspect(false, 0));
	KUNIT_EXPECT_FALSE(test, nvme_early_irq_suspect(true, 0));
	KUNIT_EXPECT_TRUE(test, nvme_early_irq_suspect(false, 1));
	KUNIT_EXPECT_TRUE(test, nvme_early_irq_suspect(false, 32));
	KUNIT_EXPECT_TRUE(test, nvme_early_irq_suspect(true, 1));
	KUNIT_EXPECT_FALSE(test, nvme_early_irq_suspect(true, 2));
	KUNIT_EXPECT_FALSE(test, nvme_early_irq_suspect(true, 1023));
}

/* A chain from @armed to @end ms: the hold-off it leaves, in ms. */
static void chain(struct kunit *test, struct nvme_early_irq_quiet *q,
		  u64 armed, u64 end, u64 until, u64 next)
{
	nvme_early_irq_back_off(q, MS(armed), MS(end));
	KUNIT_EXPECT_EQ(test, q->until_ns, MS(until));
	KUNIT_EXPECT_EQ(test, q->next_ns, MS(next));
}

/*
 * Chains of re-checks that recover nothing, in a row, hold the queue off
 * for 1, 2, 4, 8 then 16 ms and no longer; one that begins more than 16 ms
 * after the last hold-off ended starts again at 1 ms, and so does the
 * first after a recovery, which lifts the hold-off (0).
 */
static void fruitless_rechecks_back_off(struct kunit *test)
{
	struct nvme_early_irq_quiet q = { .next_ns = NVME_EARLY_IRQ_QUIET_NS };

	KUNIT_ASSERT_EQ(test, (u64)NVME_EARLY_IRQ_QUIET_NS, MS(1));
	KUNIT_ASSERT_EQ(test, (u64)NVME_EARLY_IRQ_QUIET_MAX_NS, MS(16));
	chain(test, &q, 100, 101, 102, 2);
	chain(test, &q, 102, 103, 105, 4);
	chain(test, &q, 105, 106, 110, 8);
	chain(test, &q, 110, 111, 119, 16);
	chain(test, &q, 119, 120, 136, 16);
	/* 16 ms after the hold-off ended is still in a row */
	chain(test, &q, 152, 153, 169, 16);
	/* later than that: start again */
	chain(test, &q, 186, 187, 188, 2);
	chain(test, &q, 500, 501, 502, 2);
	/* a recovery after a chain of 16 ms */
	chain(test, &q, 502, 503, 505, 4);
	chain(test, &q, 505, 506, 510, 8);
	chain(test, &q, 510, 511, 519, 16);
	q.until_ns = 0;
	chain(test, &q, 600, 601, 602, 2);
}

static enum nvme_early_irq_verdict judge_at(u32 irqs, u16 head, u8 phase,
					    bool pending, u32 outstanding)
{
	/* the empty run left head 7, phase 1, with 40 interrupts serviced */
	struct nvme_cq_mark mark = { .irqs = 40, .head = 7, .phase = 1 };
	struct nvme_lost_irq_sample s = sample(0, head, pending, irqs,
					       outstanding);

	s.at.phase = phase;
	return nvme_early_irq_judge(&mark, &s);
}

static enum nvme_early_irq_verdict judge(u32 irqs, u16 head, bool pending,
					 u32 outstanding)
{
	return judge_at(irqs, head, 1, pending, outstanding);
}

/*
 * A completion that appears at the head an empty handler run left, with no
 * interrupt since, came after its interrupt: reap it.  Anything else is
 * not this failure: an interrupt came (its handler saw the queue), the
 * queue moved, or nothing is outstanding any more.
 */
static void early_interrupt_is_found(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, judge(40, 7, true, 1), NVME_EARLY_IRQ_FOUND);
	/* visible with nothing counted outstanding (a racy count): still */
	KUNIT_EXPECT_EQ(test, judge(40, 7, true, 0), NVME_EARLY_IRQ_FOUND);
	KUNIT_EXPECT_EQ(test, judge(40, 7, false, 1), NVME_EARLY_IRQ_WAIT);
	KUNIT_EXPECT_EQ(test, judge(40, 7, false, 0), NVME_EARLY_IRQ_NONE);
	KUNIT_EXPECT_EQ(test, judge(41, 7, true, 1), NVME_EARLY_IRQ_NONE);
	KUNIT_EXPECT_EQ(test, judge(41, 7, false, 1), NVME_EARLY_IRQ_NONE);
	KUNIT_EXPECT_EQ(test, judge(40, 8, true, 1), NVME_EARLY_IRQ_NONE);
	KUNIT_EXPECT_EQ(test, judge(39, 7, true, 1), NVME_EARLY_IRQ_NONE);
	/* polls reaped the whole queue meanwhile: the head is back, not still */
	KUNIT_EXPECT_EQ(test, judge_at(40, 7, 0, true, 1), NVME_EARLY_IRQ_NONE);
}

static struct kunit_case nvme_lost_irq_cases[] = {
	KUNIT_CASE(idle_queue_stops_checking),
	KUNIT_CASE_PARAM(sequence_verdicts, cq_sequence_gen_params),
	KUNIT_CASE(serviced_completions_never_stuck),
	KUNIT_CASE(lost_interrupt_is_stuck_at_second_check),
	KUNIT_CASE(queue_once_round_is_not_stuck),
	KUNIT_CASE(recovery_resets_the_watch),
	KUNIT_CASE(clock_not_advancing_is_not_stuck),
	KUNIT_CASE(late_check_does_not_judge),
	KUNIT_CASE(probe_tells_a_cpu_with_interrupts_off),
	KUNIT_CASE(deadline_comes_first_or_not_at_all),
	KUNIT_CASE(deadline_passes_once),
	KUNIT_CASE(early_interrupt_is_found),
	KUNIT_CASE(empty_run_suspected),
	KUNIT_CASE(fruitless_rechecks_back_off),
	{}
};

static struct kunit_suite nvme_lost_irq_suite = {
	.name = "nvme_lost_irq",
	.test_cases = nvme_lost_irq_cases,
};

kunit_test_suite(nvme_lost_irq_suite);

MODULE_DESCRIPTION("KUnit tests for the nvme-pci lost interrupt poller");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS("EXPORTED_FOR_KUNIT_TESTING");

// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the actuator side of nvme-pci adaptive interrupt
 * coalescing: what Set Features 08h/09h commands one period sends to a
 * fake controller that accepts, refuses or does not answer them.  QEMU
 * refuses Feature 08h, so this is where the device path runs.
 *
 * The periods are driven by hand with synthetic counters and a synthetic
 * clock; the thresholds are the ones the kernel runs with, so the load is
 * derived from them.  The fake vectors do not exist: genirq refuses them,
 * which leaves the device as the only actuator, except for the case that
 * gives queue 1 a vector of a fake chip.  Adaptive coalescing is
 * switched on for each case and back as it was after it.
 *
 * The fake stands in for pci.c through KUnit static stubs: what the work
 * item asks about the queues and the commands it sends come here, for the
 * test's own thread only.
 */
#include <kunit/device.h>
#include <kunit/static_stub.h>
#include <kunit/test.h>
#include <linux/interrupt.h>
#include <linux/irq.h>
#include <linux/irq_moderation.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/time64.h>
#include <trace/events/kmem.h>

#include "nvme.h"
#include "pci_coalesce.h"

#define NR_QUEUES	8
#define MAX_SENT	64
#define NO_IRQ		INT_MAX		/* genirq has no such vector */
#define STATUS_NOT_CHANGEABLE	0x410e
#define STATUS_INVALID_FIELD	0x4002

struct fake_cmd {
	unsigned int fid;
	u32 dw11;
};

struct fake_ctrl {
	struct nvme_ctrl ctrl;
	struct nvme_coal_ctrl cc;
	struct nvme_coal_queue admin;	/* never started, as the admin queue */
	struct nvme_coal_queue q[NR_QUEUES];	/* qid i + 1 */
	u16 vector[NR_QUEUES];
	struct nvme_coal_sample s[NR_QUEUES];
	struct nvme_coal_params p;
	struct fake_cmd sent[MAX_SENT];
	int nsent;
	unsigned long warned;	/* the controller's warn-once bitmap */
	int status[2];		/* answer to 08h, 09h */
	u16 refuse_vector;	/* 09h for this vector only is refused */
	u64 hold_ns_at_send;	/* what the poller was told as 08h went out */
	bool reset_in_send;	/* the controller is reset under the next command */
	bool stop_in_send;	/* ... only disabled: its queues start later */
	/* a user 08h the controller answers under the policy's next 08h */
	const struct nvme_command *user_in_send;
	bool ignores_08h;	/* takes Feature 08h, applies none of it */
	int misleads;		/* ... but its runs fall in this many periods */
	unsigned int adaptive;
	int irq0;		/* a vector genirq moderates, for queue 1 */
	int uncovered;		/* non-zero 08h sent with a vector not exempt */
	int kicks;		/* handler runs that queued the work */
	u64 now;
};

static void fake_reset(struct fake_ctrl *f);

/* The fake of the case running: the stubs are called in its thread. */
static struct fake_ctrl *fake(void)
{
	return kunit_get_current_test()->priv;
}

static struct nvme_coal_queue *fake_next_queue(struct nvme_coal_ctrl *cc,
					       unsigned int *qid)
{
	struct fake_ctrl *f = fake();
	unsigned int i = (*qid)++;

	if (!i)
		return &f->admin;
	return i <= NR_QUEUES ? &f->q[i - 1] : NULL;
}

static u16 fake_qid(const struct nvme_coal_queue *q)
{
	return q - fake()->q + 1;
}

static int fake_irq(const struct nvme_coal_queue *q)
{
	struct fake_ctrl *f = fake();

	return q == &f->q[0] && f->irq0 ? f->irq0 : NO_IRQ;
}

static u16 fake_vector(const struct nvme_coal_queue *q)
{
	struct fake_ctrl *f = fake();

	return f->vector[q - f->q];
}

static void fake_sample(struct nvme_coal_queue *q, struct nvme_coal_sample *s)
{
	struct fake_ctrl *f = fake();
	const struct nvme_coal_sample *raw = &f->s[q - f->q];

	s->completions = raw->completions;
	s->qd_sum = raw->qd_sum;
	s->qd_runs = raw->qd_runs;
	s->inflight = raw->inflight;
}

/*
 * A real controller's interrupt on the test's CPU is redirected here too:
 * only the fake's kicks count (the real one samples at its next run).
 */
static void fake_kick(struct nvme_coal_ctrl *cc)
{
	struct fake_ctrl *f = fake();

	if (cc == &f->cc)
		f->kicks++;
}

static int fake_set_feature(struct nvme_coal_ctrl *cc, unsigned int fid,
			    u32 dw11)
{
	struct fake_ctrl *f = fake();
	int status = f->status[fid == NVME_FEAT_IRQ_CONFIG];

	if (f->nsent < MAX_SENT)
		f->sent[f->nsent++] = (struct fake_cmd){ .fid = fid, .dw11 = dw11 };
	/* 08h coalesces every vector not exempted: none may be unmoderated */
	if (fid == NVME_FEAT_IRQ_COALESCE && dw11) {
		int i;

		for (i = 0; i < NR_QUEUES; i++)
			f->uncovered += f->q[i].active && f->vector[i] &&
					!nvme_coal_engaged(&f->q[i].pol) &&
					!f->q[i].exempt;
	}
	if (fid == NVME_FEAT_IRQ_COALESCE)
		f->hold_ns_at_send = nvme_coal_hold_ns(&f->q[0]);
	if (fid == NVME_FEAT_IRQ_COALESCE && f->user_in_send) {
		nvme_coal_user_done(cc, f->user_in_send, 0);
		f->user_in_send = NULL;
	}
	if (fid == NVME_FEAT_IRQ_CONFIG && f->refuse_vector &&
	    (dw11 & 0xffff) == f->refuse_vector)
		return STATUS_INVALID_FIELD;
	if (f->reset_in_send) {
		f->reset_in_send = false;
		fake_reset(f);
	}
	if (f->stop_in_send) {
		int i;

		f->stop_in_send = false;
		for (i = 0; i < NR_QUEUES; i++)
			if (f->q[i].active)
				nvme_coal_stop(&f->q[i]);
	}
	/* a negative answer stands for "no answer": asked again later */
	if (status < 0)
		f->status[fid == NVME_FEAT_IRQ_CONFIG] = 0;
	return status;
}

static void fake_exit(void *data)
{
	struct fake_ctrl *f = data;
	int i;

	KUNIT_EXPECT_EQ(kunit_get_current_test(), f->uncovered, 0);

	for (i = 0; i < NR_QUEUES; i++)
		nvme_coal_stop(&f->q[i]);
	nvme_coal_ctrl_stop(&f->cc);
}

/* Put back what fake_ctrl() switched, whatever fails after it. */
static void fake_restore_knobs(void *data)
{
	struct fake_ctrl *f = data;

	WRITE_ONCE(nvme_coal_adaptive, f->adaptive);
}

static struct fake_ctrl *fake_ctrl(struct kunit *test, int queues)
{
	struct fake_ctrl *f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);
	int i;

	KUNIT_ASSERT_NOT_NULL(test, f);
	/* the actuator is tested whatever the boot chose */
	f->adaptive = READ_ONCE(nvme_coal_adaptive);
	WRITE_ONCE(nvme_coal_adaptive, 1);
	KUNIT_ASSERT_EQ(test,
			kunit_add_action_or_reset(test, fake_restore_knobs, f), 0);
	nvme_coal_params(&f->p);
	f->ctrl.device = kunit_device_register(test, "nvme-coal-test");
	KUNIT_ASSERT_FALSE(test, IS_ERR(f->ctrl.device));
	f->ctrl.state = NVME_CTRL_LIVE;
	f->now = 1000 * NSEC_PER_SEC;
	for (i = 0; i < NR_QUEUES; i++)
		f->vector[i] = i + 1;
	test->priv = f;
	kunit_activate_static_stub(test, nvme_coal_next_queue, fake_next_queue);
	kunit_activate_static_stub(test, nvme_coal_qid, fake_qid);
	kunit_activate_static_stub(test, nvme_coal_irq, fake_irq);
	kunit_activate_static_stub(test, nvme_coal_vector, fake_vector);
	kunit_activate_static_stub(test, nvme_coal_sample_queue, fake_sample);
	kunit_activate_static_stub(test, nvme_coal_set_feature, fake_set_feature);
	nvme_coal_ctrl_init(&f->cc, &f->ctrl, NULL, &f->warned,
			    ERR_PTR(-ENODEV));
	for (i = 0; i < queues; i++)
		nvme_coal_start(&f->q[i], &f->cc, NULL);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, fake_exit, f), 0);
	return f;
}

/* A controller reset: every vector freed and requested again. */
static void fake_reset(struct fake_ctrl *f)
{
	int i;

	for (i = 0; i < NR_QUEUES; i++)
		if (f->q[i].active)
			nvme_coal_stop(&f->q[i]);
	for (i = 0; i < NR_QUEUES; i++)
		if (f->q[i].cc)
			nvme_coal_start(&f->q[i], &f->cc, NULL);
}

/* Does the controller hold back queue i's messages (08h on, not exempt)? */
static bool fake_coalesces(struct fake_ctrl *f, int i)
{
	u32 dw11 = f->cc.feat_dw11;

	return (!f->ignores_08h || f->misleads > 0) &&
	       dw11 && dw11 != NVME_COAL_DW11_UNKNOWN &&
	       !f->q[i].exempt;
}

/*
 * One period in which queue i saw depth[i] commands outstanding at each
 * handler run and completed rate[i] commands (10 per handler run, 40 while
 * the controller coalesces them).
 */
static bool run_period(struct fake_ctrl *f, const u32 *depth, const u32 *rate)
{
	int i;

	f->now += (u64)f->p.period_ms * NSEC_PER_MSEC;
	for (i = 0; i < NR_QUEUES; i++) {
		u32 runs = DIV_ROUND_UP(rate[i], fake_coalesces(f, i) ? 40 : 10);

		f->s[i].completions += rate[i];
		f->s[i].qd_runs += runs;
		f->s[i].inflight = depth[i];
		f->s[i].qd_sum += runs * depth[i];
	}
	if (f->misleads > 0)
		f->misleads--;
	return nvme_coal_period(&f->cc, f->now);
}

/*
 * n periods with every queue nearly idle, or, if @busy, queue 0 busy enough
 * for the thresholds the kernel runs with.
 */
static void load_periods(struct fake_ctrl *f, int n, bool busy)
{
	u32 depth[NR_QUEUES], rate[NR_QUEUES];
	int i;

	for (i = 0; i < NR_QUEUES; i++) {
		depth[i] = 1;
		rate[i] = 10;
	}
	if (busy) {
		depth[0] = f->p.avg_qd_threshold +
			   f->p.total_inflight_io_threshold + 1;
		rate[0] = 2 * f->p.high_io_delta;
	}
	while (n--)
		run_period(f, depth, rate);
}

static void busy_periods(struct fake_ctrl *f, int n)
{
	load_periods(f, n, true);
}

static void quiet_periods(struct fake_ctrl *f, int n)
{
	load_periods(f, n, false);
}

/* Baseline, then queue 0 high until it is moderated. */
static void engage_queue0(struct kunit *test, struct fake_ctrl *f)
{
	busy_periods(f, 1 + NVME_COAL_ENGAGE_PERIODS);
	KUNIT_ASSERT_TRUE(test, nvme_coal_engaged(&f->q[0].pol));
	KUNIT_ASSERT_NE(test, f->q[0].pol.delay_us, 0);
}

/* What the policy is to choose for a deep queue, computed here anew. */
static void expected_delay(struct fake_ctrl *f, u32 depth, u32 rate,
			   u32 *delay_us, u32 *batch)
{
	u32 period_us = f->p.period_ms * 1000;

	*delay_us = clamp_t(u64, (u64)depth * period_us / 2 / rate, 1,
			    f->p.max_delay_us);
	*batch = clamp_t(u64, (u64)rate * *delay_us / period_us, 1, 256);
}

static int count_fid(struct fake_ctrl *f, unsigned int fid)
{
	int i, n = 0;

	for (i = 0; i < f->nsent; i++)
		n += f->sent[i].fid == fid;
	return n;
}

static void expect_cmd(struct kunit *test, struct fake_ctrl *f, int i,
		       unsigned int fid, u32 dw11)
{
	KUNIT_ASSERT_LT(test, i, f->nsent);
	KUNIT_EXPECT_EQ(test, f->sent[i].fid, fid);
	KUNIT_EXPECT_EQ(test, f->sent[i].dw11, dw11);
}

/*
 * Feature 08h coalesces every vector that is not exempted: the queue that
 * is not moderated is exempted first (09h), and the probe (08h) goes out
 * only once that is confirmed, a period later.  A QD1 queue never waits
 * for the aggregation time.
 */
static void device_accepted_coalesces_and_exempts(struct kunit *test)
{
	struct fake_ctrl *f = fake_ctrl(test, 2);
	u32 dw11, delay, batch;

	busy_periods(f, NVME_COAL_ENGAGE_PERIODS);
	KUNIT_EXPECT_EQ(test, f->nsent, 0);	/* nothing while unmoderated */
	busy_periods(f, 1);
	KUNIT_ASSERT_TRUE(test, nvme_coal_engaged(&f->q[0].pol));

	/* first the queue that is not moderated is exempted, alone */
	KUNIT_EXPECT_EQ(test, f->nsent, 1);
	expect_cmd(test, f, 0, NVME_FEAT_IRQ_CONFIG, nvme_coal_feat_vector(2, true));
	KUNIT_EXPECT_TRUE(test, f->q[1].exempt);
	KUNIT_EXPECT_EQ(test, f->cc.feat, NVME_COAL_FEAT_UNTRIED);

	/* next period the probe: 08h with the moderated queue's delay and batch */
	busy_periods(f, 1);
	expected_delay(f, f->p.avg_qd_threshold + f->p.total_inflight_io_threshold + 1,
		       2 * f->p.high_io_delta, &delay, &batch);
	KUNIT_EXPECT_EQ(test, f->q[0].pol.delay_us, delay);
	dw11 = nvme_coal_feat_coalesce(delay, batch);
	KUNIT_EXPECT_NE(test, dw11, 0);
	KUNIT_EXPECT_EQ(test, f->nsent, 2);
	expect_cmd(test, f, 1, NVME_FEAT_IRQ_COALESCE, dw11);
	KUNIT_EXPECT_EQ(test, f->cc.feat, NVME_COAL_FEAT_ACCEPTED);
	KUNIT_EXPECT_EQ(test, f->cc.feat_dw11, dw11);
	KUNIT_EXPECT_FALSE(test, f->q[0].exempt);

	/* steady load: nothing more to say to the controller */
	busy_periods(f, 5);
	KUNIT_EXPECT_EQ(test, f->nsent, 2);

	/* load drops: 08h goes back to 0; queue 1 stays exempt */
	quiet_periods(f, 1);
	KUNIT_EXPECT_FALSE(test, nvme_coal_engaged(&f->q[0].pol));
	KUNIT_EXPECT_EQ(test, f->nsent, 3);
	expect_cmd(test, f, 2, NVME_FEAT_IRQ_COALESCE, 0);
	KUNIT_EXPECT_TRUE(test, f->q[1].exempt);
	KUNIT_EXPECT_EQ(test, f->cc.feat_dw11, 0);
	KUNIT_EXPECT_EQ(test, f->cc.feat, NVME_COAL_FEAT_ACCEPTED);

	/* engaged again: the exemption stands, 08h goes out at once */
	busy_periods(f, NVME_COAL_WINDOW_PERIODS + NVME_COAL_ENGAGE_PERIODS + 1);
	KUNIT_EXPECT_TRUE(test, nvme_coal_engaged(&f->q[0].pol));
	KUNIT_EXPECT_EQ(test, count_fid(f, NVME_FEAT_IRQ_CONFIG), 1);
	KUNIT_EXPECT_EQ(test, count_fid(f, NVME_FEAT_IRQ_COALESCE), 3);
}

static void device_refused_once_genirq_after(struct kunit *test)
{
	struct fake_ctrl *f = fake_ctrl(test, 2);

	f->status[0] = STATUS_NOT_CHANGEABLE;
	engage_queue0(test, f);
	busy_periods(f, 1);	/* queue 1 exempted, then the probe */
	KUNIT_EXPECT_EQ(test, f->nsent, 2);
	expect_cmd(test, f, 1, NVME_FEAT_IRQ_COALESCE,
		   nvme_coal_feat_coalesce(f->q[0].pol.delay_us,
					   f->q[0].pol.batch));
	KUNIT_EXPECT_EQ(test, f->cc.feat, NVME_COAL_FEAT_REFUSED);
	KUNIT_EXPECT_EQ(test, f->cc.feat_status, STATUS_NOT_CHANGEABLE);
	KUNIT_EXPECT_EQ(test, f->cc.feat_dw11, 0);

	/* remembered: no further 08h or 09h, whatever the load does */
	busy_periods(f, 5);
	quiet_periods(f, 1);
	KUNIT_EXPECT_FALSE(test, nvme_coal_engaged(&f->q[0].pol));
	busy_periods(f, NVME_COAL_WINDOW_PERIODS + 3);
	KUNIT_EXPECT_TRUE(test, nvme_coal_engaged(&f->q[0].pol));
	KUNIT_EXPECT_EQ(test, f->nsent, 2);
}

/* A 09h refusal before any 09h was taken: genirq, and no 08h ever. */
static void exemption_refused_first_genirq_after(struct kunit *test)
{
	struct fake_ctrl *f = fake_ctrl(test, 2);

	f->status[1] = STATUS_INVALID_FIELD;
	engage_queue0(test, f);
	busy_periods(f, 5);
	KUNIT_EXPECT_EQ(test, f->cc.feat, NVME_COAL_FEAT_REFUSED);
	KUNIT_EXPECT_EQ(test, count_fid(f, NVME_FEAT_IRQ_CONFIG), 1);
	KUNIT_EXPECT_EQ(test, count_fid(f, NVME_FEAT_IRQ_COALESCE), 0);
	KUNIT_EXPECT_NE(test, f->q[0].pol.delay_us, 0);
}

static void commands_wait_for_a_live_controller(struct kunit *test)
{
	struct fake_ctrl *f = fake_ctrl(test, 1);

	f->ctrl.state = NVME_CTRL_RESETTING;
	engage_queue0(test, f);
	busy_periods(f, 2);
	KUNIT_EXPECT_EQ(test, f->nsent, 0);
	KUNIT_EXPECT_EQ(test, f->cc.feat, NVME_COAL_FEAT_UNTRIED);

	f->ctrl.state = NVME_CTRL_LIVE;
	busy_periods(f, 1);
	KUNIT_EXPECT_EQ(test, f->nsent, 1);
	KUNIT_EXPECT_EQ(test, f->cc.feat, NVME_COAL_FEAT_ACCEPTED);
}

/*
 * Host-managed suspend keeps the controller live while nvme_suspend()
 * changes its power state: from nvme_coal_suspend() to nvme_coal_resume()
 * no interrupt starts the work and a period already running sends
 * nothing, whatever the load did; afterwards what the load wants goes out.
 */
static void suspend_sends_nothing_until_resume(struct kunit *test)
{
	struct fake_ctrl *f = fake_ctrl(test, 1);
	u32 dw11;

	engage_queue0(test, f);
	KUNIT_ASSERT_EQ(test, f->nsent, 1);
	dw11 = f->cc.feat_dw11;
	KUNIT_ASSERT_NE(test, dw11, 0);

	nvme_coal_suspend(&f->cc);
	nvme_coal_kick(&f->cc);
	/* true if the kick queued it; cancelled before it can run */
	KUNIT_EXPECT_FALSE(test, cancel_delayed_work_sync(&f->cc.work));
	/* the queues were drained for the power state change */
	quiet_periods(f, 2);
	KUNIT_EXPECT_FALSE(test, nvme_coal_engaged(&f->q[0].pol));
	KUNIT_EXPECT_EQ(test, f->nsent, 1);
	KUNIT_EXPECT_EQ(test, f->cc.feat_dw11, dw11);

	nvme_coal_resume(&f->cc);
	quiet_periods(f, 1);
	KUNIT_EXPECT_EQ(test, f->nsent, 2);
	expect_cmd(test, f, 1, NVME_FEAT_IRQ_COALESCE, 0);
	KUNIT_EXPECT_EQ(test, f->cc.feat_dw11, 0);
}

/*
 * A load the policy leaves alone is sampled from its own interrupts: its
 * period asks for no timer, and a handler run queues the work only once
 * the next sample is due and the work is not running.  A controller whose
 * queues all run at QD1 is watched: its next sample is due a second later,
 * unless a handler run finds more than one command outstanding.  A
 * moderated queue keeps the timer.
 */
static void unmoderated_load_needs_no_timer(struct kunit *test)
{
	struct fake_ctrl *f = fake_ctrl(test, 1);
	u32 depth[NR_QUEUES], rate[NR_QUEUES];
	int i;

	for (i = 0; i < NR_QUEUES; i++) {
		depth[i] = 1;
		rate[i] = 10;
	}
	kunit_activate_static_stub(test, nvme_coal_kick, fake_kick);
	quiet_periods(f, 1);
	/* a first sample only sets the baseline: not watched on it */
	KUNIT_EXPECT_FALSE(test, test_bit(NVME_COAL_WATCH, &f->cc.flags));
	quiet_periods(f, 1);
	KUNIT_EXPECT_FALSE(test, run_period(f, depth, rate));
	KUNIT_EXPECT_TRUE(test, test_bit(NVME_COAL_WATCH, &f->cc.flags));

	clear_bit(NVME_COAL_RUNNING, &f->cc.flags);
	f->cc.due = get_jiffies_64() + HZ;
	nvme_coal_wake(&f->q[0], 1);
	KUNIT_EXPECT_EQ(test, f->kicks, 0);
	nvme_coal_wake(&f->q[0], 2);
	KUNIT_EXPECT_EQ(test, f->kicks, 1);
	clear_bit(NVME_COAL_WATCH, &f->cc.flags);
	nvme_coal_wake(&f->q[0], 2);
	KUNIT_EXPECT_EQ(test, f->kicks, 1);
	f->cc.due = get_jiffies_64();
	nvme_coal_wake(&f->q[0], 1);
	KUNIT_EXPECT_EQ(test, f->kicks, 2);
	set_bit(NVME_COAL_RUNNING, &f->cc.flags);
	nvme_coal_wake(&f->q[1], 2);
	KUNIT_EXPECT_EQ(test, f->kicks, 2);
	clear_bit(NVME_COAL_RUNNING, &f->cc.flags);

	engage_queue0(test, f);
	KUNIT_EXPECT_FALSE(test, test_bit(NVME_COAL_WATCH, &f->cc.flags));
	depth[0] = f->p.avg_qd_threshold + f->p.total_inflight_io_threshold + 1;
	rate[0] = 2 * f->p.high_io_delta;
	KUNIT_EXPECT_TRUE(test, run_period(f, depth, rate));
	KUNIT_EXPECT_TRUE(test, nvme_coal_engaged(&f->q[0].pol));
}

/*
 * A deeper load the policy leaves alone (every queue off, its sample not
 * high; not a first sample, which only sets the baseline) is calm: its
 * next sample is due NVME_COAL_CALM_PERIODS periods later, rounded to
 * jiffies under the policy's stale limit at every period the knob takes,
 * and that sample, even a period late, is judged: a rise seen high arms
 * the queue, which ends the calm, and the next high one moderates it.
 */
static void calm_load_is_sampled_every_third_period(struct kunit *test)
{
	struct fake_ctrl *f = fake_ctrl(test, 1);
	u32 depth[NR_QUEUES], rate[NR_QUEUES];
	u32 late = NVME_COAL_CALM_PERIODS + 1;
	u32 period;
	int i;

	for (i = 0; i < NR_QUEUES; i++) {
		depth[i] = 4;
		rate[i] = 10;
	}
	KUNIT_EXPECT_FALSE(test, run_period(f, depth, rate));
	KUNIT_EXPECT_FALSE(test, test_bit(NVME_COAL_CALM, &f->cc.flags));
	KUNIT_EXPECT_EQ(test, nvme_coal_wait(&f->cc, f->p.period_ms),
			msecs_to_jiffies(f->p.period_ms));
	KUNIT_EXPECT_FALSE(test, run_period(f, depth, rate));
	KUNIT_EXPECT_EQ(test, f->q[0].pol.state, NVME_COAL_OFF);
	KUNIT_EXPECT_TRUE(test, test_bit(NVME_COAL_CALM, &f->cc.flags));
	KUNIT_EXPECT_FALSE(test, test_bit(NVME_COAL_WATCH, &f->cc.flags));
	KUNIT_EXPECT_EQ(test, nvme_coal_wait(&f->cc, f->p.period_ms),
			msecs_to_jiffies(NVME_COAL_CALM_PERIODS *
					 f->p.period_ms));
	for (period = 10; period <= 1000; period++)
		if (jiffies_to_msecs(nvme_coal_wait(&f->cc, period)) >=
		    NVME_COAL_STALE_PERIODS * period)
			break;
	KUNIT_EXPECT_GT(test, period, 1000);

	/* run_period() adds the last of the @late periods */
	f->now += (u64)(late - 1) * f->p.period_ms * NSEC_PER_MSEC;
	depth[0] = f->p.avg_qd_threshold + f->p.total_inflight_io_threshold + 1;
	rate[0] = 2 * f->p.high_io_delta * late;
	run_period(f, depth, rate);
	KUNIT_EXPECT_TRUE(test, f->q[0].valid);
	KUNIT_EXPECT_EQ(test, f->q[0].pol.state, NVME_COAL_ARMING);
	KUNIT_EXPECT_FALSE(test, test_bit(NVME_COAL_CALM, &f->cc.flags));
	rate[0] = 2 * f->p.high_io_delta;
	run_period(f, depth, rate);
	KUNIT_EXPECT_TRUE(test, nvme_coal_engaged(&f->q[0].pol));
	KUNIT_EXPECT_FALSE(test, test_bit(NVME_COAL_CALM, &f->cc.flags));
}

/*
 * A controller that takes 08h and signals every completion anyway is found
 * out by the handler runs of the queue it was to carry: switched off after
 * NVME_COAL_CHECK_PERIODS such periods, genirq carries the queue, and 08h
 * is not sent again until a reset, after which it is tried and judged anew.
 * One that applies it is trusted after NVME_COAL_CHECK_PERIODS periods.
 */
static void ignored_08h_is_switched_off(struct kunit *test)
{
	struct fake_ctrl *f = fake_ctrl(test, 1);
	int sent;

	f->ignores_08h = true;
	engage_queue0(test, f);
	KUNIT_ASSERT_EQ(test, f->nsent, 1);
	KUNIT_ASSERT_NE(test, f->cc.feat_dw11, 0);
	busy_periods(f, NVME_COAL_CHECK_PERIODS - 1);
	KUNIT_EXPECT_EQ(test, f->cc.feat, NVME_COAL_FEAT_ACCEPTED);
	KUNIT_EXPECT_EQ(test, f->nsent, 1);

	busy_periods(f, 1);
	KUNIT_EXPECT_EQ(test, f->cc.feat, NVME_COAL_FEAT_IGNORED);
	KUNIT_EXPECT_EQ(test, f->nsent, 2);
	expect_cmd(test, f, 1, NVME_FEAT_IRQ_COALESCE, 0);
	KUNIT_EXPECT_EQ(test, f->cc.feat_dw11, 0);
	KUNIT_EXPECT_TRUE(test, nvme_coal_engaged(&f->q[0].pol));

	/* released and engaged again: no 08h */
	quiet_periods(f, 1);
	busy_periods(f, NVME_COAL_WINDOW_PERIODS + NVME_COAL_ENGAGE_PERIODS + 1);
	KUNIT_EXPECT_TRUE(test, nvme_coal_engaged(&f->q[0].pol));
	KUNIT_EXPECT_EQ(test, f->nsent, 2);

	/* a reset: the controller is asked, and judged, again */
	f->ignores_08h = false;
	fake_reset(f);
	KUNIT_EXPECT_EQ(test, f->cc.feat, NVME_COAL_FEAT_UNTRIED);
	engage_queue0(test, f);
	sent = f->nsent;
	KUNIT_EXPECT_EQ(test, sent, 3);
	busy_periods(f, NVME_COAL_CHECK_PERIODS - 1);
	KUNIT_EXPECT_FALSE(test, f->cc.feat_works);
	busy_periods(f, 1);
	KUNIT_EXPECT_EQ(test, f->cc.feat, NVME_COAL_FEAT_ACCEPTED);
	KUNIT_EXPECT_TRUE(test, f->cc.feat_works);
	busy_periods(f, NVME_COAL_CHECK_PERIODS);
	KUNIT_EXPECT_EQ(test, f->nsent, sent);
}

/*
 * A period whose handler runs fell for the host's own reasons settles
 * nothing: a controller that ignores 08h, with one such period first, is
 * still found out (by a lead of misses), one period later.
 */
static void misleading_period_settles_nothing(struct kunit *test)
{
	struct fake_ctrl *f = fake_ctrl(test, 1);

	f->ignores_08h = true;
	engage_queue0(test, f);
	KUNIT_ASSERT_NE(test, f->cc.feat_dw11, 0);
	f->misleads = 1;
	busy_periods(f, 1);
	KUNIT_EXPECT_EQ(test, f->cc.feat_lead, 1);
	KUNIT_EXPECT_FALSE(test, f->cc.feat_works);
	busy_periods(f, 2 * NVME_COAL_CHECK_PERIODS);
	KUNIT_EXPECT_FALSE(test, f->cc.feat_works);
	KUNIT_EXPECT_EQ(test, f->cc.feat, NVME_COAL_FEAT_IGNORED);
	KUNIT_EXPECT_EQ(test, f->cc.feat_dw11, 0);
}

static void no_answer_is_asked_again(struct kunit *test)
{
	struct fake_ctrl *f = fake_ctrl(test, 1);

	f->status[0] = -EINTR;
	engage_queue0(test, f);
	KUNIT_EXPECT_EQ(test, f->nsent, 1);
	KUNIT_EXPECT_EQ(test, f->cc.feat, NVME_COAL_FEAT_UNTRIED);
	KUNIT_EXPECT_EQ(test, f->cc.feat_dw11, 0);

	busy_periods(f, 1);
	KUNIT_EXPECT_EQ(test, f->nsent, 2);
	KUNIT_EXPECT_EQ(test, f->sent[1].fid, NVME_FEAT_IRQ_COALESCE);
	KUNIT_EXPECT_EQ(test, f->cc.feat, NVME_COAL_FEAT_ACCEPTED);
	KUNIT_EXPECT_EQ(test, f->cc.feat_dw11, f->sent[1].dw11);
}

static void at_most_four_commands_per_period(struct kunit *test)
{
	struct fake_ctrl *f = fake_ctrl(test, NR_QUEUES);
	int before, i, periods = 0;
	bool all;

	/* seven queues to exempt, four commands a period at most */
	engage_queue0(test, f);
	KUNIT_EXPECT_EQ(test, f->nsent, NVME_COAL_MAX_CMDS);
	do {
		before = f->nsent;
		busy_periods(f, 1);
		KUNIT_EXPECT_LE(test, f->nsent - before, NVME_COAL_MAX_CMDS);
		all = true;
		for (i = 1; i < NR_QUEUES; i++)
			all &= f->q[i].exempt;
	} while (!all && ++periods < 10);
	KUNIT_EXPECT_TRUE(test, all);
	/* 08h only in the period after the last exemption */
	KUNIT_EXPECT_EQ(test, count_fid(f, NVME_FEAT_IRQ_COALESCE), 0);
	busy_periods(f, 1);
	KUNIT_EXPECT_EQ(test, f->cc.feat, NVME_COAL_FEAT_ACCEPTED);
	KUNIT_ASSERT_EQ(test, f->nsent, NR_QUEUES);
	for (i = 0; i < NR_QUEUES - 1; i++)
		KUNIT_EXPECT_EQ(test, f->sent[i].fid, NVME_FEAT_IRQ_CONFIG);
	KUNIT_EXPECT_EQ(test, f->sent[NR_QUEUES - 1].fid, NVME_FEAT_IRQ_COALESCE);
}

static void stopped_queue_is_left_alone(struct kunit *test)
{
	struct fake_ctrl *f = fake_ctrl(test, 3);
	int i;

	nvme_coal_stop(&f->q[2]);
	engage_queue0(test, f);
	busy_periods(f, 3);
	KUNIT_EXPECT_TRUE(test, f->q[1].exempt);
	KUNIT_EXPECT_FALSE(test, f->q[2].exempt);
	for (i = 0; i < f->nsent; i++)
		if (f->sent[i].fid == NVME_FEAT_IRQ_CONFIG)
			KUNIT_EXPECT_EQ(test, f->sent[i].dw11 & 0xffff, 2);
}

/*
 * Two queues moderated with different delays and batches: Feature 08h is
 * one value, the longest delay and the largest batch of the two.
 */
static void two_moderated_queues_share_one_08h(struct kunit *test)
{
	struct fake_ctrl *f = fake_ctrl(test, 2);
	u32 depth[NR_QUEUES] = { }, rate[NR_QUEUES] = { };
	u32 d0, b0, d1, b1, want;
	int i;

	depth[0] = f->p.avg_qd_threshold + f->p.total_inflight_io_threshold + 1;
	depth[1] = 2 * depth[0];
	rate[0] = 4 * f->p.high_io_delta;
	rate[1] = f->p.high_io_delta;
	for (i = 0; i < 1 + NVME_COAL_ENGAGE_PERIODS; i++)
		run_period(f, depth, rate);
	KUNIT_ASSERT_TRUE(test, nvme_coal_engaged(&f->q[0].pol));
	KUNIT_ASSERT_TRUE(test, nvme_coal_engaged(&f->q[1].pol));
	expected_delay(f, depth[0], rate[0], &d0, &b0);
	expected_delay(f, depth[1], rate[1], &d1, &b1);
	want = nvme_coal_feat_coalesce(max(d0, d1), max(b0, b1));
	KUNIT_ASSERT_GT(test, f->nsent, 0);
	KUNIT_EXPECT_EQ(test, f->sent[f->nsent - 1].fid, NVME_FEAT_IRQ_COALESCE);
	KUNIT_EXPECT_EQ(test, f->sent[f->nsent - 1].dw11, want);
	KUNIT_EXPECT_EQ(test, f->cc.feat_dw11, want);
}

/*
 * The load moves from queue 0, moderated, to queue 1 (the scheduler moved
 * the submitter): queue 1 is moderated after one period, not two; queue 0
 * stays moderated while the load may come back, then is released without
 * a hysteresis window.
 */
static void moved_load_is_moderated_at_once(struct kunit *test)
{
	struct fake_ctrl *f = fake_ctrl(test, 2);
	u32 depth[NR_QUEUES] = { }, rate[NR_QUEUES] = { };
	int i;

	engage_queue0(test, f);
	depth[1] = f->p.avg_qd_threshold + f->p.total_inflight_io_threshold + 1;
	rate[1] = 2 * f->p.high_io_delta;
	run_period(f, depth, rate);
	KUNIT_EXPECT_TRUE(test, nvme_coal_engaged(&f->q[1].pol));
	KUNIT_EXPECT_TRUE(test, nvme_coal_engaged(&f->q[0].pol));
	for (i = 1; i < NVME_COAL_WINDOW_PERIODS; i++)
		run_period(f, depth, rate);
	KUNIT_EXPECT_TRUE(test, nvme_coal_engaged(&f->q[0].pol));
	KUNIT_EXPECT_EQ(test, f->q[0].pol.parked, (u32)NVME_COAL_WINDOW_PERIODS);
	run_period(f, depth, rate);
	KUNIT_EXPECT_FALSE(test, nvme_coal_engaged(&f->q[0].pol));
	KUNIT_EXPECT_EQ(test, f->q[0].pol.state, NVME_COAL_OFF);
	KUNIT_EXPECT_TRUE(test, nvme_coal_engaged(&f->q[1].pol));
}

/*
 * The load moves from a deep queue 0 to queue 1, a quarter as deep: queue
 * 0 is parked with its long delay, and Feature 08h takes queue 1's short
 * one, the wait of the only queue that completes anything.
 */
static void parked_queue_leaves_08h_to_the_loaded_one(struct kunit *test)
{
	struct fake_ctrl *f = fake_ctrl(test, 2);
	u32 depth[NR_QUEUES] = { }, rate[NR_QUEUES] = { };
	u32 d1, b1, want, old;
	int i;

	depth[0] = 4 * (f->p.avg_qd_threshold +
			f->p.total_inflight_io_threshold + 1);
	rate[0] = 2 * f->p.high_io_delta;
	for (i = 0; i < 2 + NVME_COAL_ENGAGE_PERIODS; i++)
		run_period(f, depth, rate);
	KUNIT_ASSERT_TRUE(test, nvme_coal_engaged(&f->q[0].pol));
	depth[1] = depth[0] / 4;
	rate[1] = rate[0];
	depth[0] = 0;
	rate[0] = 0;
	for (i = 0; i < 4; i++)
		run_period(f, depth, rate);
	KUNIT_ASSERT_GT(test, f->q[0].pol.parked, 0U);
	KUNIT_ASSERT_TRUE(test, nvme_coal_engaged(&f->q[1].pol));
	expected_delay(f, depth[1], rate[1], &d1, &b1);
	want = nvme_coal_feat_coalesce(d1, b1);
	old = nvme_coal_feat_coalesce(f->q[0].pol.delay_us, f->q[0].pol.batch);
	KUNIT_ASSERT_FALSE(test, nvme_coal_feat_close(old, want));
	KUNIT_EXPECT_EQ(test, f->cc.feat_dw11, want);
}

/*
 * The lost-interrupt poller must allow for the controller's aggregation
 * time from the moment an 08h value goes out until it is switched off.
 */
static void poller_allows_for_device_aggregation(struct kunit *test)
{
	struct fake_ctrl *f = fake_ctrl(test, 2);
	u64 want;

	KUNIT_EXPECT_EQ(test, nvme_coal_hold_ns(&f->q[0]), 0);
	engage_queue0(test, f);
	busy_periods(f, 1);	/* queue 1 exempted, then the probe */
	KUNIT_ASSERT_EQ(test, f->cc.feat, NVME_COAL_FEAT_ACCEPTED);
	want = (u64)((f->cc.feat_dw11 >> 8) & 0xff) * 100 * NSEC_PER_USEC;
	KUNIT_EXPECT_GT(test, want, 0);
	KUNIT_EXPECT_GE(test, f->hold_ns_at_send, want);
	KUNIT_EXPECT_EQ(test, nvme_coal_hold_ns(&f->q[0]), want);
	KUNIT_EXPECT_EQ(test, nvme_coal_hold_ns(&f->q[1]), want);
	quiet_periods(f, 1);
	KUNIT_ASSERT_EQ(test, f->cc.feat_dw11, 0);
	KUNIT_EXPECT_EQ(test, nvme_coal_hold_ns(&f->q[0]), 0);
}

/* Was a Set Features FID with DW11 sent since the Nth command? */
static bool sent_since(struct fake_ctrl *f, int n, unsigned int fid, u32 dw11)
{
	for (; n < f->nsent; n++)
		if (f->sent[n].fid == fid && f->sent[n].dw11 == dw11)
			return true;
	return false;
}

/* A Set Features command as user space sends it. */
static struct nvme_command user_set_features(u8 fid, u32 dw11, bool save)
{
	struct nvme_command c = { };

	c.common.opcode = nvme_admin_set_features;
	c.common.cdw10 = cpu_to_le32(fid | (save ? BIT(31) : 0));
	c.common.cdw11 = cpu_to_le32(dw11);
	return c;
}

/*
 * An aggregation time user space sends is allowed for from the moment it
 * goes out (the controller may apply it before it answers), down to
 * nothing once an 08h of 0 is taken; a refused one leaves the value taken
 * before; only 08h and 09h count.  The policy takes the value as the
 * controller's at its next period and replaces it (nothing moderated: 0),
 * and the allowance goes with it; after a 09h it sends the exemptions it
 * wants again.  A reset brings back the last value saved, whatever was
 * set unsaved after it.
 */
static void user_features_are_allowed_for(struct kunit *test)
{
	struct fake_ctrl *f = fake_ctrl(test, 2);
	struct nvme_command big = user_set_features(NVME_FEAT_IRQ_COALESCE,
						    0xff01, false);
	struct nvme_command off = user_set_features(NVME_FEAT_IRQ_COALESCE,
						    0, false);
	struct nvme_command kato = user_set_features(NVME_FEAT_KATO, 0xff01,
						     false);
	struct nvme_command cd;
	int n;

	nvme_coal_user_sent(&f->cc, &kato);
	nvme_coal_user_done(&f->cc, &kato, 0);
	KUNIT_EXPECT_EQ(test, nvme_coal_hold_ns(&f->q[0]), 0);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&f->cc.user_cmds), 0);

	/* 25.5 ms, beyond anything the policy sets */
	nvme_coal_user_sent(&f->cc, &big);
	KUNIT_EXPECT_EQ(test, nvme_coal_hold_ns(&f->q[1]), 25500 * NSEC_PER_USEC);
	nvme_coal_user_done(&f->cc, &big, 0);
	KUNIT_EXPECT_EQ(test, nvme_coal_hold_ns(&f->q[0]), 25500 * NSEC_PER_USEC);
	/* the policy takes it as the controller's and sends its own 0 */
	n = f->nsent;
	quiet_periods(f, 1);
	KUNIT_EXPECT_TRUE(test, sent_since(f, n, NVME_FEAT_IRQ_COALESCE, 0));
	KUNIT_EXPECT_EQ(test, f->cc.feat_dw11, 0);
	KUNIT_EXPECT_EQ(test, nvme_coal_hold_ns(&f->q[0]), 0);

	nvme_coal_user_sent(&f->cc, &off);
	nvme_coal_user_done(&f->cc, &off, 0);
	KUNIT_EXPECT_EQ(test, nvme_coal_hold_ns(&f->q[0]), 0);

	nvme_coal_user_sent(&f->cc, &big);
	KUNIT_EXPECT_EQ(test, nvme_coal_hold_ns(&f->q[0]), 25500 * NSEC_PER_USEC);
	nvme_coal_user_done(&f->cc, &big, NVME_SC_INVALID_FIELD);
	KUNIT_EXPECT_EQ(test, nvme_coal_hold_ns(&f->q[0]), 0);
	/* one that never went out (the queue refused it) is not waited for */
	nvme_coal_user_sent(&f->cc, &big);
	nvme_coal_user_unsent(&f->cc, &big);
	KUNIT_EXPECT_EQ(test, nvme_coal_hold_ns(&f->q[0]), 0);

	/* taken, then forgotten by a reset; taken and saved, kept */
	nvme_coal_user_sent(&f->cc, &big);
	nvme_coal_user_done(&f->cc, &big, 0);
	fake_reset(f);
	KUNIT_EXPECT_EQ(test, nvme_coal_hold_ns(&f->q[0]), 0);
	big = user_set_features(NVME_FEAT_IRQ_COALESCE, 0xff01, true);
	nvme_coal_user_sent(&f->cc, &big);
	nvme_coal_user_done(&f->cc, &big, 0);
	fake_reset(f);
	KUNIT_EXPECT_EQ(test, nvme_coal_hold_ns(&f->q[0]), 25500 * NSEC_PER_USEC);
	KUNIT_EXPECT_EQ(test, f->cc.feat_dw11, 0xff01);
	/* an unsaved 0 after it: the reset brings the saved value back */
	nvme_coal_user_sent(&f->cc, &off);
	nvme_coal_user_done(&f->cc, &off, 0);
	KUNIT_EXPECT_EQ(test, nvme_coal_hold_ns(&f->q[0]), 0);
	fake_reset(f);
	KUNIT_EXPECT_EQ(test, nvme_coal_hold_ns(&f->q[0]), 25500 * NSEC_PER_USEC);
	KUNIT_EXPECT_EQ(test, f->cc.feat_dw11, 0xff01);

	/* queue 2's exemption undone by user space: sent again when due */
	f->q[1].exempt = true;
	cd = user_set_features(NVME_FEAT_IRQ_CONFIG, f->vector[1], false);
	nvme_coal_user_done(&f->cc, &cd, 0);
	quiet_periods(f, 1);
	KUNIT_EXPECT_TRUE(test, f->q[1].cd_unknown);
	n = f->nsent;
	engage_queue0(test, f);
	busy_periods(f, 1);
	KUNIT_EXPECT_TRUE(test, sent_since(f, n, NVME_FEAT_IRQ_CONFIG,
					   f->vector[1] | BIT(16)));
	KUNIT_EXPECT_TRUE(test, f->q[1].exempt);
	KUNIT_EXPECT_FALSE(test, f->q[1].cd_unknown);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&f->cc.user_cmds), 7);
}

/*
 * A user 08h answered while the policy's own is on its way: which one the
 * controller took last is not known, so the policy's value is sent again
 * at the next period, and the longer aggregation time is allowed for
 * meanwhile.
 */
static void user_08h_crossing_the_policy_s(struct kunit *test)
{
	struct fake_ctrl *f = fake_ctrl(test, 2);
	struct nvme_command big = user_set_features(NVME_FEAT_IRQ_COALESCE,
						    0xff01, false);
	int n;

	engage_queue0(test, f);
	busy_periods(f, 2);
	KUNIT_ASSERT_EQ(test, f->cc.feat, NVME_COAL_FEAT_ACCEPTED);
	KUNIT_ASSERT_NE(test, f->cc.feat_dw11, 0);
	/* the load stops: the policy's 08h of 0 crosses the user's */
	nvme_coal_user_sent(&f->cc, &big);
	f->user_in_send = &big;
	n = f->nsent;
	quiet_periods(f, 1);
	KUNIT_EXPECT_TRUE(test, sent_since(f, n, NVME_FEAT_IRQ_COALESCE, 0));
	KUNIT_EXPECT_EQ(test, f->cc.feat_dw11, NVME_COAL_DW11_UNKNOWN);
	KUNIT_EXPECT_GE(test, nvme_coal_hold_ns(&f->q[0]),
			25500 * NSEC_PER_USEC);
	n = f->nsent;
	quiet_periods(f, 1);
	KUNIT_EXPECT_TRUE(test, sent_since(f, n, NVME_FEAT_IRQ_COALESCE, 0));
	KUNIT_EXPECT_EQ(test, f->cc.feat_dw11, 0);
	KUNIT_EXPECT_EQ(test, nvme_coal_hold_ns(&f->q[0]), 0);
}

/*
 * The policy's 08h taken while a user 08h is still on its way: the
 * controller may apply the user's after it, so its allowance stays.
 */
static void user_08h_in_flight_keeps_its_allowance(struct kunit *test)
{
	struct fake_ctrl *f = fake_ctrl(test, 2);
	struct nvme_command big = user_set_features(NVME_FEAT_IRQ_COALESCE,
						    0xff01, false);

	engage_queue0(test, f);
	busy_periods(f, 2);
	KUNIT_ASSERT_NE(test, f->cc.feat_dw11, 0);
	nvme_coal_user_sent(&f->cc, &big);
	quiet_periods(f, 1);
	KUNIT_ASSERT_EQ(test, f->cc.feat_dw11, 0);
	KUNIT_EXPECT_EQ(test, nvme_coal_hold_ns(&f->q[0]),
			25500 * NSEC_PER_USEC);
	nvme_coal_user_done(&f->cc, &big, 0);
	KUNIT_EXPECT_EQ(test, nvme_coal_hold_ns(&f->q[0]),
			25500 * NSEC_PER_USEC);
}

/*
 * User space sets Coalescing Disable on the vector of a queue the policy
 * has the controller moderate: after a 09h from user space the policy
 * takes no vector's setting for granted and sends its own again, in both
 * directions.
 */
static void user_09h_is_sent_again(struct kunit *test)
{
	struct fake_ctrl *f = fake_ctrl(test, 2);
	struct nvme_command cd;
	int n;

	engage_queue0(test, f);
	busy_periods(f, 2);
	KUNIT_ASSERT_EQ(test, f->cc.feat, NVME_COAL_FEAT_ACCEPTED);
	KUNIT_ASSERT_FALSE(test, f->q[0].exempt);
	KUNIT_ASSERT_TRUE(test, f->q[1].exempt);
	cd = user_set_features(NVME_FEAT_IRQ_CONFIG, f->vector[0] | BIT(16),
			       false);
	nvme_coal_user_done(&f->cc, &cd, 0);
	n = f->nsent;
	busy_periods(f, 1);
	KUNIT_EXPECT_TRUE(test, sent_since(f, n, NVME_FEAT_IRQ_CONFIG,
					   f->vector[0]));
	KUNIT_EXPECT_TRUE(test, sent_since(f, n, NVME_FEAT_IRQ_CONFIG,
					   f->vector[1] | BIT(16)));
	KUNIT_EXPECT_FALSE(test, f->q[0].cd_unknown);
	KUNIT_EXPECT_FALSE(test, f->q[0].exempt);
	KUNIT_EXPECT_TRUE(test, f->q[1].exempt);
}

/*
 * A 09h user space saved (SV) comes back with every reset: no vector's
 * Coalescing Disable is known after one, so the policy sends again the
 * one its moderated queue needs (off, where user space saved it on), or
 * the controller would never coalesce that queue while 08h is on.
 */
static void saved_user_09h_is_sent_again_after_a_reset(struct kunit *test)
{
	struct fake_ctrl *f = fake_ctrl(test, 2);
	struct nvme_command cd;
	int n;

	engage_queue0(test, f);
	busy_periods(f, 2);
	KUNIT_ASSERT_EQ(test, f->cc.feat, NVME_COAL_FEAT_ACCEPTED);
	cd = user_set_features(NVME_FEAT_IRQ_CONFIG, f->vector[0] | BIT(16),
			       true);
	nvme_coal_user_done(&f->cc, &cd, 0);
	busy_periods(f, 1);
	KUNIT_ASSERT_FALSE(test, f->q[0].cd_unknown);
	fake_reset(f);
	KUNIT_EXPECT_TRUE(test, f->q[0].cd_unknown);
	KUNIT_EXPECT_TRUE(test, f->q[1].cd_unknown);
	n = f->nsent;
	busy_periods(f, 1 + NVME_COAL_ENGAGE_PERIODS + 2);
	KUNIT_ASSERT_TRUE(test, nvme_coal_engaged(&f->q[0].pol));
	KUNIT_EXPECT_TRUE(test, sent_since(f, n, NVME_FEAT_IRQ_CONFIG,
					   f->vector[0]));
	KUNIT_EXPECT_FALSE(test, f->q[0].cd_unknown);
	KUNIT_EXPECT_FALSE(test, f->q[0].exempt);
}

/*
 * A 09h refusal for one vector, after others were taken, is that vector's.
 * That vector cannot be exempted: 08h would coalesce it, so the controller
 * stays off and genirq carries the moderated queue.
 */
static void cd_refusal_of_one_vector_stays_with_it(struct kunit *test)
{
	struct fake_ctrl *f = fake_ctrl(test, 3);

	f->refuse_vector = 3;		/* queue 2 */
	engage_queue0(test, f);
	busy_periods(f, 3);
	KUNIT_EXPECT_TRUE(test, f->q[1].exempt);
	KUNIT_EXPECT_FALSE(test, f->q[2].exempt);
	KUNIT_EXPECT_TRUE(test, f->q[2].cd_refused);
	KUNIT_EXPECT_NE(test, f->cc.feat, NVME_COAL_FEAT_REFUSED);
	KUNIT_EXPECT_EQ(test, count_fid(f, NVME_FEAT_IRQ_COALESCE), 0);
	KUNIT_EXPECT_TRUE(test, f->cc.carrying);
	/* asked once, not every period */
	KUNIT_EXPECT_EQ(test, count_fid(f, NVME_FEAT_IRQ_CONFIG), 2);
}

/*
 * 08h accepted, then the controller refuses the 08h=0 that should switch
 * it off: asked once, not every period.
 */
static void refused_08h_is_not_asked_again(struct kunit *test)
{
	struct fake_ctrl *f = fake_ctrl(test, 1);

	engage_queue0(test, f);
	KUNIT_ASSERT_NE(test, f->cc.feat_dw11, 0);
	f->status[0] = STATUS_NOT_CHANGEABLE;
	quiet_periods(f, 1);
	KUNIT_EXPECT_TRUE(test, f->cc.off_refused);
	busy_periods(f, 5);
	quiet_periods(f, 3);
	KUNIT_EXPECT_EQ(test, count_fid(f, NVME_FEAT_IRQ_COALESCE), 2);
	KUNIT_EXPECT_EQ(test, count_fid(f, NVME_FEAT_IRQ_CONFIG), 0);
}

/* An I/O queue on vector 0 (one vector for all): never sent 09h. */
static void vector_zero_gets_no_09h(struct kunit *test)
{
	struct fake_ctrl *f = fake_ctrl(test, 2);

	nvme_coal_stop(&f->q[1]);
	f->vector[1] = 0;
	nvme_coal_start(&f->q[1], &f->cc, NULL);
	engage_queue0(test, f);
	busy_periods(f, 3);
	KUNIT_EXPECT_EQ(test, count_fid(f, NVME_FEAT_IRQ_CONFIG), 0);
	KUNIT_EXPECT_EQ(test, f->cc.feat, NVME_COAL_FEAT_ACCEPTED);
}

/*
 * A reset while an 08h command is on its way: the answer that comes back
 * after the queues started again is stale, and the wanted value is sent
 * to the new controller.
 */
static void reset_sends_the_wanted_08h_again(struct kunit *test)
{
	struct fake_ctrl *f = fake_ctrl(test, 1);
	int before;

	f->reset_in_send = true;
	busy_periods(f, 1 + NVME_COAL_ENGAGE_PERIODS);	/* the probe */
	KUNIT_EXPECT_EQ(test, count_fid(f, NVME_FEAT_IRQ_COALESCE), 1);
	KUNIT_EXPECT_EQ(test, f->cc.feat_dw11, NVME_COAL_DW11_UNKNOWN);
	KUNIT_EXPECT_GT(test, nvme_coal_hold_ns(&f->q[0]), 0);
	before = f->nsent;
	busy_periods(f, NVME_COAL_ENGAGE_PERIODS + 1);
	KUNIT_ASSERT_GT(test, f->nsent, before);
	/* the new controller is told first, then the value the load needs */
	KUNIT_EXPECT_EQ(test, f->sent[before].fid, NVME_FEAT_IRQ_COALESCE);
	KUNIT_EXPECT_EQ(test, f->sent[before].dw11, 0);
	KUNIT_EXPECT_TRUE(test, nvme_coal_engaged(&f->q[0].pol));
	KUNIT_EXPECT_EQ(test, f->cc.feat_dw11,
			nvme_coal_feat_coalesce(f->q[0].pol.delay_us,
						f->q[0].pol.batch));
	KUNIT_EXPECT_NE(test, f->cc.feat_dw11, NVME_COAL_DW11_UNKNOWN);
}

/*
 * The reset work answers an 08h queued before it and only then starts the
 * I/O queues: the controller may hold that value, so it is not known.
 */
static void answer_between_disable_and_start_is_not_trusted(struct kunit *test)
{
	struct fake_ctrl *f = fake_ctrl(test, 1);

	f->stop_in_send = true;
	busy_periods(f, 1 + NVME_COAL_ENGAGE_PERIODS);	/* the probe */
	KUNIT_ASSERT_EQ(test, count_fid(f, NVME_FEAT_IRQ_COALESCE), 1);
	KUNIT_EXPECT_EQ(test, f->cc.feat_dw11, NVME_COAL_DW11_UNKNOWN);
	nvme_coal_start(&f->q[0], &f->cc, NULL);
	KUNIT_EXPECT_EQ(test, f->cc.feat_dw11, NVME_COAL_DW11_UNKNOWN);
	KUNIT_EXPECT_GT(test, nvme_coal_hold_ns(&f->q[0]), 0);
}

/*
 * The controller refuses to take a vector's exemption back (09h CD=0) as
 * its queue is moderated: the vector stays exempt, so genirq would carry
 * that queue, and once it is released the vector is covered: 08h stays on.
 */
static void refused_unexempt_keeps_the_controller_on(struct kunit *test)
{
	struct fake_ctrl *f = fake_ctrl(test, 2);
	u32 depth[NR_QUEUES] = { }, rate[NR_QUEUES] = { };
	u32 busy = f->p.avg_qd_threshold + f->p.total_inflight_io_threshold + 1;

	engage_queue0(test, f);
	busy_periods(f, 1);		/* queue 1 exempted, then 08h */
	KUNIT_ASSERT_EQ(test, f->cc.feat, NVME_COAL_FEAT_ACCEPTED);
	KUNIT_ASSERT_TRUE(test, f->q[1].exempt);
	f->refuse_vector = 2;
	depth[0] = busy;
	depth[1] = busy;
	rate[0] = 2 * f->p.high_io_delta;
	rate[1] = 2 * f->p.high_io_delta;
	run_period(f, depth, rate);
	run_period(f, depth, rate);
	KUNIT_ASSERT_TRUE(test, nvme_coal_engaged(&f->q[1].pol));
	KUNIT_EXPECT_TRUE(test, f->q[1].cd_refused);
	KUNIT_EXPECT_TRUE(test, f->q[1].exempt);
	/* parked, then released the second time a parked period is at QD1 */
	depth[1] = 1;
	rate[1] = 10;
	run_period(f, depth, rate);
	run_period(f, depth, rate);
	KUNIT_EXPECT_TRUE(test, nvme_coal_engaged(&f->q[1].pol));
	run_period(f, depth, rate);
	KUNIT_EXPECT_FALSE(test, nvme_coal_engaged(&f->q[1].pol));
	KUNIT_EXPECT_FALSE(test, f->cc.carrying);
	KUNIT_EXPECT_NE(test, f->cc.feat_dw11, 0);
}

/*
 * Queue 0 stays busy and moderated; queue 1 is busy, at four times queue
 * 0's rate, and idle in turns, so that it is moderated and released every
 * other period (its controller keeps under half its load), each change a
 * 09h.  The commands are bounded by the rate, not the number of changes.
 */
static void flapping_queue_is_rate_bound(struct kunit *test)
{
	struct fake_ctrl *f = fake_ctrl(test, 2);
	u32 depth[NR_QUEUES] = { }, rate[NR_QUEUES] = { };
	u32 busy_depth = f->p.avg_qd_threshold + f->p.total_inflight_io_threshold + 1;
	u64 start = f->now, secs;
	int i, periods = 200;

	engage_queue0(test, f);
	depth[0] = busy_depth;
	rate[0] = 2 * f->p.high_io_delta;
	for (i = 0; i < periods; i++) {
		depth[1] = i & 1 ? busy_depth : 0;
		rate[1] = i & 1 ? 8 * f->p.high_io_delta : 0;
		run_period(f, depth, rate);
	}
	secs = div_u64(f->now - start, NSEC_PER_SEC);
	kunit_info(test, "%llu decisions of queue 2, %llu commands, %llu periods held, in %llu s",
		   f->q[1].decisions, f->cc.cmds, f->cc.cmds_held, secs);
	KUNIT_EXPECT_GE(test, f->q[1].decisions, periods / 2);
	KUNIT_EXPECT_GT(test, f->cc.cmds_held, 0);
	KUNIT_EXPECT_LE(test, f->cc.cmds, NVME_COAL_CMD_BURST +
			div_u64(f->now - start, NVME_COAL_CMD_INTERVAL_MS * NSEC_PER_MSEC));
	KUNIT_EXPECT_TRUE(test, nvme_coal_engaged(&f->q[0].pol));
	KUNIT_EXPECT_EQ(test, f->cc.feat, NVME_COAL_FEAT_ACCEPTED);
}

static void vector_nop(struct irq_data *d)
{
}

static struct irq_chip vector_chip = {
	.name		= "nvme-coal-test",
	.irq_mask	= vector_nop,
	.irq_unmask	= vector_nop,
	.irq_ack	= vector_nop,
	.flags		= IRQCHIP_SUPPORTS_MODERATION,
};

static irqreturn_t vector_handler(int irq, void *data)
{
	return IRQ_HANDLED;
}

static void vector_free(void *irq)
{
	free_irq((unsigned long)irq, vector_free);
	irq_free_desc((unsigned long)irq);
}

/* An edge vector of a chip that masks: genirq moderates it. */
static int real_vector(struct kunit *test)
{
	int irq = irq_alloc_desc(NUMA_NO_NODE);

	KUNIT_ASSERT_GE(test, irq, 0);
	irq_set_chip_and_handler(irq, &vector_chip, handle_edge_irq);
	irq_clear_status_flags(irq, IRQ_NOREQUEST | IRQ_NOAUTOEN);
	if (request_irq(irq, vector_handler, 0, "nvme-coal-test", vector_free)) {
		irq_free_desc(irq);
		KUNIT_FAIL_AND_ABORT(test, "cannot request irq %d", irq);
	}
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, vector_free,
							(void *)(unsigned long)irq), 0);
	return irq;
}

/* kmalloc() calls made under the controller's lock by the case's thread */
struct alloc_probe {
	struct task_struct *task;
	struct mutex *lock;	/* the controller's: counted while it is held */
	int allocs;
	int may_do_io;
};

static void record_alloc(void *data, unsigned long call_site, const void *ptr,
			 size_t bytes_req, size_t bytes_alloc, gfp_t gfp_flags,
			 int node)
{
	struct alloc_probe *p = data;

	if (current != p->task || !mutex_is_locked(p->lock))
		return;
	p->allocs++;
	if ((gfp_flags & __GFP_IO) && !(current->flags & PF_MEMALLOC_NOIO))
		p->may_do_io++;
}

/* KUnit cleanup: an aborted case must not leave the probe registered */
static void alloc_probe_stop(void *data)
{
	unregister_trace_kmalloc(record_alloc, data);
	tracepoint_synchronize_unregister();
}

/*
 * genirq carries the engaged queue while its sibling's exemption is
 * pending (and after 08h is refused).  Its first engage allocates
 * genirq's state with cc->lock held, which a reset waits for
 * before the controller's I/O can complete: that allocation must not
 * start I/O to reclaim memory.
 */
static void genirq_engage_allocates_without_io(struct kunit *test)
{
	struct fake_ctrl *f = fake_ctrl(test, 2);
	struct alloc_probe *probe = kunit_kzalloc(test, sizeof(*probe),
						  GFP_KERNEL);
	int irq = real_vector(test);
	int off = irq_can_moderate(irq);

	KUNIT_ASSERT_NOT_NULL(test, probe);
	/* noirqmoderation, or threadirqs: the handler is a thread */
	if (off)
		kunit_skip(test, "genirq cannot moderate this vector (%d)", off);
	/* queue 1's vector is asked about when the queue starts */
	nvme_coal_stop(&f->q[0]);
	f->irq0 = irq;
	nvme_coal_start(&f->q[0], &f->cc, NULL);
	f->status[0] = STATUS_NOT_CHANGEABLE;
	probe->task = current;
	probe->lock = &f->cc.lock;
	if (register_trace_kmalloc(record_alloc, probe))
		kunit_skip(test, "no kmalloc tracepoint");
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, alloc_probe_stop,
							probe), 0);
	engage_queue0(test, f);
	busy_periods(f, 1);
	kunit_release_action(test, alloc_probe_stop, probe);
	KUNIT_EXPECT_EQ(test, f->cc.feat, NVME_COAL_FEAT_REFUSED);
	KUNIT_EXPECT_NE(test, irq_get_moderation(f->irq0), 0);
	KUNIT_EXPECT_GT(test, probe->allocs, 0);
	KUNIT_EXPECT_EQ(test, probe->may_do_io, 0);
}

/*
 * A moderated queue the controller coalesces, whose Coalescing Disable user
 * space then set (Feature 09h): the controller may now signal its every
 * completion, so genirq carries the queue until the policy's 09h is taken
 * again, and lets go after it.
 */
static void genirq_carries_while_09h_unknown(struct kunit *test)
{
	struct fake_ctrl *f = fake_ctrl(test, 2);
	int irq = real_vector(test);
	int off = irq_can_moderate(irq);
	struct nvme_command cd;
	int n, feat;

	if (off)
		kunit_skip(test, "genirq cannot moderate this vector (%d)", off);
	nvme_coal_stop(&f->q[0]);
	f->irq0 = irq;
	nvme_coal_start(&f->q[0], &f->cc, NULL);
	engage_queue0(test, f);
	busy_periods(f, 2);
	KUNIT_ASSERT_EQ(test, f->cc.feat, NVME_COAL_FEAT_ACCEPTED);
	KUNIT_ASSERT_FALSE(test, f->q[0].exempt);
	KUNIT_ASSERT_EQ(test, irq_get_moderation(irq), 0);

	cd = user_set_features(NVME_FEAT_IRQ_CONFIG, f->vector[0] | BIT(16),
			       false);
	nvme_coal_user_done(&f->cc, &cd, 0);
	n = f->nsent;
	feat = count_fid(f, NVME_FEAT_IRQ_COALESCE);
	busy_periods(f, 1);
	KUNIT_EXPECT_EQ(test, irq_get_moderation(irq), f->q[0].pol.delay_us);
	/* every vector's 09h again, the sibling's exemption too; not 08h */
	KUNIT_EXPECT_TRUE(test, sent_since(f, n, NVME_FEAT_IRQ_CONFIG,
					   f->vector[0]));
	KUNIT_EXPECT_TRUE(test, sent_since(f, n, NVME_FEAT_IRQ_CONFIG,
					   f->vector[1] | BIT(16)));
	KUNIT_EXPECT_EQ(test, count_fid(f, NVME_FEAT_IRQ_COALESCE), feat);
	KUNIT_EXPECT_FALSE(test, f->q[0].cd_unknown);
	busy_periods(f, 1);
	KUNIT_EXPECT_TRUE(test, nvme_coal_engaged(&f->q[0].pol));
	KUNIT_EXPECT_EQ(test, irq_get_moderation(irq), 0);
}

static struct kunit_case nvme_coal_actuator_cases[] = {
	KUNIT_CASE(device_accepted_coalesces_and_exempts),
	KUNIT_CASE(device_refused_once_genirq_after),
	KUNIT_CASE(exemption_refused_first_genirq_after),
	KUNIT_CASE(commands_wait_for_a_live_controller),
	KUNIT_CASE(suspend_sends_nothing_until_resume),
	KUNIT_CASE(unmoderated_load_needs_no_timer),
	KUNIT_CASE(calm_load_is_sampled_every_third_period),
	KUNIT_CASE(ignored_08h_is_switched_off),
	KUNIT_CASE(misleading_period_settles_nothing),
	KUNIT_CASE(no_answer_is_asked_again),
	KUNIT_CASE(at_most_four_commands_per_period),
	KUNIT_CASE(stopped_queue_is_left_alone),
	KUNIT_CASE(two_moderated_queues_share_one_08h),
	KUNIT_CASE(moved_load_is_moderated_at_once),
	KUNIT_CASE(parked_queue_leaves_08h_to_the_loaded_one),
	KUNIT_CASE(poller_allows_for_device_aggregation),
	KUNIT_CASE(user_features_are_allowed_for),
	KUNIT_CASE(user_09h_is_sent_again),
	KUNIT_CASE(saved_user_09h_is_sent_again_after_a_reset),
	KUNIT_CASE(user_08h_crossing_the_policy_s),
	KUNIT_CASE(user_08h_in_flight_keeps_its_allowance),
	KUNIT_CASE(cd_refusal_of_one_vector_stays_with_it),
	KUNIT_CASE(refused_08h_is_not_asked_again),
	KUNIT_CASE(vector_zero_gets_no_09h),
	KUNIT_CASE(reset_sends_the_wanted_08h_again),
	KUNIT_CASE(answer_between_disable_and_start_is_not_trusted),
	KUNIT_CASE(genirq_engage_allocates_without_io),
	KUNIT_CASE(genirq_carries_while_09h_unknown),
	KUNIT_CASE(flapping_queue_is_rate_bound),
	KUNIT_CASE(refused_unexempt_keeps_the_controller_on),
	{}
};

static struct kunit_suite nvme_coal_actuator_suite = {
	.name = "nvme_coalesce_actuator",
	.test_cases = nvme_coal_actuator_cases,
};

kunit_test_suite(nvme_coal_actuator_suite);

MODULE_DESCRIPTION("KUnit tests for the nvme-pci adaptive coalescing actuators");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS("EXPORTED_FOR_KUNIT_TESTING");

// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of per-vector interrupt moderation, on fake interrupts: each
 * test allocates descriptors, gives them a dummy chip that behaves like an
 * MSI-X vector (a message sent while masked is latched and delivered on
 * unmask; retrigger re-sends) and raises them from the test thread, pinned
 * to one CPU, with generic_handle_irq().  Deliveries the chip makes itself
 * (unmask, retrigger) go through an irq_work, so in hardirq context.
 */

#include <kunit/test.h>
#include <linux/cpu.h>
#include <linux/debug_locks.h>
#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/interrupt.h>
#include <linux/irq.h>
#include <linux/irq_moderation.h>
#include <linux/irq_work.h>
#include <linux/irqdesc.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <trace/events/kmem.h>
#include <trace/events/timer.h>

#include "moderation.h"

struct fake_line {
	unsigned int irq;
	bool masked;
	bool latched;
	struct irq_work deliver;
	unsigned int runs;
	unsigned int retriggers;
	bool last_in_hardirq;
	int last_cpu;
	u64 last_ns;
	u64 min_gap_ns;
	unsigned int busy_us;
	bool not_mine;
};

static void fake_raise(struct fake_line *l)
{
	unsigned long flags;

	local_irq_save(flags);
	if (READ_ONCE(l->masked))
		WRITE_ONCE(l->latched, true);
	else
		generic_handle_irq(l->irq);
	local_irq_restore(flags);
}

/*
 * fake_raise_within(): raise @l only if its last run was less than @ns ago,
 * checked with interrupts off so that nothing comes between the check and
 * the raise; false if the case's thread came back too late to tell.
 */
static bool fake_raise_within(struct fake_line *l, u64 ns)
{
	unsigned long flags;
	bool soon;

	local_irq_save(flags);
	soon = ktime_get_ns() - READ_ONCE(l->last_ns) < ns;
	if (soon)
		fake_raise(l);
	local_irq_restore(flags);
	return soon;
}

static void fake_deliver(struct irq_work *w)
{
	fake_raise(container_of(w, struct fake_line, deliver));
}

static void fake_mask(struct irq_data *d)
{
	struct fake_line *l = irq_data_get_irq_chip_data(d);

	WRITE_ONCE(l->masked, true);
}

static void fake_unmask(struct irq_data *d)
{
	struct fake_line *l = irq_data_get_irq_chip_data(d);

	WRITE_ONCE(l->masked, false);
	if (l->latched) {
		l->latched = false;
		irq_work_queue(&l->deliver);
	}
}

static void fake_nop(struct irq_data *d)
{
}

static int fake_retrigger(struct irq_data *d)
{
	struct fake_line *l = irq_data_get_irq_chip_data(d);

	l->retriggers++;
	irq_work_queue(&l->deliver);
	return 1;
}

static struct irq_chip fake_chip = {
	.name		= "modtest",
	.irq_mask	= fake_mask,
	.irq_unmask	= fake_unmask,
	.irq_ack	= fake_nop,
	.irq_eoi	= fake_nop,
	.irq_retrigger	= fake_retrigger,
	.flags		= IRQCHIP_SUPPORTS_MODERATION,
};

/* masks as well, but does not say that it latches what arrives masked */
static struct irq_chip fake_chip_unstated = {
	.name		= "modtest-unstated",
	.irq_mask	= fake_mask,
	.irq_unmask	= fake_unmask,
	.irq_ack	= fake_nop,
	.irq_eoi	= fake_nop,
	.irq_retrigger	= fake_retrigger,
};

/* masks and latches, but cannot retrigger: a held interrupt is not resent */
static struct irq_chip fake_chip_noretrigger = {
	.name		= "modtest-noretrigger",
	.irq_mask	= fake_mask,
	.irq_unmask	= fake_unmask,
	.irq_ack	= fake_nop,
	.irq_eoi	= fake_nop,
	.flags		= IRQCHIP_SUPPORTS_MODERATION,
};

static struct irq_chip fake_chip_nomask = {
	.name		= "modtest-nomask",
	.irq_ack	= fake_nop,
	.irq_eoi	= fake_nop,
	.irq_retrigger	= fake_retrigger,
};

/*
 * The gaps are measured between the arrivals genirq counts the quiet time
 * from, not by the handler's own clock read, which comes later by a varying
 * amount (the flow handler, a host stall under TCG).
 */
static irqreturn_t fake_handler(int irq, void *data)
{
	struct irq_moderation *m = rcu_dereference_raw(irq_to_desc(irq)->moderation);
	struct fake_line *l = data;
	/* the arrival the quiet time counts from, while one is set */
	u64 now = m && READ_ONCE(m->delay_ns) ?
		  READ_ONCE(m->quiet_until) - READ_ONCE(m->delay_ns) :
		  ktime_get_ns();

	if (l->runs && now - l->last_ns < l->min_gap_ns)
		l->min_gap_ns = now - l->last_ns;
	l->last_ns = now;
	l->runs++;
	l->last_in_hardirq = in_hardirq();
	l->last_cpu = raw_smp_processor_id();
	if (l->busy_us)
		mdelay(l->busy_us / 1000);
	return l->not_mine ? IRQ_NONE : IRQ_HANDLED;
}

static irqreturn_t fake_thread(int irq, void *data)
{
	return IRQ_HANDLED;
}

/* A descriptor with @chip and @flow, not yet requested; freed at test exit. */
static struct fake_line *fake_alloc(struct kunit *test, struct irq_chip *chip,
				    irq_flow_handler_t flow)
{
	struct fake_line *l = kunit_kzalloc(test, sizeof(*l), GFP_KERNEL);
	int irq;

	KUNIT_ASSERT_NOT_NULL(test, l);
	irq = irq_alloc_desc(NUMA_NO_NODE);
	KUNIT_ASSERT_GE(test, irq, 0);
	l->irq = irq;
	l->min_gap_ns = U64_MAX;
	init_irq_work(&l->deliver, fake_deliver);
	irq_set_chip_and_handler(irq, chip, flow);
	irq_set_chip_data(irq, l);
	irq_clear_status_flags(irq, IRQ_NOREQUEST | IRQ_NOAUTOEN);
	return l;
}

static struct fake_line *fake_request(struct kunit *test,
				      irq_flow_handler_t flow)
{
	struct fake_line *l = fake_alloc(test, &fake_chip, flow);

	KUNIT_ASSERT_EQ(test, request_irq(l->irq, fake_handler, 0, "modtest", l), 0);
	return l;
}

static void fake_free(struct fake_line *l, bool requested)
{
	if (requested)
		free_irq(l->irq, l);
	irq_work_sync(&l->deliver);
	irq_free_desc(l->irq);
}

/*
 * The quiet time of the cases that hold an interrupt: the second of two
 * raises back to back must fall into the quiet time the first one started,
 * even when the host stalls the virtual CPU for a few milliseconds (QEMU
 * TCG on a loaded machine).  SETTLE_MS is comfortably past its end.
 */
#define HOLD_US		IRQ_MODERATION_MAX_US
#define SETTLE_MS	50

/*
 * Raise, hold and replay on one CPU; the case's thread ends with the case.
 * Booted with noirqmoderation, every case is skipped: nothing can be set.
 */
static int moderation_test_init(struct kunit *test)
{
	if (irq_can_moderate(0) == -ENODEV)
		kunit_skip(test, "booted with noirqmoderation");
	/* every handler is a thread then: irq_moderation_forced_threads */
	if (force_irqthreads())
		kunit_skip(test, "handlers are threads (threadirqs, PREEMPT_RT)");
	return set_cpus_allowed_ptr(current, cpumask_of(raw_smp_processor_id()));
}

/*
 * A raise within half of the quiet time the last run started is held (the
 * line masked, no run) and replayed once the quiet time ends.  False,
 * nothing checked, if the case's thread came back too late to raise in it.
 */
static bool held_then_replayed(struct kunit *test, struct fake_line *l)
{
	unsigned int runs = l->runs;

	if (!fake_raise_within(l, HOLD_US * NSEC_PER_USEC / 2))
		return false;
	KUNIT_EXPECT_EQ(test, l->runs, runs);
	KUNIT_EXPECT_TRUE(test, READ_ONCE(l->masked));
	msleep(SETTLE_MS);
	KUNIT_EXPECT_EQ(test, l->runs, runs + 1);
	return true;
}

static void held_interrupt_is_replayed(struct kunit *test, irq_flow_handler_t flow)
{
	struct fake_line *l = fake_request(test, flow);
	bool replayed;
	u64 end;

	KUNIT_ASSERT_EQ(test, irq_set_moderation(l->irq, HOLD_US), 0);
	KUNIT_EXPECT_EQ(test, irq_get_moderation(l->irq), HOLD_US);
	fake_raise(l);
	KUNIT_EXPECT_EQ(test, l->runs, 1);
	/*
	 * In the quiet time: held.  A host that stalled the case past it
	 * leaves nothing to judge: a skip, unless a check above failed.
	 */
	if (!fake_raise_within(l, HOLD_US * NSEC_PER_USEC / 2)) {
		if (READ_ONCE(test->status) == KUNIT_SUCCESS)
			kunit_mark_skipped(test, "quiet time over before the second raise");
		fake_free(l, true);
		return;
	}
	KUNIT_EXPECT_EQ(test, l->runs, 1);
	KUNIT_EXPECT_TRUE(test, READ_ONCE(l->masked));
	/*
	 * Wait without sleeping: a thread woken from a sleep may wait behind
	 * the boot's other work (nvme probing, PREEMPT_NONE) for longer than
	 * the quiet time the replay starts.
	 */
	end = ktime_get_ns() + SETTLE_MS * NSEC_PER_MSEC;
	while (READ_ONCE(l->runs) < 2 && ktime_get_ns() < end)
		cpu_relax();
	replayed = READ_ONCE(l->runs) == 2;
	KUNIT_EXPECT_EQ(test, l->runs, 2);	/* replayed, not lost */
	/* by the timer itself, in hardirq context: no retrigger, no IPI */
	KUNIT_EXPECT_EQ(test, l->retriggers, 0);
	KUNIT_EXPECT_TRUE(test, l->last_in_hardirq);
	/* counted once, in /proc/interrupts, as the flow handler counts it */
	KUNIT_EXPECT_EQ(test, irq_to_desc(l->irq)->tot_count, 2);
	KUNIT_EXPECT_FALSE(test, READ_ONCE(l->masked));
	/*
	 * The replay started a quiet time of its own: a raise within half of
	 * it is held again.  A host that stalled the virtual CPU past that
	 * leaves nothing to judge: a skip, unless a check above failed (a
	 * skip would overwrite the failure).
	 */
	if (!held_then_replayed(test, l) && replayed &&
	    READ_ONCE(test->status) == KUNIT_SUCCESS)
		kunit_mark_skipped(test, "the replay's quiet time was over before the next raise");
	KUNIT_EXPECT_GE(test, l->min_gap_ns, HOLD_US * NSEC_PER_USEC);
	fake_free(l, true);
}

static void edge_held_interrupt_is_replayed(struct kunit *test)
{
	held_interrupt_is_replayed(test, handle_edge_irq);
}

static void fasteoi_held_interrupt_is_replayed(struct kunit *test)
{
	held_interrupt_is_replayed(test, handle_fasteoi_irq);
}

static void no_hold_after_quiet_time(struct kunit *test)
{
	struct fake_line *l = fake_request(test, handle_edge_irq);

	KUNIT_ASSERT_EQ(test, irq_set_moderation(l->irq, 500), 0);
	fake_raise(l);
	msleep(20);
	fake_raise(l);
	KUNIT_EXPECT_EQ(test, l->runs, 2);
	KUNIT_EXPECT_EQ(test, l->retriggers, 0);	/* no timer was needed */
	fake_free(l, true);
}

/*
 * One clock read per interrupt: the quiet time counts from the arrival of
 * the interrupt the handler ran for, not from the end of its run (a second
 * read).  A handler busy for 10 ms, a quiet time of 1 ms: the quiet time
 * ends about 1 ms after the raise, long before the handler returned.
 */
static void quiet_time_counts_from_arrival(struct kunit *test)
{
	struct fake_line *l = fake_request(test, handle_edge_irq);
	struct irq_moderation *m;
	u64 before;

	KUNIT_ASSERT_EQ(test, irq_set_moderation(l->irq, 1000), 0);
	l->busy_us = 10000;	/* whole milliseconds */
	before = ktime_get_ns();
	fake_raise(l);
	KUNIT_EXPECT_EQ(test, l->runs, 1);
	m = rcu_access_pointer(irq_to_desc(l->irq)->moderation);
	KUNIT_ASSERT_NOT_NULL(test, m);
	/* 5 ms: room for a host stall between the two reads */
	KUNIT_EXPECT_LT(test, m->quiet_until, before + 5 * NSEC_PER_MSEC);
	KUNIT_EXPECT_GE(test, m->quiet_until, before + NSEC_PER_MSEC);
	fake_free(l, true);
}

/*
 * A run whose handler returned IRQ_NONE handled nothing: no quiet time
 * follows it, and the next interrupt is handled at once.
 */
static void no_quiet_time_after_irq_none(struct kunit *test)
{
	struct fake_line *l = fake_request(test, handle_edge_irq);

	KUNIT_ASSERT_EQ(test, irq_set_moderation(l->irq, HOLD_US), 0);
	l->not_mine = true;
	fake_raise(l);
	l->not_mine = false;
	fake_raise(l);
	KUNIT_EXPECT_EQ(test, l->runs, 2);
	KUNIT_EXPECT_FALSE(test, READ_ONCE(l->masked));
	/* the handled one starts a quiet time: a raise within it is held */
	held_then_replayed(test, l);
	fake_free(l, true);
}

static void off_by_default_and_zero_turns_off(struct kunit *test)
{
	struct fake_line *l = fake_request(test, handle_edge_irq);

	KUNIT_EXPECT_EQ(test, irq_get_moderation(l->irq), 0);
	KUNIT_EXPECT_EQ(test, irq_can_moderate(l->irq), 0);
	fake_raise(l);
	fake_raise(l);
	KUNIT_EXPECT_EQ(test, l->runs, 2);
	KUNIT_ASSERT_EQ(test, irq_set_moderation(l->irq, 1000), 0);
	KUNIT_ASSERT_EQ(test, irq_set_moderation(l->irq, 0), 0);
	KUNIT_EXPECT_EQ(test, irq_get_moderation(l->irq), 0);
	fake_raise(l);
	fake_raise(l);
	KUNIT_EXPECT_EQ(test, l->runs, 4);
	fake_free(l, true);
}

static void rejects_above_maximum(struct kunit *test)
{
	struct fake_line *l = fake_request(test, handle_edge_irq);

	KUNIT_ASSERT_EQ(test, irq_set_moderation(l->irq, 100), 0);
	KUNIT_EXPECT_EQ(test, irq_set_moderation(l->irq, IRQ_MODERATION_MAX_US + 1),
			-ERANGE);
	KUNIT_EXPECT_EQ(test, irq_get_moderation(l->irq), 100);
	KUNIT_EXPECT_EQ(test, irq_set_moderation(l->irq, IRQ_MODERATION_MAX_US), 0);
	fake_free(l, true);
}

static void expect_rejected(struct kunit *test, struct fake_line *l)
{
	KUNIT_EXPECT_EQ(test, irq_can_moderate(l->irq), -EINVAL);
	KUNIT_EXPECT_EQ(test, irq_set_moderation(l->irq, 100), -EINVAL);
	KUNIT_EXPECT_EQ(test, irq_get_moderation(l->irq), 0);
}

static void rejects_unsafe_vectors(struct kunit *test)
{
	struct fake_line *l, *other;

	/* no handler */
	l = fake_alloc(test, &fake_chip, handle_edge_irq);
	expect_rejected(test, l);
	fake_free(l, false);

	/* shared: two handlers */
	other = kunit_kzalloc(test, sizeof(*other), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, other);
	l = fake_alloc(test, &fake_chip, handle_edge_irq);
	KUNIT_ASSERT_EQ(test, request_irq(l->irq, fake_handler, IRQF_SHARED,
					  "modtest", l), 0);
	KUNIT_ASSERT_EQ(test, request_irq(l->irq, fake_handler, IRQF_SHARED,
					  "modtest", other), 0);
	expect_rejected(test, l);
	free_irq(l->irq, other);
	fake_free(l, true);

	/* threaded, ONESHOT */
	l = fake_alloc(test, &fake_chip, handle_edge_irq);
	KUNIT_ASSERT_EQ(test, request_threaded_irq(l->irq, NULL, fake_thread,
						   IRQF_ONESHOT, "modtest", l), 0);
	expect_rejected(test, l);
	fake_free(l, true);

	/* level-triggered */
	l = fake_alloc(test, &fake_chip, handle_fasteoi_irq);
	irq_set_status_flags(l->irq, IRQ_LEVEL);
	KUNIT_ASSERT_EQ(test, request_irq(l->irq, fake_handler, 0, "modtest", l), 0);
	expect_rejected(test, l);
	fake_free(l, true);

	/* flow handlers without the hooks, VMD's handle_untracked_irq among them */
	l = fake_alloc(test, &fake_chip, handle_simple_irq);
	KUNIT_ASSERT_EQ(test, request_irq(l->irq, fake_handler, 0, "modtest", l), 0);
	expect_rejected(test, l);
	fake_free(l, true);
	l = fake_alloc(test, &fake_chip, handle_untracked_irq);
	KUNIT_ASSERT_EQ(test, request_irq(l->irq, fake_handler, 0, "modtest", l), 0);
	expect_rejected(test, l);
	fake_free(l, true);

	/* a chip that cannot mask */
	l = fake_alloc(test, &fake_chip_nomask, handle_edge_irq);
	KUNIT_ASSERT_EQ(test, request_irq(l->irq, fake_handler, 0, "modtest", l), 0);
	expect_rejected(test, l);
	fake_free(l, true);

	/* a timer (x86 IRQ 0, HPET channels) and a handler that must not wait */
	l = fake_alloc(test, &fake_chip, handle_edge_irq);
	KUNIT_ASSERT_EQ(test, request_irq(l->irq, fake_handler, IRQF_TIMER,
					  "modtest", l), 0);
	expect_rejected(test, l);
	fake_free(l, true);
	l = fake_alloc(test, &fake_chip, handle_edge_irq);
	KUNIT_ASSERT_EQ(test, request_irq(l->irq, fake_handler, IRQF_NO_THREAD,
					  "modtest", l), 0);
	expect_rejected(test, l);
	fake_free(l, true);
}

/* kmalloc() calls made by one task, seen through the kmalloc tracepoint */
struct alloc_probe {
	struct task_struct *task;
	int allocs;
};

static void record_alloc(void *data, unsigned long call_site, const void *ptr,
			 size_t bytes_req, size_t bytes_alloc, gfp_t gfp_flags,
			 int node)
{
	struct alloc_probe *p = data;

	if (current == p->task)
		p->allocs++;
}

/*
 * A refused request allocates no state and leaves the vector unmoderated
 * for the flow handler (IRQD_MODERATED clear); a new delay for a vector
 * moderated already is set in place, without allocating, which a driver
 * may do under locks its reset path takes.
 */
static void refused_or_changed_allocates_nothing(struct kunit *test)
{
	struct alloc_probe probe = { .task = current };
	struct fake_line *l, *other, *m;

	other = kunit_kzalloc(test, sizeof(*other), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, other);
	l = fake_alloc(test, &fake_chip, handle_edge_irq);
	KUNIT_ASSERT_EQ(test, request_irq(l->irq, fake_handler, IRQF_SHARED,
					  "modtest", l), 0);
	KUNIT_ASSERT_EQ(test, request_irq(l->irq, fake_handler, IRQF_SHARED,
					  "modtest", other), 0);
	m = fake_request(test, handle_edge_irq);
	KUNIT_ASSERT_EQ(test, irq_set_moderation(m->irq, 100), 0);
	if (register_trace_kmalloc(record_alloc, &probe)) {
		free_irq(l->irq, other);
		fake_free(l, true);
		fake_free(m, true);
		kunit_skip(test, "no kmalloc tracepoint");
	}
	KUNIT_EXPECT_EQ(test, irq_set_moderation(l->irq, 100), -EINVAL);
	KUNIT_EXPECT_EQ(test, irq_update_moderation(l->irq, 0, 100), -EINVAL);
	KUNIT_EXPECT_FALSE(test, irqd_is_moderated(irq_get_irq_data(l->irq)));
	KUNIT_EXPECT_EQ(test, probe.allocs, 0);
	KUNIT_EXPECT_EQ(test, irq_set_moderation(m->irq, 200), 0);
	KUNIT_EXPECT_EQ(test, irq_update_moderation(m->irq, 200, 300), 0);
	KUNIT_EXPECT_EQ(test, irq_get_moderation(m->irq), 300);
	KUNIT_EXPECT_EQ(test, probe.allocs, 0);
	unregister_trace_kmalloc(record_alloc, &probe);
	tracepoint_synchronize_unregister();
	free_irq(l->irq, other);
	fake_free(l, true);
	fake_free(m, true);
}

struct start_probe {
	struct hrtimer *timer;
	int starts;
	enum hrtimer_mode mode;
};

static void record_start(void *data, struct hrtimer *timer,
			 enum hrtimer_mode mode, bool was_armed)
{
	struct start_probe *p = data;

	if (timer == READ_ONCE(p->timer)) {
		p->starts++;
		p->mode = mode;
	}
}

/*
 * The replay runs where the interrupt was held: the timer is started
 * pinned (an unpinned one started from an idle CPU may move to a busy one,
 * get_nohz_timer_target()), and the handlers run on the holding CPU.
 */
static void replay_timer_is_pinned(struct kunit *test)
{
	struct fake_line *l = fake_request(test, handle_edge_irq);
	struct start_probe probe = { };
	struct irq_moderation *m;
	int cpu = raw_smp_processor_id();
	u64 end;

	KUNIT_ASSERT_EQ(test, irq_set_moderation(l->irq, HOLD_US), 0);
	m = rcu_access_pointer(irq_to_desc(l->irq)->moderation);
	KUNIT_ASSERT_NOT_NULL(test, m);
	probe.timer = &m->timer;
	if (register_trace_hrtimer_start(record_start, &probe)) {
		fake_free(l, true);
		kunit_skip(test, "no hrtimer_start tracepoint");
	}
	fake_raise(l);
	fake_raise(l);				/* held: the timer starts */
	end = ktime_get_ns() + SETTLE_MS * NSEC_PER_MSEC;
	while (READ_ONCE(l->runs) < 2 && ktime_get_ns() < end)
		cpu_relax();
	unregister_trace_hrtimer_start(record_start, &probe);
	tracepoint_synchronize_unregister();
	KUNIT_EXPECT_EQ(test, l->runs, 2);
	KUNIT_EXPECT_EQ(test, probe.starts, 1);
	KUNIT_EXPECT_TRUE(test, probe.mode & HRTIMER_MODE_PINNED);
	KUNIT_EXPECT_TRUE(test, probe.mode & HRTIMER_MODE_HARD);
	KUNIT_EXPECT_EQ(test, l->last_cpu, cpu);
	fake_free(l, true);
}

/*
 * @l's vector targets @mask alone, as an affinity change makes it; NULL:
 * back to a new descriptor's masks (a descriptor that is not freed keeps
 * its effective affinity)
 */
static void fake_target(struct fake_line *l, const struct cpumask *mask)
{
	struct irq_desc *desc = irq_to_desc(l->irq);

	raw_spin_lock_irq(&desc->lock);
	irq_data_update_affinity(&desc->irq_data, mask ?: irq_default_affinity);
	irq_data_update_effective_affinity(&desc->irq_data, mask ?: cpu_none_mask);
	raw_spin_unlock_irq(&desc->lock);
}

/*
 * A held interrupt whose vector targets another CPU than the timer's (its
 * affinity changed during the hold, or the holding CPU went offline and
 * the timer moved) is retriggered, for the chip to send it to the target
 * (the fake chip delivers it through an irq_work here), not run by the
 * timer; a chip that cannot retrigger has it run by the timer all the
 * same: a resend in software would run it on the same CPU, later.  The
 * hold does not look at the affinity, so the vector is pointed away first.
 */
static void off_target_replay(struct kunit *test, struct irq_chip *chip,
			      bool retriggered)
{
	struct fake_line *l = fake_alloc(test, chip, handle_edge_irq);
	struct irq_moderation *m;
	unsigned int cpu;
	u64 end;

	cpu = cpumask_any_but(cpu_online_mask, raw_smp_processor_id());
	if (cpu >= nr_cpu_ids) {
		fake_free(l, false);
		kunit_skip(test, "one CPU online");
	}
	KUNIT_ASSERT_EQ(test, request_irq(l->irq, fake_handler, 0, "modtest", l), 0);
	KUNIT_ASSERT_EQ(test, irq_set_moderation(l->irq, HOLD_US), 0);
	m = rcu_access_pointer(irq_to_desc(l->irq)->moderation);
	KUNIT_ASSERT_NOT_NULL(test, m);
	fake_target(l, cpumask_of(cpu));
	fake_raise(l);
	fake_raise(l);				/* held: the timer starts here */
	KUNIT_EXPECT_EQ(test, l->runs, 1);
	end = ktime_get_ns() + SETTLE_MS * NSEC_PER_MSEC;
	while (READ_ONCE(l->runs) < 2 && ktime_get_ns() < end)
		cpu_relax();
	KUNIT_EXPECT_EQ(test, l->runs, 2);	/* delivered, not lost */
	KUNIT_EXPECT_EQ(test, l->retriggers, retriggered ? 1 : 0);
	KUNIT_EXPECT_EQ(test, m->replayed, retriggered ? 0 : 1);
	fake_target(l, NULL);
	fake_free(l, true);
}

static void replay_off_target_is_retriggered(struct kunit *test)
{
	off_target_replay(test, &fake_chip, true);
}

static void replay_off_target_without_retrigger_runs(struct kunit *test)
{
	off_target_replay(test, &fake_chip_noretrigger, false);
}

/* A descriptor with one IRQF_SHARED handler, as pci_request_irq() makes. */
static struct fake_line *fake_request_shared(struct kunit *test)
{
	struct fake_line *l = fake_alloc(test, &fake_chip, handle_edge_irq);

	KUNIT_ASSERT_EQ(test, request_irq(l->irq, fake_handler, IRQF_SHARED,
					  "modtest", l), 0);
	return l;
}

/* MSI vectors come with IRQF_SHARED (pci_request_irq()) and one handler. */
static void shared_flag_alone_is_accepted(struct kunit *test)
{
	struct fake_line *l = fake_request_shared(test);
	struct fake_line *other = kunit_kzalloc(test, sizeof(*other), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, other);
	KUNIT_ASSERT_EQ(test, irq_set_moderation(l->irq, HOLD_US), 0);
	fake_raise(l);
	fake_raise(l);
	KUNIT_EXPECT_EQ(test, l->runs, 1);	/* held */
	msleep(SETTLE_MS);
	KUNIT_EXPECT_EQ(test, l->runs, 2);
	/* a second handler joins: nothing is held any more */
	KUNIT_ASSERT_EQ(test, request_irq(l->irq, fake_handler, IRQF_SHARED,
					  "modtest", other), 0);
	fake_raise(l);
	fake_raise(l);
	KUNIT_EXPECT_EQ(test, l->runs, 4);
	KUNIT_EXPECT_EQ(test, other->runs, 2);
	KUNIT_EXPECT_EQ(test, irq_can_moderate(l->irq), -EINVAL);
	/* no new quiet time, but turning it off still works */
	KUNIT_EXPECT_EQ(test, irq_set_moderation(l->irq, HOLD_US / 2), -EINVAL);
	KUNIT_EXPECT_EQ(test, irq_set_moderation(l->irq, 0), 0);
	KUNIT_EXPECT_EQ(test, irq_get_moderation(l->irq), 0);
	free_irq(l->irq, other);
	KUNIT_EXPECT_EQ(test, irq_can_moderate(l->irq), 0);
	fake_free(l, true);
}

static void free_while_held(struct kunit *test)
{
	struct fake_line *l = fake_request(test, handle_edge_irq);
	unsigned int retriggers;

	KUNIT_ASSERT_EQ(test, irq_set_moderation(l->irq, HOLD_US), 0);
	fake_raise(l);
	fake_raise(l);				/* held, timer armed */
	KUNIT_EXPECT_NOT_NULL(test, rcu_access_pointer(irq_to_desc(l->irq)->moderation));
	free_irq(l->irq, l);
	KUNIT_EXPECT_NULL(test, rcu_access_pointer(irq_to_desc(l->irq)->moderation));
	retriggers = l->retriggers;
	msleep(SETTLE_MS);		/* past the quiet time */
	KUNIT_EXPECT_EQ(test, l->retriggers, retriggers);
	KUNIT_EXPECT_EQ(test, l->runs, 1);
	/* a new handler starts unmoderated */
	KUNIT_ASSERT_EQ(test, request_irq(l->irq, fake_handler, 0, "modtest", l), 0);
	KUNIT_EXPECT_EQ(test, irq_get_moderation(l->irq), 0);
	fake_free(l, true);
}

/*
 * The setting belongs to the handler that made it: on a shared line it is
 * dropped when that handler leaves, and kept when another one does.
 */
static void dropped_with_the_handler_that_set_it(struct kunit *test)
{
	struct fake_line *l = fake_request_shared(test);
	struct fake_line *other = kunit_kzalloc(test, sizeof(*other), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, other);
	KUNIT_ASSERT_EQ(test, irq_set_moderation(l->irq, HOLD_US), 0);
	/* another handler joins and leaves: the owner keeps its setting */
	KUNIT_ASSERT_EQ(test, request_irq(l->irq, fake_handler, IRQF_SHARED,
					  "modtest", other), 0);
	free_irq(l->irq, other);
	KUNIT_EXPECT_EQ(test, irq_get_moderation(l->irq), HOLD_US);
	/* it joins again and the owner leaves: nothing of it stays */
	KUNIT_ASSERT_EQ(test, request_irq(l->irq, fake_handler, IRQF_SHARED,
					  "modtest", other), 0);
	free_irq(l->irq, l);
	KUNIT_EXPECT_EQ(test, irq_get_moderation(l->irq), 0);
	KUNIT_EXPECT_NULL(test, rcu_access_pointer(irq_to_desc(l->irq)->moderation));
	fake_raise(l);
	fake_raise(l);
	KUNIT_EXPECT_EQ(test, l->runs, 0);
	KUNIT_EXPECT_EQ(test, other->runs, 2);	/* not held */
	free_irq(l->irq, other);
	fake_free(l, false);
}

/* Compare and set: a value somebody else wrote meanwhile is never lost. */
static void update_only_from_the_expected_value(struct kunit *test)
{
	struct fake_line *l = fake_request(test, handle_edge_irq);

	KUNIT_EXPECT_EQ(test, irq_update_moderation(l->irq, 0, 100), 0);
	KUNIT_EXPECT_EQ(test, irq_get_moderation(l->irq), 100);
	/* root wrote 300 since the caller last looked */
	KUNIT_ASSERT_EQ(test, irq_set_moderation(l->irq, 300), 0);
	KUNIT_EXPECT_EQ(test, irq_update_moderation(l->irq, 100, 200), -EBUSY);
	KUNIT_EXPECT_EQ(test, irq_update_moderation(l->irq, 100, 0), -EBUSY);
	KUNIT_EXPECT_EQ(test, irq_get_moderation(l->irq), 300);
	KUNIT_EXPECT_EQ(test, irq_update_moderation(l->irq, 300, 0), 0);
	KUNIT_EXPECT_EQ(test, irq_get_moderation(l->irq), 0);
	KUNIT_EXPECT_EQ(test, irq_update_moderation(l->irq, 0, 0), 0);
	KUNIT_EXPECT_EQ(test, irq_update_moderation(l->irq, 20000, 0), -ERANGE);
	fake_free(l, true);
}

/*
 * Only the chip knows whether its mask latches a message at the device
 * (PCI MSI-X) or loses it, or does nothing (MSI without mask bits, Xen): a
 * chip that masks but does not state IRQCHIP_SUPPORTS_MODERATION is refused.
 */
static void chip_without_the_capability_is_refused(struct kunit *test)
{
	struct fake_line *l = fake_alloc(test, &fake_chip_unstated,
					 handle_edge_irq);

	KUNIT_ASSERT_EQ(test, request_irq(l->irq, fake_handler, 0, "modtest", l), 0);
	expect_rejected(test, l);
	KUNIT_EXPECT_EQ(test, irq_allow_moderation(l->irq), -EINVAL);
	fake_free(l, true);
}

/*
 * Root moderates a vector through /proc only where its driver allowed it;
 * the allowance survives a delay of 0 and goes with the handler.
 */
static void root_needs_the_drivers_allowance(struct kunit *test)
{
	struct fake_line *l = fake_request(test, handle_edge_irq);
	struct irq_desc *desc = irq_to_desc(l->irq);

	KUNIT_EXPECT_EQ(test, irq_moderation_user_set(l->irq, 100), -EPERM);
	KUNIT_EXPECT_EQ(test, irq_moderation_user_set(l->irq, 0), -EPERM);
	KUNIT_EXPECT_EQ(test, irq_moderation_user_set(l->irq, 10001), -EPERM);
	/* the driver's own setting does not allow root either */
	KUNIT_ASSERT_EQ(test, irq_set_moderation(l->irq, 200), 0);
	KUNIT_EXPECT_EQ(test, irq_moderation_user_set(l->irq, 0), -EPERM);
	KUNIT_EXPECT_EQ(test, irq_get_moderation(l->irq), 200);

	KUNIT_ASSERT_EQ(test, irq_allow_moderation(l->irq), 0);
	KUNIT_EXPECT_EQ(test, irq_moderation_user_set(l->irq, 100), 0);
	KUNIT_EXPECT_EQ(test, irq_get_moderation(l->irq), 100);
	KUNIT_EXPECT_EQ(test, irq_moderation_user_set(l->irq, 0), 0);
	KUNIT_EXPECT_EQ(test, irq_get_moderation(l->irq), 0);
	KUNIT_EXPECT_FALSE(test, irqd_is_moderated(&desc->irq_data));
	/* still allowed after 0, with bad values still rejected */
	KUNIT_EXPECT_EQ(test, irq_moderation_user_set(l->irq, 10001), -ERANGE);
	KUNIT_EXPECT_EQ(test, irq_moderation_user_set(l->irq, 50), 0);
	KUNIT_EXPECT_TRUE(test, irqd_is_moderated(&desc->irq_data));

	/* a new handler starts without the allowance */
	free_irq(l->irq, l);
	KUNIT_EXPECT_NULL(test, rcu_access_pointer(desc->moderation));
	KUNIT_ASSERT_EQ(test, request_irq(l->irq, fake_handler, 0, "modtest", l), 0);
	KUNIT_EXPECT_EQ(test, irq_moderation_user_set(l->irq, 100), -EPERM);
	KUNIT_EXPECT_EQ(test, irq_get_moderation(l->irq), 0);
	fake_free(l, true);
}

/*
 * The flow handler is checked when moderation is set: a vector given another
 * flow handler afterwards (one that tests the same state bits, as
 * handle_simple_irq() does on 7.3; on 6.12 no other flow handler tests
 * them) is never held by it, and turning moderation off still works.
 */
static void other_flow_after_setting_never_holds(struct kunit *test)
{
	struct fake_line *l = fake_request(test, handle_edge_irq);

	KUNIT_ASSERT_EQ(test, irq_set_moderation(l->irq, HOLD_US), 0);
	irq_set_handler(l->irq, handle_simple_irq);
	fake_raise(l);
	fake_raise(l);
	KUNIT_EXPECT_EQ(test, l->runs, 2);
	KUNIT_EXPECT_EQ(test, irq_set_moderation(l->irq, 0), 0);
	irq_set_handler(l->irq, handle_edge_irq);
	fake_free(l, true);
}

struct free_ctx {
	struct fake_line *l;
	struct completion done;
};

static int free_thread_fn(void *arg)
{
	struct free_ctx *c = arg;

	free_irq(c->l->irq, c->l);
	complete(&c->done);
	return 0;
}

/*
 * irq_get_moderation() reads the state with no lock while free_irq() drops
 * it (/proc/irq/<N>/moderation_us is world-readable).  Force the
 * interleaving: a reader holds the state inside an RCU read-side section
 * while another CPU frees the handler; the state must stay readable until
 * the reader is done (with KASAN an early kfree() is a use-after-free).
 */
static void state_outlives_a_concurrent_reader(struct kunit *test)
{
	struct fake_line *l = fake_request(test, handle_edge_irq);
	struct irq_moderation *m;
	struct task_struct *t;
	struct free_ctx c = { .l = l };
	unsigned int cpu;
	u64 end, delay_ns = 0;

	cpu = cpumask_any_but(cpu_online_mask, raw_smp_processor_id());
	if (cpu >= nr_cpu_ids) {
		fake_free(l, true);
		kunit_skip(test, "needs a second CPU");
	}
	KUNIT_ASSERT_EQ(test, irq_set_moderation(l->irq, 100), 0);
	init_completion(&c.done);
	t = kthread_create(free_thread_fn, &c, "modtest-free");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	kthread_bind(t, cpu);

	rcu_read_lock();
	m = rcu_dereference(irq_to_desc(l->irq)->moderation);
	wake_up_process(t);
	end = ktime_get_ns() + 5 * NSEC_PER_SEC;
	while (!completion_done(&c.done) && ktime_get_ns() < end)
		cpu_relax();
	if (m)
		delay_ns = READ_ONCE(m->delay_ns);
	rcu_read_unlock();

	wait_for_completion(&c.done);
	KUNIT_EXPECT_NOT_NULL(test, m);
	KUNIT_EXPECT_EQ(test, delay_ns, 100 * NSEC_PER_USEC);
	KUNIT_EXPECT_EQ(test, irq_get_moderation(l->irq), 0);
	fake_free(l, false);
}

static void disable_enable_while_held(struct kunit *test)
{
	struct fake_line *l = fake_request(test, handle_edge_irq);

	KUNIT_ASSERT_EQ(test, irq_set_moderation(l->irq, HOLD_US), 0);
	fake_raise(l);
	fake_raise(l);				/* held */
	disable_irq(l->irq);
	msleep(SETTLE_MS);		/* quiet time ends while disabled */
	KUNIT_EXPECT_EQ(test, l->runs, 1);
	KUNIT_EXPECT_TRUE(test, READ_ONCE(l->masked));
	enable_irq(l->irq);			/* replays the held interrupt */
	msleep(SETTLE_MS);
	KUNIT_EXPECT_EQ(test, l->runs, 2);
	fake_free(l, true);
}

static void turn_off_while_held(struct kunit *test)
{
	struct fake_line *l = fake_request(test, handle_edge_irq);

	KUNIT_ASSERT_EQ(test, irq_set_moderation(l->irq, IRQ_MODERATION_MAX_US), 0);
	fake_raise(l);
	fake_raise(l);				/* held for 10 ms */
	KUNIT_ASSERT_EQ(test, irq_set_moderation(l->irq, 0), 0);
	usleep_range(1000, 2000);		/* replayed now, not at 10 ms */
	KUNIT_EXPECT_EQ(test, l->runs, 2);
	KUNIT_EXPECT_FALSE(test, READ_ONCE(l->masked));
	fake_free(l, true);
}

/*
 * The flow handlers see a vector as moderated (IRQD_MODERATED) exactly
 * while it has moderation state: from the first quiet time set until it is
 * set to 0 or the handler is freed; a change of the quiet time or a refused
 * call leaves it as it was.
 */
static void moderated_bit_follows_state(struct kunit *test)
{
	struct fake_line *a = fake_request(test, handle_edge_irq);
	struct irq_desc *desc = irq_to_desc(a->irq);
	static const struct {
		unsigned int us;
		bool moderated;
	} steps[] = {
		{ HOLD_US, true },		/* allocated */
		{ HOLD_US / 2, true },		/* changed in place */
		{ IRQ_MODERATION_MAX_US + 1, true },	/* refused */
		{ 0, false },			/* freed */
		{ HOLD_US, true },
	};
	int i;

	for (i = 0; i < ARRAY_SIZE(steps); i++) {
		irq_set_moderation(a->irq, steps[i].us);
		KUNIT_EXPECT_EQ_MSG(test, irqd_is_moderated(&desc->irq_data),
				    steps[i].moderated, "step %d", i);
		KUNIT_EXPECT_EQ_MSG(test, !!rcu_access_pointer(desc->moderation),
				    steps[i].moderated, "step %d", i);
	}
	free_irq(a->irq, a);
	KUNIT_EXPECT_FALSE(test, irqd_is_moderated(&desc->irq_data));
	KUNIT_EXPECT_NULL(test, rcu_access_pointer(desc->moderation));
	fake_free(a, false);
}

/*
 * Moderating a vector takes no CPU hotplug lock.  A driver moderates its
 * vectors under a lock of its own that its reset path takes (nvme-pci's
 * coalescing lock), and a CPU going offline may wait for that reset, an
 * I/O it waits for timing out.  Lockdep is shown the hotplug side first:
 * the driver's lock taken with the hotplug lock held; the hotplug lock
 * taken under the driver's lock is then a circular dependency, which
 * lockdep reports, and turns itself off.  The vector is a fresh one, so
 * that a first setting is tried as well as a change and a release.
 */
static void no_hotplug_lock_under_a_driver_lock(struct kunit *test)
{
	static DEFINE_MUTEX(driver_lock);
	struct fake_line *l;

	if (!IS_ENABLED(CONFIG_PROVE_LOCKING) || !debug_locks)
		kunit_skip(test, "needs lockdep, and lockdep still on");
	l = fake_request(test, handle_edge_irq);
	cpus_write_lock();
	mutex_lock(&driver_lock);
	mutex_unlock(&driver_lock);
	cpus_write_unlock();

	mutex_lock(&driver_lock);
	KUNIT_EXPECT_EQ(test, irq_set_moderation(l->irq, HOLD_US), 0);
	KUNIT_EXPECT_EQ(test, irq_set_moderation(l->irq, HOLD_US / 2), 0);
	KUNIT_EXPECT_EQ(test, irq_set_moderation(l->irq, 0), 0);
	mutex_unlock(&driver_lock);
	KUNIT_EXPECT_TRUE(test, debug_locks);
	fake_free(l, true);
}

/*
 * Two vectors on one CPU, raised back to back: each keeps its own gap, so
 * the slower one is not run at the faster one's rate (the flaw of a per-CPU
 * moderation timer).
 */
static void two_vectors_one_cpu_keep_their_gaps(struct kunit *test)
{
	struct fake_line *a, *b;
	u64 end;

	/* at tick resolution both quiet times round up to the same tick */
	if (!hrtimer_highres_enabled())
		kunit_skip(test, "high-resolution timers are not active");
	a = fake_request(test, handle_edge_irq);
	b = fake_request(test, handle_edge_irq);
	end = ktime_get_ns() + 200 * NSEC_PER_MSEC;
	KUNIT_ASSERT_EQ(test, irq_set_moderation(a->irq, 250), 0);
	KUNIT_ASSERT_EQ(test, irq_set_moderation(b->irq, 1000), 0);
	while (ktime_get_ns() < end) {
		fake_raise(a);
		fake_raise(b);
		usleep_range(50, 100);
	}
	msleep(20);
	kunit_info(test, "a: %u runs, min gap %llu us; b: %u runs, min gap %llu us\n",
		   a->runs, a->min_gap_ns / NSEC_PER_USEC,
		   b->runs, b->min_gap_ns / NSEC_PER_USEC);
	KUNIT_EXPECT_GE(test, a->min_gap_ns, 250 * NSEC_PER_USEC);
	KUNIT_EXPECT_GE(test, b->min_gap_ns, 1000 * NSEC_PER_USEC);
	/* neither is starved; b runs at its own, lower, rate */
	KUNIT_EXPECT_GE(test, a->runs, 10);
	KUNIT_EXPECT_GE(test, b->runs, 5);
	KUNIT_EXPECT_GT(test, a->runs, b->runs);
	fake_free(a, true);
	fake_free(b, true);
}

static struct kunit_case irq_moderation_cases[] = {
	KUNIT_CASE(edge_held_interrupt_is_replayed),
	KUNIT_CASE(fasteoi_held_interrupt_is_replayed),
	KUNIT_CASE(no_hold_after_quiet_time),
	KUNIT_CASE(quiet_time_counts_from_arrival),
	KUNIT_CASE(no_quiet_time_after_irq_none),
	KUNIT_CASE(off_by_default_and_zero_turns_off),
	KUNIT_CASE(rejects_above_maximum),
	KUNIT_CASE(rejects_unsafe_vectors),
	KUNIT_CASE(refused_or_changed_allocates_nothing),
	KUNIT_CASE(replay_timer_is_pinned),
	KUNIT_CASE(replay_off_target_is_retriggered),
	KUNIT_CASE(replay_off_target_without_retrigger_runs),
	KUNIT_CASE(shared_flag_alone_is_accepted),
	KUNIT_CASE(free_while_held),
	KUNIT_CASE(dropped_with_the_handler_that_set_it),
	KUNIT_CASE(update_only_from_the_expected_value),
	KUNIT_CASE(chip_without_the_capability_is_refused),
	KUNIT_CASE(root_needs_the_drivers_allowance),
	KUNIT_CASE(other_flow_after_setting_never_holds),
	KUNIT_CASE(state_outlives_a_concurrent_reader),
	KUNIT_CASE(disable_enable_while_held),
	KUNIT_CASE(turn_off_while_held),
	KUNIT_CASE(moderated_bit_follows_state),
	KUNIT_CASE(no_hotplug_lock_under_a_driver_lock),
	KUNIT_CASE(two_vectors_one_cpu_keep_their_gaps),
	{}
};

static struct kunit_suite irq_moderation_suite = {
	.name = "irq_moderation",
	.init = moderation_test_init,
	.test_cases = irq_moderation_cases,
};

/*
 * Booted with threadirqs (or PREEMPT_RT), request_irq() makes every handler
 * without IRQF_NO_THREAD a thread, whose unmask moderation cannot own: the
 * vector is refused, and the driver keeps one interrupt per completion.
 */
static void forced_thread_is_refused(struct kunit *test)
{
	struct fake_line *l;

	if (!force_irqthreads())
		kunit_skip(test, "handlers are not forced into threads");
	l = fake_request(test, handle_edge_irq);
	expect_rejected(test, l);
	KUNIT_EXPECT_EQ(test, irq_allow_moderation(l->irq), -EINVAL);
	fake_free(l, true);
}

static struct kunit_case irq_moderation_forced_threads_cases[] = {
	KUNIT_CASE(forced_thread_is_refused),
	{}
};

static struct kunit_suite irq_moderation_forced_threads_suite = {
	.name = "irq_moderation_forced_threads",
	.test_cases = irq_moderation_forced_threads_cases,
};

kunit_test_suites(&irq_moderation_suite, &irq_moderation_forced_threads_suite);

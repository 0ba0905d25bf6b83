// SPDX-License-Identifier: GPL-2.0
/*
 * Completion interrupts that arrive before their completion is visible.
 *
 * A completion goes unnoticed when no MSI-X message is sent, when the
 * message is sent before the completion queue entry, or when errata reorder
 * the two.  The last is the common one in the field: on Meteor Lake and
 * Arrow Lake VMD (MTL016/ARL004) the message overtakes the entry's DMA
 * write; the handler runs, finds nothing and returns IRQ_NONE, and the
 * entry, once visible, waits for the next interrupt, which after idle may
 * be none (the VMD driver's interrupt quirk covers those two device IDs).
 *
 * A handler run that finds nothing while commands are outstanding and
 * nothing delays the queue's interrupt on purpose (genirq moderation, the
 * controller's aggregation time) arms a one-shot hrtimer of
 * nvme.early_irq_recheck_us, pinned to the handler's CPU.  If no interrupt
 * came since and a completion is now visible at the same head, a work item
 * reaps the queue with the vector disabled, as the lost-interrupt recovery
 * does; if nothing is visible yet, it looks again after twice the delay,
 * and so on while the next look comes within NVME_EARLY_IRQ_MAX_NS of the
 * empty run (50, 150, 350 and 750 us at the default), after which the
 * completion is the poller's (pci_lost_irq.c) or the timeout's.
 *
 * A handler run that finds a completion pays a test of one flag.  Empty
 * runs do happen on a healthy queue: at depth, most are the one run that
 * the messages of completions reaped by the previous run raise, and the
 * empty run after a run that reaped more than one arms nothing while more
 * than one command is outstanding.  Others are the replay after a vector
 * was disabled, and behind VMD one message runs the handlers of every
 * vector it serves.  A chain of re-checks holds the queue off for 1 ms,
 * twice as long after each in a row up to 16 ms, until one ends in a
 * recovery (a find the work does not confirm is another vector's message
 * too) or one comes after a gap of 16 ms; a queue whose interrupt is
 * delayed on purpose is held off for 1 ms.  Meanwhile an empty run costs a
 * clock read.  That bounds the cost to one chain of re-checks (at most four
 * timer interrupts, each a few cache-line reads) per queue per millisecond
 * and a bit, and to one per 16 ms where empty runs keep coming and the
 * re-checks recover nothing, as behind VMD.  The price: there, a
 * completion whose message came early within 16 ms of the queue's last
 * fruitless chain waits for the next message, or for its command's
 * deadline if no other comes.
 */
#include <linux/interrupt.h>
#include <linux/irq.h>
#include <linux/irqdomain.h>
#include <linux/ktime.h>
#include <linux/moduleparam.h>
#include <kunit/visibility.h>

#include "pci_debugfs.h"
#include "pci_early_irq.h"
#include "pci_lost_irq.h"
#include "pci_trace.h"

#define NVME_EARLY_IRQ_RECHECK_US_MAX	1000

unsigned int nvme_early_irq_recheck_us = 50;
DEFINE_STATIC_KEY_TRUE(nvme_early_irq_on);

/*
 * Off: empty runs stop arming; a re-check already armed finds the period 0
 * and ends.
 */
static void early_irq_recheck_us_changed(unsigned int us)
{
	if (us)
		static_branch_enable(&nvme_early_irq_on);
	else
		static_branch_disable(&nvme_early_irq_on);
}

NVME_PCI_KNOB(early_irq_recheck_us, nvme_early_irq_recheck_us, 0,
	      NVME_EARLY_IRQ_RECHECK_US_MAX, early_irq_recheck_us_changed);
MODULE_PARM_DESC(early_irq_recheck_us,
		 "look again this many us after a queue's interrupt found no completion, for one the interrupt came before (0-1000, 0 = off, default 50)");

/**
 * nvme_early_irq_judge() - what does a re-check see?
 * @mark: the queue as the empty handler run left it
 * @s: the queue now
 *
 * Pure function of its arguments.  Context: any.
 *
 * Return: NVME_EARLY_IRQ_FOUND if a completion is posted at the head the
 * empty run left and no interrupt was serviced since; NVME_EARLY_IRQ_WAIT
 * if nothing is posted there yet and commands are still outstanding;
 * NVME_EARLY_IRQ_NONE otherwise (an interrupt came, or the queue moved or
 * emptied).
 */
enum nvme_early_irq_verdict
nvme_early_irq_judge(const struct nvme_early_irq_mark *mark,
		     const struct nvme_lost_irq_sample *s)
{
	if (s->irqs != mark->irqs || s->head != mark->head)
		return NVME_EARLY_IRQ_NONE;
	if (s->pending)
		return NVME_EARLY_IRQ_FOUND;
	return s->outstanding ? NVME_EARLY_IRQ_WAIT : NVME_EARLY_IRQ_NONE;
}
EXPORT_SYMBOL_IF_KUNIT(nvme_early_irq_judge);

/**
 * nvme_early_irq_hold_off() - the hold-off after the next chain of re-checks
 * @quiet_ns: the hold-off the chain that just ended had
 *
 * Pure function of its argument.  Context: any.
 *
 * Return: twice @quiet_ns, within NVME_EARLY_IRQ_QUIET_NS and
 * NVME_EARLY_IRQ_QUIET_MAX_NS.
 */
u64 nvme_early_irq_hold_off(u64 quiet_ns)
{
	return clamp(quiet_ns * 2, NVME_EARLY_IRQ_QUIET_NS,
		     NVME_EARLY_IRQ_QUIET_MAX_NS);
}
EXPORT_SYMBOL_IF_KUNIT(nvme_early_irq_hold_off);

/**
 * nvme_early_irq_quiet() - the hold-off a chain of re-checks armed now gets
 * @quiet_ns: what the chains before left
 * @until_ns: when the last hold-off ended
 * @now_ns: now
 *
 * Chains come "in a row" while empty runs keep coming: one armed more
 * than NVME_EARLY_IRQ_QUIET_MAX_NS after the last hold-off ended starts
 * the back-off again.  Pure function of its arguments.  Context: any.
 *
 * Return: @quiet_ns, or NVME_EARLY_IRQ_QUIET_NS after such a gap.
 */
u64 nvme_early_irq_quiet(u64 quiet_ns, u64 until_ns, u64 now_ns)
{
	if (now_ns > until_ns + NVME_EARLY_IRQ_QUIET_MAX_NS)
		return NVME_EARLY_IRQ_QUIET_NS;
	return quiet_ns;
}
EXPORT_SYMBOL_IF_KUNIT(nvme_early_irq_quiet);

/*
 * Context: the queue's interrupt handler in hardirq context (nvme_irq(), or
 * nvme_irq_check() in threaded mode), one at a time per queue.
 */
void __nvme_early_irq_empty(struct nvme_early_irq *e)
{
	struct nvme_lost_irq_sample s = { };
	u64 us = READ_ONCE(nvme_early_irq_recheck_us);
	bool owed = e->owed;
	u64 now, until;

	e->owed = false;
	/* armed or running: one re-check at a time per queue */
	if (!READ_ONCE(e->active) || !us || hrtimer_active(&e->timer))
		return;
	now = ktime_get_ns();
	/* ordered by the timer's base lock, which hrtimer_active() reads */
	until = READ_ONCE(e->quiet_until_ns);
	if (now < until)
		return;
	nvme_pci_cq_sample(e->nvmeq, &s);
	if (!s.outstanding)
		return;
	/*
	 * Likely the message of a completion the last run reaped; another
	 * command's message is still to come, and reaps whatever this one
	 * missed.  With one command left, its message may be the early one.
	 */
	if (owed && s.outstanding > 1)
		return;
	WRITE_ONCE(e->empty, e->empty + 1);
	WRITE_ONCE(e->quiet_ns, nvme_early_irq_quiet(READ_ONCE(e->quiet_ns),
						     until, now));
	if (s.hold_ns) {
		/* held on purpose: the poller allows for it, this cannot */
		WRITE_ONCE(e->quiet_until_ns, now + NVME_EARLY_IRQ_QUIET_NS);
		return;
	}
	e->mark.irqs = s.irqs;
	e->mark.head = s.head;
	e->armed_ns = now;
	e->delay_ns = us * NSEC_PER_USEC;
	hrtimer_start_range_ns(&e->timer, ns_to_ktime(e->delay_ns),
			       e->delay_ns / 4, HRTIMER_MODE_REL_PINNED_HARD);
}

/* Context: hardirq (hard hrtimer). */
static enum hrtimer_restart early_irq_timer_fn(struct hrtimer *timer)
{
	struct nvme_early_irq *e = container_of(timer, struct nvme_early_irq, timer);
	struct nvme_lost_irq_sample s = { };
	u64 now;

	if (!READ_ONCE(e->active) || !READ_ONCE(nvme_early_irq_recheck_us))
		return HRTIMER_NORESTART;
	/* the empty run's mark: it armed the timer, and waits while it runs */
	nvme_pci_cq_sample(e->nvmeq, &s);
	now = ktime_get_ns();
	WRITE_ONCE(e->rechecks, e->rechecks + 1);
	switch (nvme_early_irq_judge(&e->mark, &s)) {
	case NVME_EARLY_IRQ_FOUND:
		WRITE_ONCE(e->found, e->found + 1);
		/*
		 * The verdict for the work, which an empty run may not change
		 * (it may arm the timer again once this returns); queue_work()
		 * orders it.
		 */
		WRITE_ONCE(e->found_wait_ns, now - e->armed_ns);
		WRITE_ONCE(e->found_mark.irqs, e->mark.irqs);
		WRITE_ONCE(e->found_mark.head, e->mark.head);
		nvme_lost_irq_queue_work(&e->work);
		/* held off as if fruitless; a recovery by the work ends it */
		break;
	case NVME_EARLY_IRQ_WAIT:
		if (now - e->armed_ns + 2 * e->delay_ns <= NVME_EARLY_IRQ_MAX_NS) {
			e->delay_ns *= 2;
			hrtimer_forward_now(timer, ns_to_ktime(e->delay_ns));
			return HRTIMER_RESTART;
		}
		break;
	case NVME_EARLY_IRQ_NONE:
		break;
	}
	WRITE_ONCE(e->quiet_until_ns, now + READ_ONCE(e->quiet_ns));
	WRITE_ONCE(e->quiet_ns, nvme_early_irq_hold_off(READ_ONCE(e->quiet_ns)));
	return HRTIMER_NORESTART;
}

/* Context: process, from the recovery work. */
static void early_irq_report(struct nvme_early_irq *e, u64 wait_ns)
{
	struct nvme_lost_irq *li = container_of(e, struct nvme_lost_irq, early);
	struct nvme_lost_irq_ctrl *lc = li->ctrl;
	int irq = nvme_pci_irq(e->nvmeq);
	struct irq_data *d = irq_get_irq_data(irq);
	const char *chip = d && d->chip ? d->chip->name : "?";
	const char *domain = d && d->domain && d->domain->name ? d->domain->name : "?";

	if (nvme_pci_warn_once(lc->warned, NVME_PCI_WARN_EARLY_IRQ))
		dev_warn(lc->dev,
			 "completion interrupt arrived before its completion was visible on queue %u, irq %d (chip %s, domain %s): reaped %llu us later by a re-check (nvme.early_irq_recheck_us)%s\n",
			 nvme_pci_qid(e->nvmeq), irq, chip, domain,
			 div_u64(wait_ns, NSEC_PER_USEC),
			 strstr(chip, "VMD") ?
			 "; VMD: the vmd quirk covers Meteor/Arrow Lake only, VMD off avoids it" :
			 "");
	else if (__ratelimit(&lc->rs_early))
		dev_info(lc->dev,
			 "early completion interrupts: %llu recoveries on queue %u so far (irq %d)\n",
			 e->recoveries, nvme_pci_qid(e->nvmeq), irq);
}

/* Context: process (the lost-interrupt workqueue), one at a time per queue. */
static void early_irq_work_fn(struct work_struct *work)
{
	struct nvme_early_irq *e = container_of(work, struct nvme_early_irq, work);
	struct nvme_early_irq_mark mark = {
		.irqs = READ_ONCE(e->found_mark.irqs),
		.head = READ_ONCE(e->found_mark.head),
	};
	struct nvme_lost_irq_sample s = { };
	u64 wait_ns = READ_ONCE(e->found_wait_ns);
	int reaped;

	if (!READ_ONCE(e->active))
		return;
	/* an interrupt that came since has reaped it: nothing was lost */
	nvme_pci_cq_sample(e->nvmeq, &s);
	if (nvme_early_irq_judge(&mark, &s) != NVME_EARLY_IRQ_FOUND)
		return;
	reaped = nvme_poll_irqdisable(e->nvmeq);
	if (reaped <= 0)
		return;
	/* the erratum is here: re-check the next empty run at once */
	WRITE_ONCE(e->quiet_ns, NVME_EARLY_IRQ_QUIET_NS);
	WRITE_ONCE(e->quiet_until_ns, 0);
	WRITE_ONCE(e->recoveries, e->recoveries + 1);
	WRITE_ONCE(e->reaped, e->reaped + reaped);
	if (wait_ns > e->max_wait_ns)
		WRITE_ONCE(e->max_wait_ns, wait_ns);
	trace_nvme_early_irq_recovered(dev_name(container_of(e, struct nvme_lost_irq,
							     early)->ctrl->dev),
				       nvme_pci_qid(e->nvmeq), reaped,
				       div_u64(wait_ns, NSEC_PER_USEC));
	early_irq_report(e, wait_ns);
}

/**
 * nvme_early_irq_start() - start re-checking an I/O queue
 * @e: the queue's re-check state, in its struct nvme_lost_irq
 * @nvmeq: the queue
 *
 * Call before the queue's interrupt is requested.  Context: process.
 */
void nvme_early_irq_start(struct nvme_early_irq *e, struct nvme_queue *nvmeq)
{
	/*
	 * Pinned to the handler's CPU: the re-check follows the vector, and
	 * its work runs there, ahead of the tasks the completions wake.
	 */
	hrtimer_setup(&e->timer, early_irq_timer_fn, CLOCK_MONOTONIC,
		      HRTIMER_MODE_REL_PINNED_HARD);
	INIT_WORK(&e->work, early_irq_work_fn);
	e->nvmeq = nvmeq;
	e->quiet_until_ns = 0;
	e->quiet_ns = NVME_EARLY_IRQ_QUIET_NS;
	WRITE_ONCE(e->active, true);
}

/**
 * nvme_early_irq_stop() - stop re-checking a queue
 * @e: the queue's re-check state
 *
 * Call before the queue's interrupt is freed; once it returns no re-check
 * or recovery runs and none can be armed.  Context: process; may sleep.
 */
void nvme_early_irq_stop(struct nvme_early_irq *e)
{
	if (!e->nvmeq)
		return;
	WRITE_ONCE(e->active, false);
	/* a handler past its test of @active arms the timer before this ends */
	synchronize_irq(nvme_pci_irq(e->nvmeq));
	hrtimer_cancel(&e->timer);
	cancel_work_sync(&e->work);
}

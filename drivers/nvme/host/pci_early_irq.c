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
 * than one command is outstanding (nvme_early_irq_suspect()).  Such a run
 * costs a read of the queue's two indices.  Others are the replay after a
 * vector was disabled, and behind VMD one message runs the handlers of
 * every vector it serves.  A chain of re-checks holds the queue off for
 * 1 ms, twice as long after each in a row up to 16 ms, until one ends in a
 * recovery (a find the work does not confirm is another vector's message
 * too) or one begins more than 16 ms after the last hold-off ended
 * (nvme_early_irq_back_off()); a queue whose interrupt is delayed on
 * purpose is held off for 1 ms.  Meanwhile an empty run costs the indices
 * and a clock read.  That bounds the cost to one chain of re-checks (at
 * most four timer interrupts, each a few cache-line reads) per queue per
 * millisecond and a bit, and to one per 16 ms where empty runs keep coming
 * and the re-checks recover nothing, as behind VMD.  The price: there, a
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
	if (us) {
		nvme_pci_counting_start();
		static_branch_enable(&nvme_early_irq_on);
	} else {
		static_branch_disable(&nvme_early_irq_on);
		nvme_pci_counting_stop();
	}
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
nvme_early_irq_judge(const struct nvme_cq_mark *mark,
		     const struct nvme_lost_irq_sample *s)
{
	if (nvme_cq_moved(mark, &s->at))
		return NVME_EARLY_IRQ_NONE;
	if (s->pending)
		return NVME_EARLY_IRQ_FOUND;
	return s->outstanding ? NVME_EARLY_IRQ_WAIT : NVME_EARLY_IRQ_NONE;
}
EXPORT_SYMBOL_IF_KUNIT(nvme_early_irq_judge);

/**
 * nvme_early_irq_suspect() - is an empty handler run worth a re-check?
 * @owed: the run before it reaped more than one completion
 * @outstanding: commands outstanding on the queue now
 *
 * After a run that reaped several completions, an empty run is most likely
 * the message of one of them, raised while that run reaped it.  While
 * another command is outstanding it arms nothing: if this message was an
 * early one after all, the next command's message reaps what it missed,
 * or, if that command is slow (a flush), the missed command's early
 * deadline does (nvme.lost_irq_deadline_ms).  With one command left, its
 * message may be the early one.  Pure function of its arguments.
 * Context: any.
 *
 * Return: true if the run should arm a re-check, hold-offs aside.
 */
bool nvme_early_irq_suspect(bool owed, u32 outstanding)
{
	return outstanding && !(owed && outstanding > 1);
}
EXPORT_SYMBOL_IF_KUNIT(nvme_early_irq_suspect);

/**
 * nvme_early_irq_back_off() - hold a queue off after a chain of re-checks
 * @q: the queue's hold-off, updated
 * @armed_ns: when the chain began (the empty run that armed it)
 * @now_ns: now, its end
 *
 * A chain that began within NVME_EARLY_IRQ_QUIET_MAX_NS of the end of the
 * last hold-off came in a row: the queue is held off for @q->next_ns, and
 * the next chain in a row twice as long, up to NVME_EARLY_IRQ_QUIET_MAX_NS.
 * One that began after a longer gap starts again at NVME_EARLY_IRQ_QUIET_NS.
 * Touches only *@q.  Context: any.
 */
void nvme_early_irq_back_off(struct nvme_early_irq_quiet *q, u64 armed_ns,
			     u64 now_ns)
{
	u64 hold = q->next_ns;

	if (armed_ns > q->until_ns + NVME_EARLY_IRQ_QUIET_MAX_NS)
		hold = NVME_EARLY_IRQ_QUIET_NS;
	q->until_ns = now_ns + hold;
	q->next_ns = clamp(hold * 2, NVME_EARLY_IRQ_QUIET_NS,
			   NVME_EARLY_IRQ_QUIET_MAX_NS);
}
EXPORT_SYMBOL_IF_KUNIT(nvme_early_irq_back_off);

/*
 * Context: the queue's interrupt handler in hardirq context (nvme_irq(), or
 * nvme_irq_check() in threaded mode), one at a time per queue.  Writes only
 * what changed: @owed when it was set, and more once the run arms a chain
 * or finds the queue held on purpose.
 */
void __nvme_early_irq_empty(struct nvme_early_irq *e)
{
	struct nvme_lost_irq_sample s = { };
	u64 us = READ_ONCE(nvme_early_irq_recheck_us);
	bool owed = e->owed;
	u64 now;

	if (owed)
		e->owed = false;
	if (!READ_ONCE(e->active) || !us ||
	    !nvme_early_irq_suspect(owed, nvme_pci_cq_outstanding(e->nvmeq)))
		return;
	/* armed or running: one chain at a time per queue */
	if (hrtimer_active(&e->timer))
		return;
	now = ktime_get_ns();
	/*
	 * A chain's end writes it before the timer stops running, which
	 * hrtimer_active() reads with the base's sequence count.
	 */
	if (now < READ_ONCE(e->quiet.until_ns) || now < e->hold_until_ns)
		return;
	nvme_pci_cq_sample(e->nvmeq, &s);
	WRITE_ONCE(e->empty, e->empty + 1);
	if (s.hold_ns) {
		/* held on purpose: the poller allows for it, this cannot */
		e->hold_until_ns = now + NVME_EARLY_IRQ_QUIET_NS;
		return;
	}
	e->mark = s.at;
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
	enum nvme_early_irq_verdict verdict;
	struct nvme_early_irq_quiet q;
	u64 now;

	if (!READ_ONCE(e->active) || !READ_ONCE(nvme_early_irq_recheck_us))
		return HRTIMER_NORESTART;
	/* the empty run's mark: it armed the timer, and waits while it runs */
	nvme_pci_cq_sample(e->nvmeq, &s);
	now = ktime_get_ns();
	WRITE_ONCE(e->rechecks, e->rechecks + 1);
	verdict = nvme_early_irq_judge(&e->mark, &s);
	if (verdict == NVME_EARLY_IRQ_WAIT &&
	    now - e->armed_ns + 2 * e->delay_ns <= NVME_EARLY_IRQ_MAX_NS) {
		e->delay_ns *= 2;
		hrtimer_forward_now(timer, ns_to_ktime(e->delay_ns));
		return HRTIMER_RESTART;
	}
	/*
	 * The chain ends: held off as if fruitless; a recovery by the work
	 * lifts it, after this (queue_work() orders them).  Only a chain
	 * armed once this hold-off ended can end while a late work still
	 * runs: the queue is then held off as after that chain, up to
	 * 16 ms, instead of not at all.
	 */
	q.until_ns = READ_ONCE(e->quiet.until_ns);
	q.next_ns = READ_ONCE(e->quiet.next_ns);
	nvme_early_irq_back_off(&q, e->armed_ns, now);
	WRITE_ONCE(e->quiet.next_ns, q.next_ns);
	WRITE_ONCE(e->quiet.until_ns, q.until_ns);
	if (verdict == NVME_EARLY_IRQ_FOUND) {
		WRITE_ONCE(e->found, e->found + 1);
		/*
		 * The verdict for the work, which an empty run may not change
		 * (it may arm the timer again once this returns); queue_work()
		 * orders it.
		 */
		WRITE_ONCE(e->found_wait_ns, now - e->armed_ns);
		nvme_cq_mark_copy(&e->found_mark, &e->mark);
		nvme_lost_irq_queue_work(&e->work);
	}
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
	struct nvme_lost_irq_sample s = { };
	struct nvme_cq_mark mark;
	u64 wait_ns = READ_ONCE(e->found_wait_ns);
	int reaped;

	if (!READ_ONCE(e->active))
		return;
	/* an interrupt that came since has reaped it: nothing was lost */
	nvme_cq_mark_copy(&mark, &e->found_mark);
	nvme_pci_cq_sample(e->nvmeq, &s);
	if (nvme_early_irq_judge(&mark, &s) != NVME_EARLY_IRQ_FOUND)
		return;
	reaped = nvme_pci_reap_at(e->nvmeq, &mark, NULL);
	if (reaped <= 0)
		return;
	/*
	 * The erratum is here: re-check the next empty run at once.  The
	 * next chain's end starts the back-off again, the gap since 0 being
	 * more than NVME_EARLY_IRQ_QUIET_MAX_NS.
	 */
	WRITE_ONCE(e->quiet.until_ns, 0);
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
	e->quiet.until_ns = 0;
	e->quiet.next_ns = NVME_EARLY_IRQ_QUIET_NS;
	e->hold_until_ns = 0;
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

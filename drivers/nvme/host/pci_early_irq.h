/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Completion interrupts that arrive before their completion is visible.
 *
 * A handler run that finds nothing on an I/O queue with commands
 * outstanding is the signature of a message that overtook the completion
 * queue entry it signals (Intel VMD errata MTL016/ARL004, other bridges):
 * the queue is looked at again shortly after, and a completion that
 * appeared meanwhile with no interrupt is reaped.  A handler run that finds
 * a completion pays the test of one flag.
 */
#ifndef _NVME_PCI_EARLY_IRQ_H
#define _NVME_PCI_EARLY_IRQ_H

#include <linux/hrtimer.h>
#include <linux/jump_label.h>
#include <linux/types.h>
#include <linux/workqueue.h>

#include "pci.h"

enum nvme_early_irq_verdict {
	/* an interrupt came since, or the queue moved: nothing to do */
	NVME_EARLY_IRQ_NONE,
	/* nothing visible yet and nothing came: look again later */
	NVME_EARLY_IRQ_WAIT,
	/* a completion appeared with no interrupt after the empty run */
	NVME_EARLY_IRQ_FOUND,
};

enum nvme_early_irq_verdict
nvme_early_irq_judge(const struct nvme_cq_mark *mark,
		     const struct nvme_lost_irq_sample *s);

/**
 * struct nvme_early_irq_quiet - a queue's hold-off after chains of re-checks
 * @until_ns: no chain is armed before this: it bounds what empty runs
 *	cost where they are common (one VMD message runs the handlers of
 *	every vector it serves)
 * @next_ns: the hold-off after the next chain in a row
 */
struct nvme_early_irq_quiet {
	u64 until_ns;
	u64 next_ns;
};

bool nvme_early_irq_suspect(bool owed, u32 outstanding);
void nvme_early_irq_back_off(struct nvme_early_irq_quiet *q, u64 armed_ns,
			     u64 now_ns);

/**
 * struct nvme_early_irq - the re-check of one I/O queue
 * @timer: one-shot, armed by an empty handler run; it looks again after
 *	twice the delay while nothing is visible, within NVME_EARLY_IRQ_MAX_NS
 *	of that run
 * @work: reaps what a re-check found, with the vector disabled
 * @nvmeq: the queue
 * @mark: the queue as the empty run that armed @timer left it
 * @armed_ns: when that run was
 * @delay_ns: the delay of the re-check now armed
 * @quiet: the hold-off after chains of re-checks; written by the timer at
 *	a chain's end, and its @until_ns by the work after a recovery
 * @hold_until_ns: after an empty run on a queue whose interrupt is
 *	delayed on purpose, none is armed before this (the handler alone
 *	writes it: such a queue never moves @quiet)
 * @found_mark: @mark as the re-check that found a completion saw it, for
 *	the work (an empty run may arm the timer again meanwhile)
 * @found_wait_ns: how long after its empty run that re-check was
 * @active: started and not stopped
 * @owed: the last handler run reaped more than one completion: the next
 *	empty run is likely the message of one of them, and arms nothing
 *	while another command is outstanding (nvme_early_irq_suspect())
 * @empty: statistics, single writer each: empty runs suspected
 *	(nvme_early_irq_suspect()), outside a hold-off
 * @rechecks: re-checks made
 * @found: re-checks that found a completion with no interrupt since
 * @recoveries: recoveries that reaped at least one completion
 * @reaped: completions they reaped
 * @max_wait_ns: longest wait from an empty run to the find of its
 *	completion
 */
struct nvme_early_irq {
	struct hrtimer timer;
	struct work_struct work;
	struct nvme_queue *nvmeq;
	struct nvme_cq_mark mark;
	u64 armed_ns;
	u64 delay_ns;
	struct nvme_early_irq_quiet quiet;
	u64 hold_until_ns;
	struct nvme_cq_mark found_mark;
	u64 found_wait_ns;
	bool active;
	bool owed;
	u64 empty;
	u64 rechecks;
	u64 found;
	u64 recoveries;
	u64 reaped;
	u64 max_wait_ns;
};

/* The longest an empty run's completion is waited for: the poller's then */
#define NVME_EARLY_IRQ_MAX_NS		(1 * NSEC_PER_MSEC)
/*
 * No re-check for this long after a chain of them, twice as long after
 * each in a row, up to NVME_EARLY_IRQ_QUIET_MAX_NS: where most empty runs
 * are another vector's message (VMD), a queue makes at most one chain per
 * 16 ms.  A recovery starts again at 1 ms and lifts the hold-off; a chain
 * that begins more than 16 ms after the last hold-off ended starts again
 * at 1 ms.
 */
#define NVME_EARLY_IRQ_QUIET_NS		(1 * NSEC_PER_MSEC)
#define NVME_EARLY_IRQ_QUIET_MAX_NS	(16 * NSEC_PER_MSEC)

extern unsigned int nvme_early_irq_recheck_us;
/* nvme.early_irq_recheck_us is not 0: empty runs arm a re-check */
DECLARE_STATIC_KEY_TRUE(nvme_early_irq_on);

void nvme_early_irq_start(struct nvme_early_irq *e, struct nvme_queue *nvmeq);
void nvme_early_irq_stop(struct nvme_early_irq *e);
void __nvme_early_irq_empty(struct nvme_early_irq *e);

/**
 * nvme_early_irq_empty() - the queue's handler ran and found nothing
 * @e: the queue's re-check state
 *
 * Context: the queue's interrupt handler in hardirq context (the primary
 * one in threaded mode).  Costs a patched-out branch when the re-check is
 * off; nothing on a handler run that found a completion, as the caller does
 * not call it then.
 */
static inline void nvme_early_irq_empty(struct nvme_early_irq *e)
{
	if (static_branch_likely(&nvme_early_irq_on))
		__nvme_early_irq_empty(e);
}

/**
 * nvme_early_irq_ran() - the queue's handler ran
 * @e: the queue's re-check state
 * @found: the completions it reaped
 *
 * The messages of completions that came while a run reaped them raise one
 * more run, which finds nothing: at depth that is most empty runs of a
 * healthy queue.  A run that reaped more than one completion lets the next
 * empty run pass while another command is outstanding (its message, or if
 * it is slow the early deadline, reaps what the empty run missed); one that
 * reaped one (every run at QD1, and the first after idle) does not.  Writes
 * only when that changes.
 *
 * Context: the queue's interrupt handler in hardirq context, not threaded.
 */
static inline void nvme_early_irq_ran(struct nvme_early_irq *e, int found)
{
	if (!static_branch_likely(&nvme_early_irq_on))
		return;
	if (!found)
		__nvme_early_irq_empty(e);
	else if (e->owed != (found > 1))
		e->owed = found > 1;
}

#endif /* _NVME_PCI_EARLY_IRQ_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Recovery of lost completion interrupts for nvme-pci.
 *
 * Every I/O command first gets an early deadline, nvme.lost_irq_deadline_ms:
 * when it passes, the command's CQ is polled once, as nvme_timeout() would
 * poll it 30 s later.  Once a controller has had a completion recovered, or
 * with nvme.lost_irq_poll_always, a completion queue of it with commands
 * outstanding is checked every nvme.lost_irq_poll_ms.  A completion that
 * stays posted at the same CQ head across two checks, with no interrupt
 * serviced in between, was not signalled: it is reaped by polling from
 * process context, with the vector disabled.
 */
#ifndef _NVME_PCI_LOST_IRQ_H
#define _NVME_PCI_LOST_IRQ_H

#include <linux/blk-mq.h>
#include <linux/device.h>
#include <linux/fault-inject.h>
#include <linux/hrtimer.h>
#include <linux/jump_label.h>
#include <linux/ratelimit.h>
#include <linux/smp.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/workqueue.h>

#include "pci.h"
#include "pci_debugfs.h"
#include "pci_early_irq.h"

/**
 * struct nvme_lost_irq_sample - what one check sees of a completion queue
 * @now_ns: time of the check
 * @at: where the queue stands
 * @outstanding: commands submitted and not yet reaped
 * @pending: a completion is posted at its head
 * @hold_ns: how long the queue's interrupt may be held back on purpose
 *	(interrupt moderation); 0 if it is signalled at once
 * @period_ns: the checks' period; a check that comes more than two and a half
 *	periods after the previous one ran late (0: never judged late)
 */
struct nvme_lost_irq_sample {
	u64 now_ns;
	u64 hold_ns;
	u64 period_ns;
	struct nvme_cq_mark at;
	u32 outstanding;
	bool pending;
};

/**
 * struct nvme_lost_irq_watch - what the checks of a queue remember
 * @since_ns: when the completion now at the head was first seen posted, 0
 *	if none is
 * @at: where the queue stood then
 * @last_ns: time of the previous check, 0 before the first and after idle
 */
struct nvme_lost_irq_watch {
	u64 since_ns;
	u64 last_ns;
	struct nvme_cq_mark at;
};

enum nvme_lost_irq_verdict {
	NVME_LOST_IRQ_IDLE,	/* nothing outstanding: stop checking */
	NVME_LOST_IRQ_BUSY,	/* keep checking */
	NVME_LOST_IRQ_STUCK,	/* a completion waits with no interrupt: reap it */
	/*
	 * It would be stuck, but this check ran late: the CPU or the host
	 * stalled, so the interrupt may only be late too.  Judged again
	 * from this check.
	 */
	NVME_LOST_IRQ_LATE,
};

enum nvme_lost_irq_verdict
nvme_lost_irq_check(struct nvme_lost_irq_watch *w,
		    const struct nvme_lost_irq_sample *s, u64 hold_ns);

/**
 * struct nvme_lost_irq_ctrl - per-controller state of the poller
 * @ndev: the controller, whose queues the statistics walk
 * @dev: the controller's device, for messages
 * @warned: the controller's warn-once bitmap (enum nvme_pci_warn)
 * @rs: rate limit of the messages after it
 * @rs_blocked: rate limit of the messages of recoveries blamed on a CPU
 * @rs_early: rate limit of the early-interrupt messages after the first
 * @rs_deadline: rate limit of the early-deadline messages after the first
 * @armed: 1 once a completion of the controller was recovered: its busy
 *	queues are checked every nvme.lost_irq_poll_ms from then on
 * @armed_knob: debugfs lost_irq_armed, which sets @armed (0 or 1)
 */
struct nvme_lost_irq_ctrl {
	struct nvme_dev *ndev;
	struct device *dev;
	unsigned long *warned;
	struct ratelimit_state rs;
	struct ratelimit_state rs_blocked;
	struct ratelimit_state rs_early;
	struct ratelimit_state rs_deadline;
	unsigned int armed;
	struct nvme_pci_knob armed_knob;
};

/**
 * struct nvme_lost_irq_probe - asks a CPU whether it takes interrupts
 * @csd: the function call (an IPI) that asks
 * @sent_ns: when the last one was sent
 * @answered_ns: when the CPU ran it; 0 until then
 * @in_flight: sent and not run yet: @csd may not be sent again
 *
 * A completion whose interrupt does not come may have a CPU behind it that
 * runs with interrupts off (a long critical section, a stopped vCPU): its
 * interrupt is late, not lost.  The recovery asks the vector's CPU with an
 * IPI before it blames the interrupt path.
 */
struct nvme_lost_irq_probe {
	call_single_data_t csd;
	u64 sent_ns;
	u64 answered_ns;
	bool in_flight;
};

/**
 * struct nvme_lost_irq - per-queue state of the poller
 * @timer: the periodic check, armed only while commands are outstanding
 * @work: the recovery, in process context
 * @nvmeq: the queue; NULL until it is first started
 * @ctrl: the controller's state
 * @watch: what the checks remember
 * @aer_sent: asynchronous event requests submitted (admin queue, sq_lock)
 * @aer_done: asynchronous event requests completed (completion path)
 * @level: the vector is a level-triggered line (INTx)
 * @active: started and not stopped; changed under the queue's sq_lock
 * @stall_ns: how long the completion the last check found stuck had waited
 * @stuck: where the queue stood when that check found it stuck: the
 *	recovery reaps only if it has not moved since
 * @checks: statistics, single writer each: checks made
 * @delayed: checks that ran more than two and a half periods after the
 *	previous one
 * @late: of those, the ones that would have found a completion stuck
 * @recoveries: recoveries that reaped at least one completion
 * @reaped: completions reaped by recoveries
 * @max_stall_ns: longest wait of a recovered completion
 * @deadline_polls: early deadlines of the queue's commands that polled it
 * @deadline_recoveries: of those, the ones that found their command complete
 * @deadline_max_ms: longest wait of a command such a poll found complete
 * @probe: asks the vector's CPU whether it takes interrupts
 * @cpu_blocked: recoveries whose completion waited for a CPU that took no
 *	interrupt: no interrupt was lost
 * @early: the re-check of an I/O queue whose handler found nothing
 *	(pci_early_irq.c)
 */
struct nvme_lost_irq {
	struct hrtimer timer;
	struct work_struct work;
	struct nvme_queue *nvmeq;
	struct nvme_lost_irq_ctrl *ctrl;
	struct nvme_lost_irq_watch watch;
	u32 aer_sent;
	u32 aer_done;
	bool level;
	bool active;
	u64 stall_ns;
	struct nvme_cq_mark stuck;
	u64 checks;
	u64 delayed;
	u64 late;
	u64 recoveries;
	u64 reaped;
	u64 max_stall_ns;
	struct nvme_lost_irq_probe probe;
	u64 cpu_blocked;
	u64 deadline_polls;
	u64 deadline_recoveries;
	u64 deadline_max_ms;
	struct nvme_early_irq early;
};

extern unsigned int nvme_lost_irq_poll_ms;
extern unsigned int nvme_lost_irq_poll_always;
/*
 * nvme.lost_irq_poll_ms is not 0, and nvme.lost_irq_poll_always is set or a
 * controller is armed: submissions arm the checks
 */
DECLARE_STATIC_KEY_FALSE(nvme_lost_irq_on);
/* nvme.lost_irq_deadline_ms is not 0: I/O commands get the early deadline */
DECLARE_STATIC_KEY_TRUE(nvme_lost_irq_deadline_on);

unsigned long nvme_lost_irq_deadline(unsigned int deadline_ms,
				     unsigned long io_timeout, bool watched);
bool nvme_lost_irq_in_deadline(unsigned long timeout, unsigned long io_timeout);
void __nvme_lost_irq_deadline_start(struct request *req);
bool nvme_lost_irq_deadline_passed(struct nvme_queue *nvmeq,
				   struct request *req,
				   enum blk_eh_timer_return *ret);
void nvme_lost_irq_ctrl_arm(struct nvme_lost_irq_ctrl *lc);

int nvme_lost_irq_init(void);

void nvme_lost_irq_probe_init(struct nvme_lost_irq_probe *p);
void nvme_lost_irq_probe_sync(struct nvme_lost_irq_probe *p);
bool nvme_lost_irq_probe_cpu_responds(struct nvme_lost_irq_probe *p, int cpu,
				      u64 prompt_ns);
void nvme_lost_irq_exit(void);
void nvme_lost_irq_ctrl_init(struct nvme_lost_irq_ctrl *lc,
			     struct nvme_dev *ndev, struct device *dev,
			     unsigned long *warned, struct dentry *parent);
void nvme_lost_irq_start(struct nvme_lost_irq *li,
			 struct nvme_lost_irq_ctrl *lc, struct nvme_queue *nvmeq);
void nvme_lost_irq_stop(struct nvme_lost_irq *li);
void nvme_lost_irq_start_timer(struct nvme_lost_irq *li);
void nvme_lost_irq_queue_work(struct work_struct *work);

#ifdef CONFIG_FAULT_INJECTION
extern struct fault_attr nvme_fail_lost_irq;
bool nvme_lost_irq_inject(struct nvme_lost_irq *li);
#endif
void nvme_lost_irq_inject_init(void);

/**
 * nvme_lost_irq_dropped() - does fault injection drop this interrupt?
 * @li: the queue's poller state
 *
 * Context: the queue's interrupt handler (hardirq, or its primary handler in
 * threaded mode).
 *
 * Return: true if the handler must return at once, without looking at the
 * CQ or counting the interrupt, as if it never came.
 */
static inline bool nvme_lost_irq_dropped(struct nvme_lost_irq *li)
{
#ifdef CONFIG_FAULT_INJECTION
	return unlikely(READ_ONCE(nvme_fail_lost_irq.probability)) &&
	       nvme_lost_irq_inject(li);
#else
	return false;
#endif
}

/**
 * nvme_lost_irq_deadline_start() - give an I/O command its early deadline
 * @req: the command, about to be started
 *
 * Context: the submission path, before blk_mq_start_request().  A
 * patched-out branch when nvme.lost_irq_deadline_ms is 0; else a call that
 * sets @req->timeout.
 */
static inline void nvme_lost_irq_deadline_start(struct request *req)
{
	if (static_branch_likely(&nvme_lost_irq_deadline_on))
		__nvme_lost_irq_deadline_start(req);
}

/**
 * nvme_lost_irq_arm() - commands were submitted: make sure a check comes
 * @li: the queue's poller state
 *
 * Context: any, with the queue's sq_lock held.  A patched-out branch until
 * some controller needs the poller; then, on a queue the poller watches, a
 * full barrier and a test of the timer, and a test of two flags on one it
 * does not (a controller not armed, polled queues).
 */
static inline void nvme_lost_irq_arm(struct nvme_lost_irq *li)
{
	if (!static_branch_unlikely(&nvme_lost_irq_on) || !li->active ||
	    !(READ_ONCE(li->ctrl->armed) || READ_ONCE(nvme_lost_irq_poll_always)))
		return;
	/*
	 * The submission (sq_tail) before the timer test, paired with the
	 * barrier between the check's dequeue and its sample in
	 * lost_irq_timer_fn(): either the check counts this command, or this
	 * finds the timer idle and starts it.  Without the pair both may read
	 * the old value (store buffering) and the command waits for
	 * io_timeout.
	 */
	smp_mb();
	if (READ_ONCE(nvme_lost_irq_poll_ms) && !hrtimer_is_queued(&li->timer))
		nvme_lost_irq_start_timer(li);
}

/* Asynchronous event requests never complete on their own: not outstanding. */
static inline void nvme_lost_irq_aer_sent(struct nvme_lost_irq *li)
{
	li->aer_sent++;
}

static inline void nvme_lost_irq_aer_done(struct nvme_lost_irq *li)
{
	li->aer_done++;
}

#endif /* _NVME_PCI_LOST_IRQ_H */

// SPDX-License-Identifier: GPL-2.0
/*
 * Recovery of lost completion interrupts for nvme-pci.
 *
 * Behind Intel VMD and on some broken MSI routings a controller posts a
 * completion and the interrupt never reaches the CPU; without this, the
 * command then waits for the whole io_timeout (30 s) before nvme_timeout()
 * finds it completed.  Recovery comes in two stages, so that a controller
 * that never loses one pays nothing on its hot path:
 *  - every I/O command the driver sends starts with an early deadline,
 *    nvme.lost_irq_deadline_ms (500), as its blk-mq timeout: the timer
 *    every command arms anyway fires then, about a second late (blk-mq
 *    rounds it up), and the queue is polled once.  A command found
 *    complete lost its interrupt; one still outstanding gets the whole
 *    io_timeout from then on;
 *  - once a controller has had a completion recovered by a deadline, or
 *    with nvme.lost_irq_poll_always, each of its interrupt-driven queues
 *    with commands outstanding is checked every nvme.lost_irq_poll_ms by
 *    a hard hrtimer.  The check reads the CQ head, the phase of the entry
 *    there and the count of interrupts serviced, nothing else: it never
 *    races the handler.  When a completion sits at the same head across
 *    two checks with no interrupt in between, a work item reaps the queue
 *    with the vector disabled and under cq_poll_lock, the way
 *    nvme_timeout() does, so no CQE is handled twice or skipped.  An idle
 *    queue has no timer: the next submission arms it.
 * Before it blames the interrupt path, the recovery asks the vector's CPU
 * with an IPI whether it takes interrupts at all: one that runs with
 * interrupts off holds its interrupts back, and none is lost.
 */
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/irq.h>
#include <linux/irqdomain.h>
#include <linux/ktime.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/seq_file.h>
#include <kunit/visibility.h>

#include "pci_lost_irq.h"
#include "pci_debugfs.h"

#define CREATE_TRACE_POINTS
#include "pci_trace.h"

#define NVME_LOST_IRQ_POLL_MS_MAX	1000

#define NVME_LOST_IRQ_DEADLINE_MS_MAX	60000

unsigned int nvme_lost_irq_poll_ms = 5;
unsigned int nvme_lost_irq_poll_always;
static unsigned int nvme_lost_irq_deadline_ms = 500;
DEFINE_STATIC_KEY_FALSE(nvme_lost_irq_on);
DEFINE_STATIC_KEY_TRUE(nvme_lost_irq_deadline_on);
/* a controller was armed since the module loaded */
static bool lost_irq_any_armed;
static DEFINE_MUTEX(lost_irq_key_lock);

/*
 * The poller's key follows its three inputs.  Off: submissions stop arming
 * the timer; a timer still armed finds the period 0 and ends.  Switched on
 * again, the first check comes long after the last one: it is late, and
 * the wait is measured from it.  Context: process.
 */
static void lost_irq_key_update(void)
{
	mutex_lock(&lost_irq_key_lock);
	if (READ_ONCE(nvme_lost_irq_poll_ms) &&
	    (READ_ONCE(nvme_lost_irq_poll_always) || READ_ONCE(lost_irq_any_armed)))
		static_branch_enable(&nvme_lost_irq_on);
	else
		static_branch_disable(&nvme_lost_irq_on);
	mutex_unlock(&lost_irq_key_lock);
}

/* The poller reads the handler's counts while its period is not 0. */
static void lost_irq_knob_changed(unsigned int val)
{
	bool on = READ_ONCE(nvme_lost_irq_poll_ms);

	if (on)
		nvme_pci_counting_start();
	lost_irq_key_update();
	if (!on)
		nvme_pci_counting_stop();
}

NVME_PCI_KNOB(lost_irq_poll_ms, nvme_lost_irq_poll_ms, 0,
	      NVME_LOST_IRQ_POLL_MS_MAX, lost_irq_knob_changed);
MODULE_PARM_DESC(lost_irq_poll_ms,
		 "check the busy queues of a controller that lost a completion interrupt every this many ms (0-1000, 0 = off, default 5)");
NVME_PCI_KNOB(lost_irq_poll_always, nvme_lost_irq_poll_always, 0, 1,
	      lost_irq_knob_changed);
MODULE_PARM_DESC(lost_irq_poll_always,
		 "check the busy queues of every controller, not only of those that lost a completion interrupt (0-1, default 0)");

static void lost_irq_deadline_changed(unsigned int ms)
{
	if (ms)
		static_branch_enable(&nvme_lost_irq_deadline_on);
	else
		static_branch_disable(&nvme_lost_irq_deadline_on);
}

NVME_PCI_KNOB(lost_irq_deadline_ms, nvme_lost_irq_deadline_ms, 0,
	      NVME_LOST_IRQ_DEADLINE_MS_MAX, lost_irq_deadline_changed);
MODULE_PARM_DESC(lost_irq_deadline_ms,
		 "poll an I/O command's queue once when it is outstanding this many ms, then give it io_timeout (0-60000, 0 = off, default 500)");

/* Arms the poller's key for an armed controller, in process context. */
static void lost_irq_key_work_fn(struct work_struct *work)
{
	lost_irq_key_update();
}

static DECLARE_WORK(lost_irq_key_work, lost_irq_key_work_fn);

/* debugfs lost_irq_armed written; under the knobs' mutex. */
static void lost_irq_armed_changed(unsigned int armed)
{
	if (armed)
		WRITE_ONCE(lost_irq_any_armed, true);
	lost_irq_key_update();
}

/**
 * nvme_lost_irq_ctrl_arm() - poll a controller that lost an interrupt
 * @lc: the controller's state
 *
 * A completion of the controller was found without its interrupt: check
 * its busy queues every nvme.lost_irq_poll_ms from now on, until it is
 * removed or debugfs lost_irq_armed is set to 0.  Logs when it arms.
 * Context: any.
 */
void nvme_lost_irq_ctrl_arm(struct nvme_lost_irq_ctrl *lc)
{
	if (READ_ONCE(lc->armed) || cmpxchg(&lc->armed, 0, 1))
		return;
	if (!READ_ONCE(lost_irq_any_armed)) {
		WRITE_ONCE(lost_irq_any_armed, true);
		/* the key's update sleeps: the caller may not */
		schedule_work(&lost_irq_key_work);
	}
	if (READ_ONCE(nvme_lost_irq_poll_ms))
		dev_warn(lc->dev,
			 "checking busy queues for lost completion interrupts every %u ms from now on (nvme.lost_irq_poll_ms)\n",
			 READ_ONCE(nvme_lost_irq_poll_ms));
}

/*
 * A check is due a period after the previous one and may run up to half a
 * period later: it then rides the timer interrupt of the tick or of another
 * timer instead of raising its own.
 */
#define LOST_IRQ_SLACK(period_ns)	((period_ns) / 2)

/*
 * More than a period later than the latest a check on time comes (a period
 * and its slack) after the previous one: the CPU or the host stalled.
 */
static bool nvme_lost_irq_ran_late(const struct nvme_lost_irq_watch *w,
				   const struct nvme_lost_irq_sample *s)
{
	return s->period_ns && w->last_ns && s->now_ns > w->last_ns &&
	       s->now_ns - w->last_ns >
			2 * s->period_ns + LOST_IRQ_SLACK(s->period_ns);
}

/**
 * nvme_lost_irq_check() - decide from one sample whether a CQ is stuck
 * @w: what the previous checks of the queue remember; updated
 * @s: this check's sample
 * @hold_ns: how long a completion may wait on purpose (interrupt moderation
 *	or coalescing) before it counts as stuck
 *
 * A completion is stuck when it was already posted at the same head at an
 * earlier check at least @hold_ns ago and no interrupt was serviced since,
 * judged only across checks that ran on time: if this one comes more than
 * two and a half periods after the previous one, the CPU or the host was
 * stalled (an SMI, a hypervisor's steal time) and the interrupt may merely
 * be late as well; the wait is then measured again from this check.
 * Pure function of its arguments.  Context: any.
 *
 * Return: what to do with the queue.
 */
enum nvme_lost_irq_verdict
nvme_lost_irq_check(struct nvme_lost_irq_watch *w,
		    const struct nvme_lost_irq_sample *s, u64 hold_ns)
{
	bool late = nvme_lost_irq_ran_late(w, s);

	w->last_ns = s->now_ns;
	if (!s->pending) {
		w->since_ns = 0;
		if (s->outstanding)
			return NVME_LOST_IRQ_BUSY;
		/* the timer stops: its next first check is not a late one */
		w->last_ns = 0;
		return NVME_LOST_IRQ_IDLE;
	}
	if (w->since_ns && !nvme_cq_moved(&w->at, &s->at)) {
		if (s->now_ns <= w->since_ns || s->now_ns - w->since_ns < hold_ns)
			return NVME_LOST_IRQ_BUSY;
		if (!late)
			return NVME_LOST_IRQ_STUCK;
		w->since_ns = s->now_ns;
		return NVME_LOST_IRQ_LATE;
	}
	/* first sight of this completion, or the queue moved since */
	w->since_ns = s->now_ns ?: 1;
	w->at = s->at;
	return NVME_LOST_IRQ_BUSY;
}
EXPORT_SYMBOL_IF_KUNIT(nvme_lost_irq_check);

/*
 * How long the vector's CPU may take to run an IPI before it counts as
 * taking no interrupts.  A CPU that takes interrupts runs one in
 * microseconds; under TCG, 1 of 64 healthy vCPUs answered later than 1 ms,
 * none later than 5 ms.
 */
#define LOST_IRQ_CPU_PROMPT_NS	(5 * NSEC_PER_MSEC)
/*
 * An answer later than this comes from a CPU that was not taking
 * interrupts when asked, and whose held-back interrupt may not have run
 * yet when the recovery looks: blamed on the CPU as well.
 */
#define LOST_IRQ_CPU_LATE_NS	(2 * NSEC_PER_MSEC)

/* Context: hardirq, on the CPU asked. */
static void lost_irq_probe_answer(void *info)
{
	struct nvme_lost_irq_probe *p = info;

	WRITE_ONCE(p->answered_ns, ktime_get_ns());
	/* the answer before the csd may be sent again */
	smp_store_release(&p->in_flight, false);
}

/**
 * nvme_lost_irq_probe_init() - set up a probe
 * @p: the probe
 *
 * Context: any; @p not in use.
 */
void nvme_lost_irq_probe_init(struct nvme_lost_irq_probe *p)
{
	INIT_CSD(&p->csd, lost_irq_probe_answer, p);
	p->in_flight = false;
}
EXPORT_SYMBOL_IF_KUNIT(nvme_lost_irq_probe_init);

/**
 * nvme_lost_irq_probe_sync() - wait until a probe sent is answered
 * @p: the probe
 *
 * A CPU going offline runs what was sent to it first, so this ends.
 * Context: process; may sleep.
 */
void nvme_lost_irq_probe_sync(struct nvme_lost_irq_probe *p)
{
	/* pairs with lost_irq_probe_answer(): the answer is in */
	while (smp_load_acquire(&p->in_flight))
		usleep_range(100, 200);
}
EXPORT_SYMBOL_IF_KUNIT(nvme_lost_irq_probe_sync);

/**
 * nvme_lost_irq_probe_cpu_responds() - does a CPU take interrupts now?
 * @p: the probe, not used concurrently
 * @cpu: the CPU to ask
 * @prompt_ns: how long it may take to answer
 *
 * Context: process; sleeps up to @prompt_ns.
 *
 * Return: true if @cpu ran the IPI within @prompt_ns, or cannot be asked
 * (offline: nothing to blame on it); false if it did not, or has not
 * answered the previous probe yet.
 */
bool nvme_lost_irq_probe_cpu_responds(struct nvme_lost_irq_probe *p, int cpu,
				      u64 prompt_ns)
{
	u64 deadline, answered;

	/* pairs with lost_irq_probe_answer(): the csd is free again */
	if (smp_load_acquire(&p->in_flight))
		return false;
	WRITE_ONCE(p->answered_ns, 0);
	p->sent_ns = ktime_get_ns();
	deadline = p->sent_ns + prompt_ns;
	WRITE_ONCE(p->in_flight, true);
	if (smp_call_function_single_async(cpu, &p->csd)) {
		WRITE_ONCE(p->in_flight, false);
		return true;
	}
	while (!READ_ONCE(p->answered_ns) && ktime_get_ns() < deadline)
		usleep_range(100, 200);
	answered = READ_ONCE(p->answered_ns);
	return answered && answered <= deadline;
}
EXPORT_SYMBOL_IF_KUNIT(nvme_lost_irq_probe_cpu_responds);

/* The CPU the queue's vector is delivered to, nr_cpu_ids if not known. */
static int lost_irq_vector_cpu(struct nvme_lost_irq *li)
{
	struct irq_data *d = irq_get_irq_data(nvme_pci_irq(li->nvmeq));
	const struct cpumask *m;

	m = d ? irq_data_get_effective_affinity_mask(d) : NULL;
	return m ? cpumask_first(m) : nr_cpu_ids;
}

/*
 * Do the stuck completions wait for their CPU rather than for a lost
 * interrupt?  They do if the vector's CPU does not run an IPI in time.
 * *@here: the vector's CPU is the one running the recovery (one queue per
 * CPU, the usual mapping): it takes interrupts, and has run any it held
 * back before its work could run, so it is not asked.  A vector of no
 * known CPU (no effective affinity) is not asked either: its completions
 * are blamed on the interrupt path.
 * Context: the recovery work, bound to the CPU its check ran on.
 */
static bool lost_irq_cpu_blocked(struct nvme_lost_irq *li, int *cpu,
				 bool *here)
{
	*cpu = lost_irq_vector_cpu(li);
	*here = *cpu == raw_smp_processor_id();
	if (*cpu >= nr_cpu_ids || *here)
		return false;
	if (!nvme_lost_irq_probe_cpu_responds(&li->probe, *cpu,
					      LOST_IRQ_CPU_PROMPT_NS))
		return true;
	/* 0 if it could not be asked (offline) */
	return READ_ONCE(li->probe.answered_ns) >
	       li->probe.sent_ns + LOST_IRQ_CPU_LATE_NS;
}

/*
 * How long the recovery leaves the queue to an interrupt that the vector's
 * CPU held back, once the CPU has answered.  The IPI outranks a device's
 * vector, so a CPU that turns interrupts back on runs the question first
 * and the held-back interrupt right after it; a reap in between would take
 * the completions and blame the interrupt.  Under TCG, with the CPU's
 * stall ending as it was asked, 2 of 6 recoveries were so blamed without
 * this wait (cpu_stall.sh).
 */
#define LOST_IRQ_HELD_BACK_US	1000

/* Context: hardirq, on the vector's CPU once it takes interrupts. */
static void lost_irq_cpu_nop(void *info)
{
}

/**
 * nvme_lost_irq_deadline() - the timeout an I/O command starts with
 * @deadline_ms: nvme.lost_irq_deadline_ms
 * @io_timeout: the queue's io_timeout, in jiffies
 * @watched: the command's queue is interrupt-driven and started
 *
 * Pure function of its arguments.  Context: any.
 *
 * Return: the early deadline in jiffies, or 0 (blk-mq gives the command
 * @io_timeout) if there is none or it would not come first.
 */
unsigned long nvme_lost_irq_deadline(unsigned int deadline_ms,
				     unsigned long io_timeout, bool watched)
{
	unsigned long deadline = msecs_to_jiffies(deadline_ms);

	return watched && deadline < io_timeout ? deadline : 0;
}
EXPORT_SYMBOL_IF_KUNIT(nvme_lost_irq_deadline);

/**
 * nvme_lost_irq_in_deadline() - did a command time out at its early deadline?
 * @timeout: the command's timeout, in jiffies
 * @io_timeout: the queue's io_timeout, in jiffies, now
 *
 * Only this file sets the timeout of the driver's own I/O commands.
 * A command whose early deadline passed gets the whole @io_timeout from
 * then on (its timeout reset to 0, which blk-mq fills in): no state beyond
 * the timeout itself.  If @io_timeout was lowered below the deadline since,
 * the command has waited longer than it: a real timeout.
 *
 * Pure function of its arguments.  Context: any.
 *
 * Return: true if the deadline passed, false for a real timeout.
 */
bool nvme_lost_irq_in_deadline(unsigned long timeout, unsigned long io_timeout)
{
	return timeout && timeout < io_timeout;
}
EXPORT_SYMBOL_IF_KUNIT(nvme_lost_irq_in_deadline);

/*
 * A read, write or other block I/O command on an I/O queue: passthrough
 * commands (a user's, the target's, the core's own) keep the timeout they
 * were given, and admin commands have their own.
 */
static bool lost_irq_own_io(struct nvme_queue *nvmeq, struct request *req)
{
	return nvme_pci_qid(nvmeq) && !blk_rq_is_passthrough(req);
}

/*
 * Context: the submission path (nvme_prep_rq()), before the command is
 * started; preemption may be on.  Nothing else sets the timeout of the
 * driver's own I/O commands: this gives it, again if one was requeued.
 */
void __nvme_lost_irq_deadline_start(struct request *req)
{
	struct nvme_queue *nvmeq = req->mq_hctx->driver_data;

	if (!lost_irq_own_io(nvmeq, req))
		return;
	req->timeout = nvme_lost_irq_deadline(READ_ONCE(nvme_lost_irq_deadline_ms),
					      req->q->rq_timeout,
					      READ_ONCE(nvme_pci_lost_irq(nvmeq)->active));
}

static void lost_irq_deadline_report(struct nvme_lost_irq *li,
				     struct request *req, unsigned int ms)
{
	struct nvme_lost_irq_ctrl *lc = li->ctrl;
	int irq = nvme_pci_irq(li->nvmeq);
	struct irq_data *d = irq_get_irq_data(irq);
	const char *chip = d && d->chip ? d->chip->name : "?";
	const char *domain = d && d->domain && d->domain->name ? d->domain->name : "?";

	if (nvme_pci_warn_once(lc->warned, NVME_PCI_WARN_DEADLINE))
		dev_warn(lc->dev,
			 "no completion interrupt for I/O tag %d on queue %u, irq %d (chip %s, domain %s): completion polled at %u ms (nvme.lost_irq_deadline_ms)%s\n",
			 req->tag, nvme_pci_qid(li->nvmeq), irq, chip, domain, ms,
			 strstr(chip, "VMD") ?
			 "; VMD: the vmd quirk covers Meteor/Arrow Lake only, VMD off avoids it" :
			 "");
	else if (__ratelimit(&lc->rs_deadline))
		dev_info(lc->dev,
			 "completions polled at their early deadline: %llu on queue %u so far (irq %d)\n",
			 li->deadline_recoveries, nvme_pci_qid(li->nvmeq), irq);
}

/**
 * nvme_lost_irq_deadline_passed() - the early deadline of a command passed
 * @nvmeq: the command's queue
 * @req: the command, timed out
 * @ret: what nvme_timeout() returns, if this returns true
 *
 * Polls the queue once, as nvme_timeout() does 30 s later, if a completion
 * is posted at its head.  Found complete: done, counted, and the controller
 * armed (nvme_lost_irq_ctrl_arm()).  Nothing posted, or still outstanding:
 * the command is slow, not lost, and gets io_timeout.
 *
 * Context: process (blk-mq's timeout work), from nvme_timeout().
 *
 * Return: false if @req timed out for real: nvme_timeout() goes on.
 */
bool nvme_lost_irq_deadline_passed(struct nvme_queue *nvmeq,
				   struct request *req,
				   enum blk_eh_timer_return *ret)
{
	struct nvme_lost_irq *li = nvme_pci_lost_irq(nvmeq);
	struct nvme_lost_irq_sample s = { };
	unsigned int ms;
	u64 wait_us;
	int reaped, cpu;

	if (!lost_irq_own_io(nvmeq, req) ||
	    !nvme_lost_irq_in_deadline(req->timeout, req->q->rq_timeout))
		return false;
	/* until the timer is reset, deadline - timeout is when it started */
	ms = jiffies_to_msecs(jiffies - (READ_ONCE(req->deadline) - req->timeout));
	req->timeout = 0;
	*ret = BLK_EH_RESET_TIMER;
	/* a queue being reset or torn down: what is left is nvme_timeout()'s */
	if (!READ_ONCE(li->active))
		return true;
	/* nothing posted at the head: the command is slow, not complete */
	nvme_pci_cq_sample(nvmeq, &s);
	if (!s.pending)
		return true;
	WRITE_ONCE(li->deadline_polls, li->deadline_polls + 1);
	/*
	 * Not blamed on the interrupt path if the vector's CPU merely held
	 * it back: wait until that CPU runs an IPI, which it does once it
	 * takes interrupts, then let the interrupt it held run (see
	 * LOST_IRQ_HELD_BACK_US), or the one moderation holds on purpose.
	 * The wait is as long as the CPU's stall.
	 */
	cpu = lost_irq_vector_cpu(li);
	if (cpu < nr_cpu_ids)
		smp_call_function_single(cpu, lost_irq_cpu_nop, NULL, 1);
	wait_us = max_t(u64, LOST_IRQ_HELD_BACK_US, div_u64(s.hold_ns, NSEC_PER_USEC));
	usleep_range(wait_us, 2 * wait_us);
	reaped = nvme_pci_reap_at(nvmeq, NULL, req);
	if (reaped < 0) {
		*ret = BLK_EH_DONE;
		return true;	/* its interrupt or a poll came: it was slow */
	}
	if (!reaped)
		return true;	/* still outstanding: slow, not lost */
	*ret = BLK_EH_DONE;
	WRITE_ONCE(li->deadline_recoveries, li->deadline_recoveries + 1);
	if (ms > li->deadline_max_ms)
		WRITE_ONCE(li->deadline_max_ms, ms);
	trace_nvme_lost_irq_deadline_recovered(dev_name(li->ctrl->dev),
					       nvme_pci_qid(nvmeq), req->tag,
					       reaped, ms);
	lost_irq_deadline_report(li, req, ms);
	nvme_lost_irq_ctrl_arm(li->ctrl);
	return true;
}

static u64 lost_irq_period_ns(void)
{
	return (u64)READ_ONCE(nvme_lost_irq_poll_ms) * NSEC_PER_MSEC;
}

/*
 * Context: any, with the queue's sq_lock held (nvme_lost_irq_arm()).  The
 * timer is a hard one: a check reads two cache lines and takes no lock but
 * RCU's, which costs less than a trip through the softirq.
 */
void nvme_lost_irq_start_timer(struct nvme_lost_irq *li)
{
	u64 period_ns = lost_irq_period_ns();

	lockdep_assert_held(nvme_pci_sq_lock(li->nvmeq));
	hrtimer_start_range_ns(&li->timer, ns_to_ktime(period_ns),
			       LOST_IRQ_SLACK(period_ns),
			       HRTIMER_MODE_REL_PINNED_HARD);
}

/*
 * Recovery completes I/O that memory reclaim may be waiting for, so its
 * workqueue has a rescuer (WQ_MEM_RECLAIM).  Per CPU and high priority,
 * like the system workqueue it replaces: queued from the check's timer, it
 * runs on that CPU ahead of the tasks its completions wake.  On nvme_wq
 * (unbound, normal priority) lost_msix.sh at 100 % loss saw 506 of 512
 * stalls recovered, a second after the I/O; here all 512.
 */
static struct workqueue_struct *nvme_lost_irq_wq;

/* A recovery of another kind, on this CPU.  Context: any. */
void nvme_lost_irq_queue_work(struct work_struct *work)
{
	queue_work(nvme_lost_irq_wq, work);
}

/* Context: hardirq (hard hrtimer). */
static enum hrtimer_restart lost_irq_timer_fn(struct hrtimer *timer)
{
	struct nvme_lost_irq *li = container_of(timer, struct nvme_lost_irq, timer);
	struct nvme_lost_irq_sample s = { };
	u64 prev_ns = li->watch.last_ns;

	if (!READ_ONCE(li->active) || !READ_ONCE(nvme_lost_irq_poll_ms) ||
	    !(READ_ONCE(li->ctrl->armed) || READ_ONCE(nvme_lost_irq_poll_always)))
		return HRTIMER_NORESTART;

	/* the timer is dequeued: pairs with nvme_lost_irq_arm() */
	smp_mb();
	nvme_pci_cq_sample(li->nvmeq, &s);
	s.now_ns = ktime_get_ns();
	s.period_ns = lost_irq_period_ns();
	s.outstanding -= min(s.outstanding,
			     READ_ONCE(li->aer_sent) - READ_ONCE(li->aer_done));
	WRITE_ONCE(li->checks, li->checks + 1);
	if (nvme_lost_irq_ran_late(&li->watch, &s))
		WRITE_ONCE(li->delayed, li->delayed + 1);

	switch (nvme_lost_irq_check(&li->watch, &s, s.hold_ns)) {
	case NVME_LOST_IRQ_IDLE:
		return HRTIMER_NORESTART;
	case NVME_LOST_IRQ_STUCK:
		/* the verdict's queue state: queue_work() orders it */
		WRITE_ONCE(li->stall_ns, s.now_ns - li->watch.since_ns);
		nvme_cq_mark_copy(&li->stuck, &s.at);
		queue_work(nvme_lost_irq_wq, &li->work);
		break;
	case NVME_LOST_IRQ_LATE:
		WRITE_ONCE(li->late, li->late + 1);
		trace_nvme_lost_irq_late(dev_name(li->ctrl->dev),
					 nvme_pci_qid(li->nvmeq),
					 div_u64(s.now_ns - prev_ns, NSEC_PER_USEC));
		break;
	case NVME_LOST_IRQ_BUSY:
		break;
	}
	/*
	 * Restarted through the base lock, from now: while this runs the timer
	 * is not queued, so a submission on another CPU may start it
	 * (nvme_lost_irq_arm()), and changing the expiry here would race with
	 * that; hrtimer_forward_now() would also step from the hard expiry,
	 * which a check riding another interrupt has not reached yet.
	 */
	hrtimer_start_range_ns(timer, ns_to_ktime(s.now_ns + s.period_ns),
			       LOST_IRQ_SLACK(s.period_ns),
			       HRTIMER_MODE_ABS_PINNED_HARD);
	return HRTIMER_NORESTART;
}

static void lost_irq_report(struct nvme_lost_irq *li)
{
	struct nvme_lost_irq_ctrl *lc = li->ctrl;
	int irq = nvme_pci_irq(li->nvmeq);
	struct irq_data *d = irq_get_irq_data(irq);
	const char *chip = d && d->chip ? d->chip->name : "?";
	const char *domain = d && d->domain && d->domain->name ? d->domain->name : "?";

	/*
	 * The VMD driver makes the child's DMA visible before it demultiplexes
	 * a message only where it knows the erratum (VMD_FEAT_INTERRUPT_QUIRK:
	 * Meteor Lake and Arrow Lake): elsewhere behind VMD, say so.
	 */
	if (nvme_pci_warn_once(lc->warned, NVME_PCI_WARN_LOST_IRQ))
		dev_warn(lc->dev,
			 "no completion interrupt arrived on queue %u, irq %d (chip %s, domain %s), while a completion waited: completions are being recovered by polling every %u ms (nvme.lost_irq_poll_ms)%s\n",
			 nvme_pci_qid(li->nvmeq), irq, chip, domain,
			 READ_ONCE(nvme_lost_irq_poll_ms),
			 strstr(chip, "VMD") ?
			 "; VMD: the vmd quirk covers Meteor/Arrow Lake only, VMD off avoids it" :
			 "");
	else if (__ratelimit(&lc->rs))
		dev_info(lc->dev,
			 "lost completion interrupts: %llu recoveries on queue %u so far (irq %d)\n",
			 li->recoveries, nvme_pci_qid(li->nvmeq), irq);
}

/* Context: process (nvme_lost_irq_wq), never concurrently for one queue. */
static void lost_irq_work_fn(struct work_struct *work)
{
	struct nvme_lost_irq *li = container_of(work, struct nvme_lost_irq, work);
	struct nvme_lost_irq_sample s = { };
	u64 stall_ns = READ_ONCE(li->stall_ns);
	struct nvme_cq_mark stuck;
	bool blocked, here;
	int reaped, cpu;

	if (!READ_ONCE(li->active))
		return;
	/*
	 * Reap only what the check found stuck: a handler that ran since (a
	 * late interrupt) or another reap took it, and what is posted now may
	 * still get its own interrupt.
	 */
	nvme_cq_mark_copy(&stuck, &li->stuck);
	nvme_pci_cq_sample(li->nvmeq, &s);
	if (nvme_cq_moved(&stuck, &s.at))
		return;
	/*
	 * Ask before the reap: a CPU that turns interrupts back on while it
	 * is asked runs the IPI, then at once the interrupt it held back,
	 * which reaps the queue; asked after the reap, it would answer in
	 * time and the interrupt would be blamed.  The question costs an
	 * IPI's round trip and the 100-200 us of the first sleep while the
	 * answer comes, or the wait for a CPU that takes none; an answer, the
	 * wait for the interrupt held back, if any.
	 */
	blocked = lost_irq_cpu_blocked(li, &cpu, &here);
	if (!blocked && !here)
		usleep_range(LOST_IRQ_HELD_BACK_US, 2 * LOST_IRQ_HELD_BACK_US);
	/* a handler run since, the held-back interrupt's included, moved it */
	reaped = nvme_pci_reap_at(li->nvmeq, &stuck, NULL);
	if (reaped <= 0)
		return;		/* the handler got there first */

	WRITE_ONCE(li->recoveries, li->recoveries + 1);
	WRITE_ONCE(li->reaped, li->reaped + reaped);
	if (stall_ns > li->max_stall_ns)
		WRITE_ONCE(li->max_stall_ns, stall_ns);
	trace_nvme_lost_irq_recovered(dev_name(li->ctrl->dev),
				      nvme_pci_qid(li->nvmeq), reaped,
				      div_u64(stall_ns, NSEC_PER_USEC), blocked);
	if (!blocked) {
		lost_irq_report(li);
		return;
	}
	WRITE_ONCE(li->cpu_blocked, li->cpu_blocked + 1);
	if (__ratelimit(&li->ctrl->rs_blocked))
		dev_info(li->ctrl->dev,
			 "CPU %d took no interrupt for %llu ms: queue %u's completions recovered by polling; no interrupt was lost\n",
			 cpu, div_u64(stall_ns, NSEC_PER_MSEC),
			 nvme_pci_qid(li->nvmeq));
}

/**
 * nvme_lost_irq_start() - start watching an interrupt-driven queue
 * @li: the queue's poller state
 * @lc: its controller's state
 * @nvmeq: the queue
 *
 * Call before the queue's interrupt is requested, once its number is known.
 * The timer is armed by the first submission.  Context: process.
 */
void nvme_lost_irq_start(struct nvme_lost_irq *li,
			 struct nvme_lost_irq_ctrl *lc, struct nvme_queue *nvmeq)
{
	spinlock_t *sq_lock = nvme_pci_sq_lock(nvmeq);
	struct irq_data *d;

	li->ctrl = lc;
	/*
	 * Looked up once: the injector asks on every interrupt, and the
	 * trigger type does not change while the vector is requested.
	 */
	d = irq_get_irq_data(nvme_pci_irq(nvmeq));
	li->level = d && irqd_is_level_type(d);
	memset(&li->watch, 0, sizeof(li->watch));
	/*
	 * Pinned to the CPU that armed it: an unpinned one may move to the
	 * vector's CPU, and if that one takes no interrupts, neither the
	 * interrupt nor the check comes.
	 */
	hrtimer_setup(&li->timer, lost_irq_timer_fn, CLOCK_MONOTONIC,
		      HRTIMER_MODE_REL_PINNED_HARD);
	nvme_lost_irq_probe_init(&li->probe);
	INIT_WORK(&li->work, lost_irq_work_fn);
	li->nvmeq = nvmeq;
	/* the admin queue's AERs stay outstanding: it would always re-check */
	if (nvme_pci_qid(nvmeq))
		nvme_early_irq_start(&li->early, nvmeq);

	/* with the submitters' lock, as nvme_lost_irq_aer_sent() counts */
	spin_lock(sq_lock);
	li->aer_sent = 0;
	li->aer_done = 0;
	li->active = true;
	spin_unlock(sq_lock);
}

/**
 * nvme_lost_irq_stop() - stop watching a queue
 * @li: the queue's poller state
 *
 * Call before the queue's interrupt is freed.  Once it returns no check or
 * recovery runs and none can be armed, so the queue may be torn down.
 * Context: process; may sleep.
 */
void nvme_lost_irq_stop(struct nvme_lost_irq *li)
{
	if (!li->nvmeq)
		return;
	spin_lock(nvme_pci_sq_lock(li->nvmeq));
	li->active = false;
	spin_unlock(nvme_pci_sq_lock(li->nvmeq));
	hrtimer_cancel(&li->timer);
	cancel_work_sync(&li->work);
	nvme_lost_irq_probe_sync(&li->probe);
	nvme_early_irq_stop(&li->early);
}

/* Context: process; the queues outlive the file (removed before them). */
static int lost_irq_show(struct seq_file *m, void *unused)
{
	struct nvme_lost_irq_ctrl *lc = m->private;
	u64 dl_polls = 0, dl_found = 0, dl_max = 0;
	u64 checks = 0, delayed = 0, late = 0, recoveries = 0, reaped = 0;
	u64 max_stall = 0, blocked = 0;
	u64 empty = 0, rechecks = 0, found = 0, early = 0, early_reaped = 0;
	u64 max_wait = 0;
	struct nvme_queue *nvmeq;
	struct nvme_lost_irq *li;
	unsigned int i;

	for (i = 0; (nvmeq = nvme_pci_next_queue(lc->ndev, &i)); ) {
		li = nvme_pci_lost_irq(nvmeq);
		dl_polls += READ_ONCE(li->deadline_polls);
		dl_found += READ_ONCE(li->deadline_recoveries);
		dl_max = max(dl_max, READ_ONCE(li->deadline_max_ms));
		checks += READ_ONCE(li->checks);
		delayed += READ_ONCE(li->delayed);
		late += READ_ONCE(li->late);
		recoveries += READ_ONCE(li->recoveries);
		reaped += READ_ONCE(li->reaped);
		max_stall = max(max_stall, READ_ONCE(li->max_stall_ns));
		blocked += READ_ONCE(li->cpu_blocked);
		empty += READ_ONCE(li->early.empty);
		rechecks += READ_ONCE(li->early.rechecks);
		found += READ_ONCE(li->early.found);
		early += READ_ONCE(li->early.recoveries);
		early_reaped += READ_ONCE(li->early.reaped);
		max_wait = max(max_wait, READ_ONCE(li->early.max_wait_ns));
	}
	seq_printf(m, "deadline_ms: %u\n", READ_ONCE(nvme_lost_irq_deadline_ms));
	seq_printf(m, "deadline_polls: %llu\n", dl_polls);
	seq_printf(m, "deadline_recoveries: %llu\n", dl_found);
	seq_printf(m, "deadline_max_ms: %llu\n", dl_max);
	seq_printf(m, "deadline_warned: %d\n",
		   test_bit(NVME_PCI_WARN_DEADLINE, lc->warned));
	seq_printf(m, "poll_always: %u\n", READ_ONCE(nvme_lost_irq_poll_always));
	seq_printf(m, "armed: %u\n", READ_ONCE(lc->armed));
	seq_printf(m, "poll_ms: %u\n", READ_ONCE(nvme_lost_irq_poll_ms));
	seq_printf(m, "checks: %llu\n", checks);
	seq_printf(m, "delayed_checks: %llu\n", delayed);
	seq_printf(m, "late_checks: %llu\n", late);
	seq_printf(m, "recoveries: %llu\n", recoveries);
	seq_printf(m, "completions_recovered: %llu\n", reaped);
	seq_printf(m, "max_stall_us: %llu\n", div_u64(max_stall, NSEC_PER_USEC));
	seq_printf(m, "cpu_blocked: %llu\n", blocked);
	seq_printf(m, "warned: %d\n",
		   test_bit(NVME_PCI_WARN_LOST_IRQ, lc->warned));
	seq_printf(m, "early_recheck_us: %u\n", READ_ONCE(nvme_early_irq_recheck_us));
	seq_printf(m, "early_empty_runs: %llu\n", empty);
	seq_printf(m, "early_rechecks: %llu\n", rechecks);
	seq_printf(m, "early_found: %llu\n", found);
	seq_printf(m, "early_recoveries: %llu\n", early);
	seq_printf(m, "early_completions_recovered: %llu\n", early_reaped);
	seq_printf(m, "early_max_wait_us: %llu\n", div_u64(max_wait, NSEC_PER_USEC));
	seq_printf(m, "early_warned: %d\n",
		   test_bit(NVME_PCI_WARN_EARLY_IRQ, lc->warned));
	for (i = 0; (nvmeq = nvme_pci_next_queue(lc->ndev, &i)); ) {
		u16 qid = nvme_pci_qid(nvmeq);

		li = nvme_pci_lost_irq(nvmeq);
		seq_printf(m, "q%u.deadline_recoveries: %llu\n", qid,
			   READ_ONCE(li->deadline_recoveries));
		seq_printf(m, "q%u.checks: %llu\n", qid, READ_ONCE(li->checks));
		seq_printf(m, "q%u.delayed_checks: %llu\n", qid,
			   READ_ONCE(li->delayed));
		seq_printf(m, "q%u.late_checks: %llu\n", qid, READ_ONCE(li->late));
		seq_printf(m, "q%u.recoveries: %llu\n", qid, READ_ONCE(li->recoveries));
		seq_printf(m, "q%u.completions_recovered: %llu\n", qid,
			   READ_ONCE(li->reaped));
		seq_printf(m, "q%u.max_stall_us: %llu\n", qid,
			   div_u64(READ_ONCE(li->max_stall_ns), NSEC_PER_USEC));
		seq_printf(m, "q%u.cpu_blocked: %llu\n", qid,
			   READ_ONCE(li->cpu_blocked));
		seq_printf(m, "q%u.early_found: %llu\n", qid,
			   READ_ONCE(li->early.found));
		seq_printf(m, "q%u.early_recoveries: %llu\n", qid,
			   READ_ONCE(li->early.recoveries));
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(lost_irq);

/**
 * nvme_lost_irq_ctrl_init() - set up a controller's poller state
 * @lc: the state, in the controller's private data
 * @ndev: the controller
 * @dev: the controller's device
 * @warned: the controller's warn-once bitmap
 * @parent: the controller's debugfs directory (may be an error pointer)
 *
 * Context: process.
 */
void nvme_lost_irq_ctrl_init(struct nvme_lost_irq_ctrl *lc,
			     struct nvme_dev *ndev, struct device *dev,
			     unsigned long *warned, struct dentry *parent)
{
	lc->ndev = ndev;
	lc->dev = dev;
	lc->warned = warned;
	ratelimit_state_init(&lc->rs, 60 * HZ, 1);
	ratelimit_state_init(&lc->rs_blocked, 60 * HZ, 1);
	ratelimit_state_init(&lc->rs_early, 60 * HZ, 1);
	ratelimit_state_init(&lc->rs_deadline, 60 * HZ, 1);
	lc->armed = 0;
	lc->armed_knob = (struct nvme_pci_knob) {
		.name = "lost_irq_armed", .val = &lc->armed, .min = 0, .max = 1,
		.changed = lost_irq_armed_changed,
	};
	/* removed with the controller's directory */
	debugfs_create_file("lost_irq", 0400, parent, lc, &lost_irq_fops);
	nvme_pci_debugfs_knob(parent, &lc->armed_knob);
}

/**
 * nvme_lost_irq_init() - create the recovery workqueue
 *
 * Context: process, module init, before any queue is started.
 * Return: 0 or -ENOMEM.
 */
int __init nvme_lost_irq_init(void)
{
	nvme_lost_irq_wq = alloc_workqueue("nvme-lost-irq", WQ_PERCPU |
					   WQ_HIGHPRI | WQ_MEM_RECLAIM, 0);
	return nvme_lost_irq_wq ? 0 : -ENOMEM;
}

/**
 * nvme_lost_irq_exit() - destroy the recovery workqueue
 *
 * Context: process, module exit or a failed init, once every queue is
 * stopped (nvme_lost_irq_stop()).
 */
void nvme_lost_irq_exit(void)
{
	cancel_work_sync(&lost_irq_key_work);
	destroy_workqueue(nvme_lost_irq_wq);
}

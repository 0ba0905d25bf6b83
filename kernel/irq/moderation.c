// SPDX-License-Identifier: GPL-2.0
/*
 * Per-vector interrupt moderation.
 *
 * A moderated vector gets a quiet time of delay_us from the arrival of
 * each interrupt its handlers ran for and handled.  An interrupt that
 * arrives in it is held: marked IRQS_PENDING and masked, exactly as the
 * flow handler treats one that arrives while the vector is disabled, and
 * the vector's own hrtimer replays it when the quiet time ends by running
 * the handlers itself.  One timer per vector means
 * each vector keeps its own gap, no matter how many moderated vectors share
 * a CPU, and a timer is armed only when an interrupt is actually held: an
 * idle or slow vector costs one clock read per interrupt and no timer.
 *
 * Locking: the per-vector state is changed and published under
 * desc->lock; the vector's IRQD_MODERATED, the bit the flow handlers test,
 * is set there while a quiet time is set.  The state's allocation and
 * removal are serialised with request_irq()/free_irq() by
 * desc->request_mutex.  Neither takes the CPU hotplug lock: a driver may
 * moderate its vectors under a lock its reset path takes, and a CPU going
 * offline may wait for that reset.  It is freed after an RCU grace period, so that
 * irq_get_moderation() (a world-readable /proc file, a driver's debugfs)
 * can read it with no lock.  It belongs to the handler it was made for and
 * is dropped when that handler is freed, or when the quiet time is set to
 * 0 on a vector whose driver did not allow root to moderate it (an allowed
 * vector keeps its state, without a quiet time).
 *
 * The driver decides: only a vector whose driver called
 * irq_allow_moderation() can be moderated by root through
 * /proc/irq/<N>/moderation_us; a write anywhere else fails with -EPERM.
 * Only the chip knows whether it can mask a vector at the device from
 * hardirq context, so it says so with IRQCHIP_SUPPORTS_MODERATION.
 */

#define pr_fmt(fmt) "genirq: " fmt

#include <linux/hrtimer.h>
#include <linux/interrupt.h>
#include <linux/irq.h>
#include <linux/irq_moderation.h>
#include <linux/proc_fs.h>
#include <linux/rcupdate.h>
#include <linux/sched/mm.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include <trace/events/irq.h>

#include "internals.h"

static bool irq_moderation_off __ro_after_init;

static int __init irq_moderation_setup_off(char *str)
{
	irq_moderation_off = true;
	return 1;
}
__setup("noirqmoderation", irq_moderation_setup_off);

/* desc->lock held: the state cannot go away under the caller */
static struct irq_moderation *irq_moderation_locked(struct irq_desc *desc)
{
	return rcu_dereference_protected(desc->moderation,
					 lockdep_is_held(&desc->lock));
}

/* desc->request_mutex held: no setting changes under the caller */
static struct irq_moderation *irq_moderation_requested(struct irq_desc *desc)
{
	return rcu_dereference_protected(desc->moderation,
					 lockdep_is_held(&desc->request_mutex));
}

/*
 * The entry of every call that looks at or changes a setting: @irq's
 * descriptor with its request_mutex held, or an error pointer (-ENODEV
 * while moderation is off, -EINVAL for no descriptor).  Process context.
 */
static struct irq_desc *irq_moderation_lock_desc(unsigned int irq)
{
	struct irq_desc *desc;

	if (irq_moderation_off)
		return ERR_PTR(-ENODEV);
	desc = irq_to_desc(irq);
	if (!desc)
		return ERR_PTR(-EINVAL);
	mutex_lock(&desc->request_mutex);
	return desc;
}

/* IRQD_MODERATED is set, the vector has a handler and is enabled. */
bool __irq_moderation_hold(struct irq_desc *desc)
{
	struct irq_moderation *m = irq_moderation_locked(desc);
	u64 now;

	/*
	 * A handler other than the one that set it never agreed to wait; a
	 * flow handler other than the one checked may not replay what it held.
	 */
	if (desc->action != m->owner || desc->action->next ||
	    desc->handle_irq != m->flow)
		return false;
	if (m->armed) {
		m->held++;
		return true;
	}
	/*
	 * The one clock read.  Let through, the interrupt starts the next
	 * quiet time from its arrival (irq_moderation_unhandled() takes it
	 * back if no handler handles it).
	 */
	now = ktime_get_ns();
	if (now >= m->quiet_until) {
		m->runs++;
		m->quiet_until = now + m->delay_ns;
		return false;
	}
	m->held++;
	m->delays++;
	m->held_since = now;
	m->armed = true;
	/*
	 * Pinned: started from an idle CPU, an unpinned timer may move to a
	 * busy one, and the replay would run the handlers off the vector's
	 * affinity (managed vectors, isolated CPUs).
	 */
	hrtimer_start(&m->timer, ns_to_ktime(m->quiet_until),
		      HRTIMER_MODE_ABS_PINNED_HARD);
	trace_irq_moderation_hold(irq_desc_get_irq(desc), m->quiet_until - now);
	return true;
}

/*
 * No handler handled the interrupt that was let through (a shared line's
 * other device, a spurious interrupt): nothing was batched, so holding the
 * next one gains nothing; end the quiet time it started.  desc->lock held.
 */
void __irq_moderation_unhandled(struct irq_desc *desc)
{
	irq_moderation_locked(desc)->quiet_until = 0;
}

/* The held interrupt may be delivered: the vector is enabled, not freed */
static bool irq_moderation_may_deliver(struct irq_desc *desc)
{
	return desc->action && !irqd_irq_disabled(&desc->irq_data);
}

/*
 * May the timer run the handlers on its CPU?  Pinned, it runs where the
 * interrupt was held, unless that CPU went offline (the hotplug core moves
 * its timers to another CPU); and the vector's affinity may have changed
 * since.  A chip that reports no effective affinity: its affinity.  Only
 * a chip that can retrigger the vector sends it to its target; without
 * one, check_irq_resend() would resend it in software on this CPU, later,
 * or drop it: the timer runs it here.
 */
static bool irq_moderation_on_target(struct irq_desc *desc,
				     struct irq_moderation *m)
{
	const struct cpumask *aff;

	if (!m->retrigger)
		return true;
	aff = irq_data_get_effective_affinity_mask(&desc->irq_data);
	if (IS_ENABLED(CONFIG_GENERIC_IRQ_EFFECTIVE_AFF_MASK) && cpumask_empty(aff))
		aff = irq_data_get_affinity_mask(&desc->irq_data);
	return cpumask_test_cpu(smp_processor_id(), aff);
}

/*
 * The timer may run the held interrupt's handlers itself, with nothing owed
 * to the chip or to power management: only on a CPU the vector targets (a
 * retrigger delivers it there otherwise), not while they run on another CPU
 * (an affinity change), not on a vector armed for wakeup (the flow handler
 * turns its interrupt into a wakeup event during suspend), and not on a chip
 * that EOIs only handled interrupts (the hold left the EOI to the flow
 * handler's second pass).  Those are replayed by check_irq_resend().  While
 * the timer runs them, an interrupt of a single-target edge vector arriving
 * on its new target CPU waits in irq_can_handle_pm() for
 * IRQD_IRQ_INPROGRESS to clear; by then the timer has started a new quiet
 * time, and that interrupt is held in turn.
 */
static bool irq_moderation_may_run(struct irq_desc *desc,
				   struct irq_moderation *m)
{
	return (desc->istate & IRQS_PENDING) &&
	       !irqd_has_set(&desc->irq_data,
			     IRQD_IRQ_INPROGRESS | IRQD_WAKEUP_ARMED) &&
	       !(irq_desc_get_chip(desc)->flags & IRQCHIP_EOI_IF_HANDLED) &&
	       irq_moderation_on_target(desc, m);
}

/*
 * End a hold, with desc->lock held and interrupts off.  From the timer
 * (@run), the held interrupt's handlers run right here, in its hardirq
 * context, as the flow handler's own pending loop would run them, and a new
 * quiet time starts; only then is the vector unmasked.  Replaying through
 * check_irq_resend() instead costs a retrigger (an IPI on x86) and a second
 * pass through the flow handler for every hold.  That path remains for the
 * cases irq_moderation_may_run() excludes and for a release from process
 * context.  A vector disabled or freed meanwhile keeps its pending bit:
 * enable_irq() replays it.
 */
static void irq_moderation_release(struct irq_desc *desc,
				   struct irq_moderation *m, bool run)
{
	u64 now = ktime_get_ns();
	irqreturn_t ret;

	m->armed = false;
	m->held_ns += now - m->held_since;
	if (m->quiet_until > now)
		m->quiet_until = now;
	trace_irq_moderation_release(irq_desc_get_irq(desc),
				     !!(desc->istate & IRQS_PENDING));
	if (!irq_moderation_may_deliver(desc))
		return;
	if (run && irq_moderation_may_run(desc, m)) {
		m->replayed++;
		/* the replay is the held interrupt's run: a quiet time */
		m->runs++;
		m->quiet_until = now + m->delay_ns;
		/* the flow handler counts an interrupt when it runs it */
		kstat_incr_irqs_this_cpu(desc);
		ret = handle_irq_event(desc);
		/* @m outlives this: irq_moderation_free() cancels the timer */
		if (!(ret & IRQ_HANDLED))
			m->quiet_until = 0;
		/* desc->lock was dropped: a free_irq() may have shut it down */
		if (!irq_moderation_may_deliver(desc))
			return;
	}
	if (irqd_irq_masked(&desc->irq_data))
		unmask_irq(desc);
	check_irq_resend(desc, false);
}

/* Hard hrtimer expiry: hardirq context. */
static enum hrtimer_restart irq_moderation_timer_fn(struct hrtimer *t)
{
	struct irq_moderation *m = container_of(t, struct irq_moderation, timer);
	struct irq_desc *desc = m->desc;

	raw_spin_lock(&desc->lock);
	if (m->armed)
		irq_moderation_release(desc, m, true);
	raw_spin_unlock(&desc->lock);
	return HRTIMER_NORESTART;
}

/* Stop the timer; release a held interrupt.  Process context. */
static void irq_moderation_quiesce(struct irq_desc *desc,
				   struct irq_moderation *m)
{
	hrtimer_cancel(&m->timer);
	raw_spin_lock_irq(&desc->lock);
	if (m->armed)
		irq_moderation_release(desc, m, false);
	raw_spin_unlock_irq(&desc->lock);
}

/* Can @desc be held and replayed safely?  desc->request_mutex held. */
static int irq_moderation_check(struct irq_desc *desc)
{
	struct irqaction *action = desc->action;
	struct irq_chip *chip = irq_desc_get_chip(desc);

	/*
	 * Shared means a second handler: pci_request_irq() sets IRQF_SHARED
	 * on every MSI vector, which only one device can use.
	 */
	if (!action || action->next)
		return -EINVAL;		/* nothing to moderate, or shared */
	if (action->flags & (IRQF_ONESHOT | IRQF_PERCPU) || action->thread_fn ||
	    (desc->istate & (IRQS_ONESHOT | IRQS_NMI)))
		return -EINVAL;		/* threads own the unmask */
	/*
	 * A clock event or broadcast device may be the timer that would end
	 * the hold; IRQF_NO_THREAD says the handler must not wait either.
	 */
	if (action->flags & (__IRQF_TIMER | IRQF_NO_THREAD))
		return -EINVAL;
	if (irq_settings_is_level(desc) || irqd_is_level_type(&desc->irq_data))
		return -EINVAL;		/* the line stays asserted */
	if (desc->handle_irq != handle_edge_irq &&
	    desc->handle_irq != handle_fasteoi_irq)
		return -EINVAL;		/* only these two have the hooks */
	/*
	 * The chip masks the vector at the device from hardirq context, so a
	 * held interrupt stays latched there: not PCI MSI without mask bits,
	 * nor a chip whose irq_mask() does nothing (Xen) or needs a bus lock.
	 */
	if (!chip || !(chip->flags & IRQCHIP_SUPPORTS_MODERATION))
		return -EINVAL;
	return 0;
}

/* irq_update_moderation()'s @old_us when any current value will do */
#define IRQ_MODERATION_ANY	UINT_MAX

/*
 * The state of a vector about to be moderated or allowed, for a vector that
 * irq_moderation_check() accepted; published with its owner and flow
 * handler.  Process context, desc->request_mutex held: a device's reset path
 * waits for that mutex in free_irq(), so reclaim must not wait for I/O here.
 */
/* Can the chip or a parent retrigger @desc?  desc->request_mutex held. */
static bool irq_moderation_can_retrigger(struct irq_desc *desc)
{
	struct irq_data *d = &desc->irq_data;

	if (d->chip->irq_retrigger)
		return true;
#ifdef CONFIG_IRQ_DOMAIN_HIERARCHY
	for (d = d->parent_data; d; d = d->parent_data) {
		if (d->chip && d->chip->irq_retrigger)
			return true;
	}
#endif
	return false;
}

static struct irq_moderation *irq_moderation_alloc(struct irq_desc *desc)
{
	unsigned int noio = memalloc_noio_save();
	struct irq_moderation *m = kzalloc(sizeof(*m), GFP_KERNEL);

	memalloc_noio_restore(noio);
	if (!m)
		return NULL;
	hrtimer_setup(&m->timer, irq_moderation_timer_fn, CLOCK_MONOTONIC,
		      HRTIMER_MODE_ABS_PINNED_HARD);
	m->desc = desc;
	m->owner = desc->action;
	m->flow = desc->handle_irq;
	m->retrigger = irq_moderation_can_retrigger(desc);
	raw_spin_lock_irq(&desc->lock);
	rcu_assign_pointer(desc->moderation, m);
	raw_spin_unlock_irq(&desc->lock);
	return m;
}

/*
 * Unmoderate @desc: unpublish @m first, so that no interrupt can arm the
 * timer after it, then release a held interrupt and free @m.  Process
 * context, desc->request_mutex held.
 */
static void irq_moderation_drop(struct irq_desc *desc, struct irq_moderation *m)
{
	raw_spin_lock_irq(&desc->lock);
	irqd_clear(&desc->irq_data, IRQD_MODERATED);
	RCU_INIT_POINTER(desc->moderation, NULL);
	raw_spin_unlock_irq(&desc->lock);
	irq_moderation_quiesce(desc, m);
	kfree_rcu(m, rcu);
}

/*
 * Set 0: a vector its driver allows keeps its state, with the allowance, and
 * only stops holding; any other is unmoderated.  desc->request_mutex held.
 */
static void irq_moderation_stop(struct irq_desc *desc, struct irq_moderation *m)
{
	if (!m->allowed) {
		irq_moderation_drop(desc, m);
		return;
	}
	raw_spin_lock_irq(&desc->lock);
	irqd_clear(&desc->irq_data, IRQD_MODERATED);
	WRITE_ONCE(m->delay_ns, 0);
	raw_spin_unlock_irq(&desc->lock);
	irq_moderation_quiesce(desc, m);
}

static int __irq_set_moderation(unsigned int irq, unsigned int old_us,
				unsigned int delay_us, bool user)
{
	struct irq_desc *desc = irq_moderation_lock_desc(irq);
	struct irq_moderation *m;
	u64 cur_us;
	int ret = 0;

	if (IS_ERR(desc))
		return PTR_ERR(desc);
	m = irq_moderation_requested(desc);
	/* root moderates only the vectors their drivers allow */
	if (user && !(m && m->allowed)) {
		ret = -EPERM;
		goto out;
	}
	if (delay_us > IRQ_MODERATION_MAX_US) {
		ret = -ERANGE;
		goto out;
	}
	cur_us = m ? div_u64(m->delay_ns, NSEC_PER_USEC) : 0;
	if (old_us != IRQ_MODERATION_ANY && cur_us != old_us) {
		ret = -EBUSY;
		goto out;
	}
	/* off is always possible, whatever the vector became since */
	if (!delay_us) {
		if (m)
			irq_moderation_stop(desc, m);
		goto out;
	}
	ret = irq_moderation_check(desc);
	if (ret)
		goto out;
	/* a vector moderated or allowed already takes the delay in place */
	if (!m) {
		m = irq_moderation_alloc(desc);
		if (!m) {
			ret = -ENOMEM;
			goto out;
		}
	}
	raw_spin_lock_irq(&desc->lock);
	/* the handler and the flow handler just checked */
	m->owner = desc->action;
	m->flow = desc->handle_irq;
	m->retrigger = irq_moderation_can_retrigger(desc);
	/* the statistics count from the setting that starts holding */
	if (!irqd_is_moderated(&desc->irq_data)) {
		m->runs = 0;
		m->held = 0;
		m->delays = 0;
		m->held_ns = 0;
		m->replayed = 0;
	}
	WRITE_ONCE(m->delay_ns, (u64)delay_us * NSEC_PER_USEC);
	irqd_set(&desc->irq_data, IRQD_MODERATED);
	raw_spin_unlock_irq(&desc->lock);
out:
	mutex_unlock(&desc->request_mutex);
	return ret;
}

/**
 * irq_set_moderation - set the quiet time of an interrupt vector
 * @irq: Linux interrupt number, requested with one non-threaded handler
 * @delay_us: minimum gap between the arrivals of two interrupts its handler
 *	runs for, 0 turns it off
 *
 * From the arrival of each interrupt the handler ran for and handled, the
 * vector stays quiet for @delay_us; an interrupt that arrives meanwhile is
 * held pending with the line masked and delivered when the quiet time
 * ends.  A handler that runs longer than @delay_us leaves no quiet time.
 * The setting lasts until it is changed or the handler is freed.
 *
 * Context: process context; may sleep.
 *
 * Return: 0 on success; -ERANGE if @delay_us exceeds IRQ_MODERATION_MAX_US;
 * -EINVAL if @irq has no handler or cannot be moderated safely (shared,
 * threaded or ONESHOT, level-triggered, a flow handler other than
 * handle_edge_irq()/handle_fasteoi_irq(), a chip without
 * IRQCHIP_SUPPORTS_MODERATION, a timer or IRQF_NO_THREAD handler);
 * -ENODEV if
 * moderation is switched off on the command line; -ENOMEM.  On error
 * nothing changes.
 */
int irq_set_moderation(unsigned int irq, unsigned int delay_us)
{
	return __irq_set_moderation(irq, IRQ_MODERATION_ANY, delay_us, false);
}
EXPORT_SYMBOL_GPL(irq_set_moderation);

/**
 * irq_update_moderation - change the quiet time only if it is the expected one
 * @irq: Linux interrupt number, requested with one non-threaded handler
 * @old_us: the quiet time the caller believes is set (0: none)
 * @delay_us: the new quiet time, 0 turns it off
 *
 * Compare and set in one step, under the vector's request mutex: a driver
 * that adjusts a vector's moderation on its own never overwrites a value
 * somebody else (root through /proc/irq/<N>/moderation_us) set meanwhile.
 *
 * Context: process context; may sleep.
 *
 * Return: as irq_set_moderation(), and -EBUSY if the current quiet time is
 * not @old_us; nothing changes then.
 */
int irq_update_moderation(unsigned int irq, unsigned int old_us,
			  unsigned int delay_us)
{
	if (old_us > IRQ_MODERATION_MAX_US)
		return -ERANGE;
	return __irq_set_moderation(irq, old_us, delay_us, false);
}
EXPORT_SYMBOL_GPL(irq_update_moderation);

/* A write to /proc/irq/<N>/moderation_us: as irq_set_moderation(), and
 * -EPERM where the vector's driver did not allow it.  Process context.
 */
int irq_moderation_user_set(unsigned int irq, unsigned int delay_us)
{
	return __irq_set_moderation(irq, IRQ_MODERATION_ANY, delay_us, true);
}

/**
 * irq_allow_moderation - let root set the quiet time of a vector
 * @irq: Linux interrupt number, requested with one non-threaded handler
 *
 * A driver whose handler is fit to wait (it reaps whatever completed by the
 * time it runs) allows root to moderate the vector through
 * /proc/irq/<N>/moderation_us; elsewhere that write fails with -EPERM.
 * The allowance lasts until the handler is freed.  A driver that moderates
 * the vector itself and must not be overridden uses irq_update_moderation().
 *
 * Context: process context; may sleep.
 *
 * Return: 0, or the error irq_can_moderate() would return, or -ENOMEM.
 */
int irq_allow_moderation(unsigned int irq)
{
	struct irq_desc *desc = irq_moderation_lock_desc(irq);
	struct irq_moderation *m;
	int ret;

	if (IS_ERR(desc))
		return PTR_ERR(desc);
	ret = irq_moderation_check(desc);
	if (ret)
		goto out;
	m = irq_moderation_requested(desc);
	if (!m)
		m = irq_moderation_alloc(desc);
	if (m)
		m->allowed = true;
	else
		ret = -ENOMEM;
out:
	mutex_unlock(&desc->request_mutex);
	return ret;
}
EXPORT_SYMBOL_GPL(irq_allow_moderation);

/**
 * irq_can_moderate - would irq_set_moderation() accept this vector?
 * @irq: Linux interrupt number
 *
 * Lets a driver tell up front, without changing anything, whether it can
 * moderate a vector or must do without (and say so in what it reports).
 * The answer holds until a handler is added to or freed from @irq.
 *
 * Context: process context; may sleep.
 *
 * Return: 0 if a delay within range would be accepted; otherwise the error
 * irq_set_moderation() would return (-EINVAL, -ENODEV).
 */
int irq_can_moderate(unsigned int irq)
{
	struct irq_desc *desc = irq_moderation_lock_desc(irq);
	int ret;

	if (IS_ERR(desc))
		return PTR_ERR(desc);
	ret = irq_moderation_check(desc);
	mutex_unlock(&desc->request_mutex);
	return ret;
}
EXPORT_SYMBOL_GPL(irq_can_moderate);

/**
 * irq_get_moderation - the quiet time of an interrupt vector
 * @irq: Linux interrupt number; may be unused or being freed
 *
 * Context: any; lockless (RCU).
 *
 * Return: the delay in microseconds, 0 if the vector is not moderated.
 */
unsigned int irq_get_moderation(unsigned int irq)
{
	struct irq_moderation *m;
	struct irq_desc *desc;
	unsigned int us = 0;

	/* descriptors and their moderation state are both freed after RCU */
	rcu_read_lock();
	desc = irq_to_desc(irq);
	m = desc ? rcu_dereference(desc->moderation) : NULL;
	if (m)
		us = div_u64(READ_ONCE(m->delay_ns), NSEC_PER_USEC);
	rcu_read_unlock();
	return us;
}
EXPORT_SYMBOL_GPL(irq_get_moderation);

/*
 * @action was removed from @desc (__free_irq(), request_mutex held, the
 * handler no longer running).  If the setting was made for it, or no
 * handler is left, stop the timer and drop the state: a handler that
 * remains on a shared line never agreed to wait.
 */
void irq_moderation_free(struct irq_desc *desc, struct irqaction *action)
{
	struct irq_moderation *m;

	m = irq_moderation_requested(desc);
	if (m && (m->owner == action || !desc->action))
		irq_moderation_drop(desc, m);
}

#ifdef CONFIG_PROC_FS
static int irq_moderation_us_show(struct seq_file *m, void *v)
{
	seq_printf(m, "%u\n", irq_get_moderation((unsigned long)m->private));
	return 0;
}

static int irq_moderation_us_open(struct inode *inode, struct file *file)
{
	return single_open(file, irq_moderation_us_show, pde_data(inode));
}

static ssize_t irq_moderation_us_write(struct file *file,
				       const char __user *buf, size_t count,
				       loff_t *ppos)
{
	unsigned int irq = (unsigned long)pde_data(file_inode(file));
	unsigned int us;
	int ret;

	ret = kstrtouint_from_user(buf, count, 0, &us);
	if (ret)
		return ret;
	ret = irq_moderation_user_set(irq, us);
	return ret ? ret : count;
}

static const struct proc_ops irq_moderation_us_ops = {
	.proc_open	= irq_moderation_us_open,
	.proc_read	= seq_read,
	.proc_lseek	= seq_lseek,
	.proc_release	= single_release,
	.proc_write	= irq_moderation_us_write,
};

static int irq_moderation_stats_show(struct seq_file *sf, void *v)
{
	struct irq_desc *desc = irq_to_desc((unsigned long)sf->private);
	struct irq_moderation *m;
	u64 s[6] = { };

	/*
	 * RCU keeps @m from being freed under us (irq_moderation_drop()),
	 * without request_mutex: a reader never waits for a request or free of
	 * the vector, nor they for it.  desc->lock: one consistent sample.
	 */
	rcu_read_lock();
	m = rcu_dereference(desc->moderation);
	if (m) {
		raw_spin_lock_irq(&desc->lock);
		s[0] = div_u64(m->delay_ns, NSEC_PER_USEC);
		s[1] = m->runs;
		s[2] = m->held;
		s[3] = m->delays;
		s[4] = div_u64(m->held_ns, NSEC_PER_USEC);
		s[5] = m->replayed;
		raw_spin_unlock_irq(&desc->lock);
	}
	rcu_read_unlock();
	seq_printf(sf, "delay_us: %llu\nruns: %llu\nheld: %llu\n", s[0], s[1], s[2]);
	seq_printf(sf, "delays: %llu\nheld_us: %llu\nreplayed: %llu\n",
		   s[3], s[4], s[5]);
	return 0;
}

/* register_irq_proc(): create /proc/irq/<irq>/moderation_{us,stats} */
void irq_moderation_proc_register(struct irq_desc *desc, void *irqp)
{
	if (irq_moderation_off)
		return;
	proc_create_data("moderation_us", 0644, desc->dir,
			 &irq_moderation_us_ops, irqp);
	/* root only: hold times are the timing of another device's work */
	proc_create_single_data("moderation_stats", 0400, desc->dir,
				irq_moderation_stats_show, irqp);
}

void irq_moderation_proc_unregister(struct irq_desc *desc)
{
	if (irq_moderation_off)
		return;
	remove_proc_entry("moderation_us", desc->dir);
	remove_proc_entry("moderation_stats", desc->dir);
}
#endif /* CONFIG_PROC_FS */

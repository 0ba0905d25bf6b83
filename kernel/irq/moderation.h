/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-vector interrupt moderation: hooks of the flow handlers.
 *
 * Both hooks run in the flow handler with desc->lock held, hardirq context.
 * A moderated vector has IRQD_MODERATED set, with desc->moderation, under
 * desc->lock: the flow handler tests it with IRQD_IRQ_DISABLED, in the one
 * test of the state word it makes anyway, so a vector that is not
 * moderated pays nothing before its handlers, and nothing after them
 * unless no handler handled the interrupt.
 */
#ifndef _KERNEL_IRQ_MODERATION_H
#define _KERNEL_IRQ_MODERATION_H

#include <linux/hrtimer.h>
#include <linux/interrupt.h>
#include <linux/irqdesc.h>

#ifdef CONFIG_IRQ_MODERATION

/**
 * struct irq_moderation - moderation state of one vector
 *
 * It exists while the vector is moderated or its driver allows root to
 * moderate it (irq_allow_moderation()): the first of the two allocates it;
 * freeing the handler it was made for frees it, and so does setting 0 on a
 * vector its driver did not allow.  The vector's IRQD_MODERATED is set
 * while @delay_ns is not 0.
 *
 * @timer: replays a held interrupt at @quiet_until; hard expiry
 * @desc: the vector
 * @owner: the handler the setting was made for; compared, never followed
 * @flow: the flow handler the setting was checked against; a vector whose
 *	flow handler is changed afterwards is never held
 * @retrigger: the chip or one of its parents can retrigger the vector: a
 *	held interrupt can be sent to another CPU instead of run by @timer
 * @rcu: frees the state after readers of irq_get_moderation() are done
 * @delay_ns: the quiet time from each interrupt the handlers ran for; 0
 *	while the vector is only allowed
 * @allowed: @owner's driver lets root set the quiet time through /proc
 * @quiet_until: end of the current quiet time (CLOCK_MONOTONIC, ns)
 * @held_since: when the interrupt now held arrived
 * @armed: @timer is queued or running and will release the vector
 * @runs: handler runs while moderated
 * @held: interrupts that arrived in a quiet time
 * @delays: quiet times that held an interrupt and armed @timer
 * @held_ns: total time held interrupts waited for their replay
 * @replayed: held interrupts whose handlers the timer ran itself
 */
struct irq_moderation {
	struct hrtimer timer;
	struct irq_desc *desc;
	const struct irqaction *owner;
	irq_flow_handler_t flow;
	bool retrigger;
	struct rcu_head rcu;
	u64 delay_ns;
	u64 quiet_until;
	u64 held_since;
	bool armed;
	bool allowed;
	u64 runs;
	u64 held;
	u64 delays;
	u64 held_ns;
	u64 replayed;
};

bool __irq_moderation_hold(struct irq_desc *desc);
void __irq_moderation_unhandled(struct irq_desc *desc);
void irq_moderation_free(struct irq_desc *desc, struct irqaction *action);
int irq_moderation_user_set(unsigned int irq, unsigned int delay_us);
void irq_moderation_proc_register(struct irq_desc *desc, void *irqp);
void irq_moderation_proc_unregister(struct irq_desc *desc);

/*
 * The flow handler found the vector without a handler, disabled or
 * moderated: true if the interrupt may be handled all the same, because
 * the vector is only moderated and not in its quiet time.  Otherwise the
 * caller treats it like one that arrives while the vector is disabled:
 * marks it IRQS_PENDING and masks the line; the moderation timer replays
 * it.
 */
static inline bool irq_moderation_let_through(struct irq_desc *desc)
{
	return desc->action && !irqd_irq_disabled(&desc->irq_data) &&
	       !__irq_moderation_hold(desc);
}

/*
 * No handler handled the interrupt: it starts no quiet time.  Called only
 * then, so a handled interrupt pays nothing after its handlers.
 */
static inline void irq_moderation_unhandled(struct irq_desc *desc)
{
	if (irqd_is_moderated(&desc->irq_data))
		__irq_moderation_unhandled(desc);
}

#else /* CONFIG_IRQ_MODERATION */

static inline bool irq_moderation_let_through(struct irq_desc *desc)
{
	return false;
}

static inline void irq_moderation_unhandled(struct irq_desc *desc) { }
static inline void irq_moderation_free(struct irq_desc *desc,
				       struct irqaction *action) { }
static inline void irq_moderation_proc_register(struct irq_desc *desc,
						void *irqp) { }
static inline void irq_moderation_proc_unregister(struct irq_desc *desc) { }

#endif /* CONFIG_IRQ_MODERATION */
#endif /* _KERNEL_IRQ_MODERATION_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-vector interrupt moderation: a minimum gap between the arrivals of
 * two interrupts an interrupt's handlers run for.
 * See Documentation/core-api/irq/irq-moderation.rst.
 */
#ifndef _LINUX_IRQ_MODERATION_H
#define _LINUX_IRQ_MODERATION_H

#include <linux/errno.h>

/* Longest gap accepted: beyond it, polling serves a device better. */
#define IRQ_MODERATION_MAX_US	10000

#ifdef CONFIG_IRQ_MODERATION
int irq_set_moderation(unsigned int irq, unsigned int delay_us);
int irq_update_moderation(unsigned int irq, unsigned int old_us,
			  unsigned int delay_us);
int irq_can_moderate(unsigned int irq);
int irq_allow_moderation(unsigned int irq);
unsigned int irq_get_moderation(unsigned int irq);
#else
static inline int irq_set_moderation(unsigned int irq, unsigned int delay_us)
{
	return delay_us ? -EOPNOTSUPP : 0;
}

static inline int irq_update_moderation(unsigned int irq, unsigned int old_us,
					unsigned int delay_us)
{
	return old_us ? -EBUSY : irq_set_moderation(irq, delay_us);
}

static inline int irq_can_moderate(unsigned int irq)
{
	return -EOPNOTSUPP;
}

static inline int irq_allow_moderation(unsigned int irq)
{
	return -EOPNOTSUPP;
}

static inline unsigned int irq_get_moderation(unsigned int irq)
{
	return 0;
}
#endif

#endif /* _LINUX_IRQ_MODERATION_H */

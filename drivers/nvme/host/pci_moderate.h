/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nvme-pci opt-in to genirq interrupt moderation: nvme.irq_moderation_us.
 */
#ifndef _NVME_PCI_MODERATE_H
#define _NVME_PCI_MODERATE_H

#include <linux/device.h>
#include <linux/irq_moderation.h>
#include <linux/time64.h>
#include <linux/types.h>

void nvme_pci_moderate(struct device *dev, int irq, u16 qid,
		       unsigned long *warned);

/*
 * How long the vector's interrupts may be held back on purpose, for the
 * lost-interrupt poller.  Context: any; the vector must stay requested.
 */
static inline u64 nvme_pci_moderation_ns(int irq)
{
	return (u64)irq_get_moderation(irq) * NSEC_PER_USEC;
}

#endif /* _NVME_PCI_MODERATE_H */

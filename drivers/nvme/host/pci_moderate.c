// SPDX-License-Identifier: GPL-2.0
/*
 * nvme-pci opt-in to genirq interrupt moderation.
 *
 * nvme.irq_moderation_us gives every I/O queue vector a quiet time after
 * each run of its handler (see Documentation/core-api/irq/irq-moderation.rst):
 * completions that come in it are reaped together when it ends.  Root may
 * set another through /proc/irq/<N>/moderation_us, which genirq allows only
 * on the I/O queue vectors.  The admin queue is never moderated.  The
 * bounded drain keeps the bigger batches out of hardirq context.
 */
#include <linux/irq_moderation.h>
#include <linux/moduleparam.h>

#include "pci_moderate.h"
#include "pci_debugfs.h"

static unsigned int nvme_irq_moderation_us;

NVME_PCI_KNOB(irq_moderation_us, nvme_irq_moderation_us, 0,
	      IRQ_MODERATION_MAX_US, NULL);
MODULE_PARM_DESC(irq_moderation_us,
		 "quiet time after each interrupt of an I/O queue, in us, applied when the queue's vector is set up (0-10000, 0 = off, default 0)");

/**
 * nvme_pci_moderate() - let root moderate a queue's vector, apply our own delay
 * @dev: the controller, for the message
 * @irq: the vector, just requested
 * @qid: queue id; 0, the admin queue, is left alone
 * @warned: the controller's warn-once bitmap: genirq's refusal is logged once
 *
 * A vector genirq refuses (a threaded handler, a kernel built without
 * CONFIG_IRQ_MODERATION or booted with noirqmoderation) keeps signalling
 * every completion, as without the parameter.
 *
 * Context: process.
 */
void nvme_pci_moderate(struct device *dev, int irq, u16 qid,
		       unsigned long *warned)
{
	unsigned int us = READ_ONCE(nvme_irq_moderation_us);
	int ret;

	if (!qid)
		return;
	/* its handler reaps what completed by the time it runs: root may tune it */
	ret = irq_allow_moderation(irq);
	if (!ret && us)
		ret = irq_set_moderation(irq, us);
	if (ret && us && nvme_pci_warn_once(warned, NVME_PCI_WARN_MODERATION))
		dev_info(dev, "irq_moderation_us=%u not applied (irq %d: %pe): completions are signalled at once\n",
			 us, irq, ERR_PTR(ret));
}

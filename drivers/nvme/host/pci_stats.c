// SPDX-License-Identifier: GPL-2.0
/*
 * Whether nvme_irq() keeps its counts (struct nvme_queue_stats).
 *
 * The counts have four readers: the lost-interrupt poller, the
 * early-interrupt re-check, adaptive coalescing, and the drain's debugfs
 * file, which tells how to set its budget.  With all four switched off
 * nobody reads them, and the handler keeps none: a machine that runs with
 * the series switched off pays no store per interrupt for it.
 */
#include <linux/jump_label.h>

#include "pci.h"
#include "pci_coalesce.h"
#include "pci_drain.h"
#include "pci_early_irq.h"
#include "pci_lost_irq.h"

/* every reader is on by default */
DEFINE_STATIC_KEY_TRUE(nvme_pci_counting);

static bool nvme_pci_counts_read(void)
{
	return READ_ONCE(nvme_lost_irq_poll_ms) ||
	       READ_ONCE(nvme_early_irq_recheck_us) ||
	       READ_ONCE(nvme_coal_adaptive) ||
	       READ_ONCE(nvme_irq_budget);
}

/**
 * nvme_pci_counting_start() - a reader of the handler's counts is turning on
 *
 * Called before the reader reads: it never sees counts the handler did not
 * keep.  The counts resume where they stopped; a reader takes differences
 * from its first sample on.
 *
 * Context: a knob's change hook (nvme_pci_knob_set(), whose lock
 * serialises them): process, or early boot for a boot parameter; may
 * sleep.
 */
void nvme_pci_counting_start(void)
{
	static_branch_enable(&nvme_pci_counting);
}

/**
 * nvme_pci_counting_stop() - a reader of the handler's counts turned off
 *
 * Called once the reader's own switch is off; the handler stops counting
 * if it was the last one.  Work the reader queued before may still take
 * a sample and see counts that no longer move: the poller and the
 * re-check compare the queue's head as well and reap only what is posted,
 * and adaptive coalescing, switched off, releases its queues anyway.
 *
 * Context: a knob's change hook (nvme_pci_knob_set(), whose lock
 * serialises them): process, or early boot for a boot parameter; may
 * sleep.
 */
void nvme_pci_counting_stop(void)
{
	if (!nvme_pci_counts_read())
		static_branch_disable(&nvme_pci_counting);
}

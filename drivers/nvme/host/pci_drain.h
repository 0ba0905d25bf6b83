/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Bounded completion drain of nvme-pci.
 *
 * The interrupt handler reaps at most nvme.irq_budget completions.  If more
 * are posted, it disables its vector and hands the queue to irq_poll
 * (lib/irq_poll.c): the poll callback reaps up to the budget per run in
 * softirq context, where the scheduler and the other softirqs get their
 * turn between runs, and enables the vector again once the queue is empty.
 */
#ifndef _NVME_PCI_DRAIN_H
#define _NVME_PCI_DRAIN_H

#include <linux/dcache.h>
#include <linux/irq_poll.h>
#include <linux/types.h>

#include "pci.h"

extern unsigned int nvme_irq_budget;

/**
 * struct nvme_drain - the bounded drain of one completion queue
 * @iop: the irq_poll instance the queue is handed to
 * @irq: the queue's vector
 * @qid: the queue's id, for the tracepoints
 * @started: @iop is initialised and may be scheduled
 * @deferred: the vector is disabled and @iop owns the queue
 * @fallbacks: statistics, one writer at a time (the vector's handler, or
 *	the poll callback while the vector is disabled): hand-overs to
 *	irq_poll
 * @poll_runs: runs of the poll callback
 * @poll_completions: completions reaped by the poll callback
 * @shutdown_skips: polls that ended on a vector genirq had shut down (CPU
 *	hot-unplug); genirq starts it again when one of its CPUs comes back
 */
struct nvme_drain {
	struct irq_poll iop;
	int irq;
	u16 qid;
	bool started;
	bool deferred;
	u64 fallbacks;
	u64 poll_runs;
	u64 poll_completions;
	u64 shutdown_skips;
};

void nvme_drain_debugfs(struct nvme_dev *ndev, struct dentry *parent);
void nvme_drain_start(struct nvme_drain *d, int irq, u16 qid,
		      irq_poll_fn *poll);
void nvme_drain_stop(struct nvme_drain *d);
void nvme_drain_defer(struct nvme_drain *d, int reaped);
int nvme_drain_polled(struct nvme_drain *d, int reaped, int weight);
#if IS_ENABLED(CONFIG_KUNIT)
void nvme_drain_enable(struct nvme_drain *d, int irq);
#endif

/**
 * nvme_drain_budget() - how many completions the handler may reap
 *
 * Context: the queue's interrupt handler.
 *
 * Return: the budget, INT_MAX if unbounded.
 */
static inline int nvme_drain_budget(void)
{
	unsigned int b = READ_ONCE(nvme_irq_budget);

	return b ? b : INT_MAX;
}

/* The vector is disabled for irq_poll: posted completions are not lost. */
static inline bool nvme_drain_deferred(struct nvme_drain *d)
{
	return READ_ONCE(d->deferred);
}

#endif /* _NVME_PCI_DRAIN_H */

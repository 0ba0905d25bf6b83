// SPDX-License-Identifier: GPL-2.0
/*
 * Bounded completion drain of nvme-pci: the budget, the hand-over to
 * irq_poll and back, and the statistics in
 * /sys/kernel/debug/nvme_pci/nvme<N>/drain.
 *
 * Why the vector is disabled while irq_poll owns the queue: the handler
 * and the poll callback then never reap the same CQ at once, and an
 * interrupt that comes meanwhile is not lost: genirq marks it pending and
 * replays it from enable_irq().  A completion posted after the poll found
 * the queue empty raises its own interrupt once the vector is enabled.
 */
#include <kunit/visibility.h>
#include <linux/debugfs.h>
#include <linux/interrupt.h>
#include <linux/irq.h>
#include <linux/moduleparam.h>
#include <linux/seq_file.h>

#include "pci_drain.h"
#include "pci_debugfs.h"

#include "pci_trace.h"

/* No queue is deeper: a larger budget is the same as none. */
#define NVME_IRQ_BUDGET_MAX	65536

unsigned int nvme_irq_budget = 256;
EXPORT_SYMBOL_IF_KUNIT(nvme_irq_budget);

/* drain's counters tell how to set the budget: kept while there is one */
static void irq_budget_changed(unsigned int budget)
{
	if (budget)
		nvme_pci_counting_start();
	else
		nvme_pci_counting_stop();
}

NVME_PCI_KNOB(irq_budget, nvme_irq_budget, 0, NVME_IRQ_BUDGET_MAX,
	      irq_budget_changed);
MODULE_PARM_DESC(irq_budget,
		 "completions the interrupt handler reaps before it hands the queue to irq_poll (0-65536, 0 = no bound, default 256)");

/* Context: process; the queues outlive the file (removed before them). */
static int drain_show(struct seq_file *m, void *unused)
{
	struct nvme_dev *ndev = m->private;
	u64 sum[6] = { };
	u32 max_batch = 0;
	struct nvme_queue *nvmeq;
	struct nvme_drain *d;
	unsigned int i;

	for (i = 0; (nvmeq = nvme_pci_next_queue(ndev, &i)); ) {
		const struct nvme_queue_stats *st = nvme_pci_stats(nvmeq);

		d = nvme_pci_drain(nvmeq);
		sum[0] += READ_ONCE(st->irqs);
		sum[1] += READ_ONCE(st->completions);
		sum[2] += READ_ONCE(d->fallbacks);
		sum[3] += READ_ONCE(d->poll_runs);
		sum[4] += READ_ONCE(d->poll_completions);
		sum[5] += READ_ONCE(d->shutdown_skips);
		max_batch = max(max_batch, READ_ONCE(st->max_batch));
	}
	seq_printf(m, "budget: %u\n", READ_ONCE(nvme_irq_budget));
	seq_printf(m, "counting: %d\n", nvme_pci_counting_on());
	seq_printf(m, "irq_runs: %llu\nirq_completions: %llu\n", sum[0], sum[1]);
	seq_printf(m, "fallbacks: %llu\npoll_runs: %llu\n", sum[2], sum[3]);
	seq_printf(m, "poll_completions: %llu\nmax_batch: %u\n", sum[4], max_batch);
	seq_printf(m, "shutdown_skips: %llu\n", sum[5]);
	for (i = 0; (nvmeq = nvme_pci_next_queue(ndev, &i)); ) {
		const struct nvme_queue_stats *st = nvme_pci_stats(nvmeq);
		u16 qid = nvme_pci_qid(nvmeq);

		d = nvme_pci_drain(nvmeq);
		seq_printf(m, "q%u.irq_runs: %u\n", qid, READ_ONCE(st->irqs));
		seq_printf(m, "q%u.irq_completions: %u\n", qid,
			   READ_ONCE(st->completions));
		seq_printf(m, "q%u.fallbacks: %llu\n", qid, READ_ONCE(d->fallbacks));
		seq_printf(m, "q%u.poll_runs: %llu\n", qid, READ_ONCE(d->poll_runs));
		seq_printf(m, "q%u.poll_completions: %llu\n", qid,
			   READ_ONCE(d->poll_completions));
		seq_printf(m, "q%u.max_batch: %u\n", qid, READ_ONCE(st->max_batch));
		seq_printf(m, "q%u.shutdown_skips: %llu\n", qid,
			   READ_ONCE(d->shutdown_skips));
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(drain);

/**
 * nvme_drain_debugfs() - add a controller's drain statistics to debugfs
 * @ndev: the controller
 * @parent: its debugfs directory (may be an error pointer)
 *
 * Context: process.
 */
void nvme_drain_debugfs(struct nvme_dev *ndev, struct dentry *parent)
{
	/* removed with the controller's directory */
	debugfs_create_file("drain", 0400, parent, ndev, &drain_fops);
}

/**
 * nvme_drain_start() - the queue's vector is about to be requested
 * @d: the queue's drain
 * @irq: the queue's vector
 * @qid: the queue's id
 * @poll: the queue's irq_poll callback
 *
 * Context: process; before the vector is requested, so that its first
 * interrupt finds the drain ready.
 */
void nvme_drain_start(struct nvme_drain *d, int irq, u16 qid,
		      irq_poll_fn *poll)
{
	d->deferred = false;
	/* the weight is set at each hand-over, to the handler's budget */
	irq_poll_init(&d->iop, NVME_IRQ_BUDGET_MAX, poll);
	d->irq = irq;
	d->qid = qid;
	d->started = true;
}
EXPORT_SYMBOL_IF_KUNIT(nvme_drain_start);

/**
 * nvme_drain_stop() - the queue's vector is about to be freed
 * @d: the queue's drain
 *
 * Waits for a scheduled poll to finish; after this the handler can no
 * longer hand the queue over (it may still disable its vector trying,
 * which freeing the vector undoes).  A poll whose run did its whole
 * weight is ended without another run (irq_poll_disable()): its vector
 * stays disabled until freed, and what it left in the queue is reaped
 * with the rest once the controller is disabled (nvme_dev_disable()).
 *
 * Context: process; may sleep.
 */
void nvme_drain_stop(struct nvme_drain *d)
{
	if (!d->started)
		return;
	d->started = false;
	irq_poll_disable(&d->iop);
}
EXPORT_SYMBOL_IF_KUNIT(nvme_drain_stop);

/**
 * nvme_drain_defer() - hand the queue to irq_poll
 * @d: the queue's drain
 * @reaped: completions the handler reaped: its whole budget
 *
 * Each poll run reaps at most what the handler was allowed to.  The knob
 * is not read again: written meanwhile to 0 (no bound), it would make
 * the weight INT_MAX.
 *
 * Context: the queue's interrupt handler, hardirq.
 */
void nvme_drain_defer(struct nvme_drain *d, int reaped)
{
	disable_irq_nosync(d->irq);
	WRITE_ONCE(d->deferred, true);
	WRITE_ONCE(d->fallbacks, d->fallbacks + 1);
	/* not scheduled, so ours to change */
	d->iop.weight = reaped;
	trace_nvme_irq_poll_fallback(d->irq, d->qid, reaped);
	irq_poll_sched(&d->iop);
}
EXPORT_SYMBOL_IF_KUNIT(nvme_drain_defer);

/*
 * Give the vector back.  A managed vector whose CPUs all went offline while
 * irq_poll owned the queue was shut down by genirq, and this poll was moved
 * here by irq_poll_cpu_dead().  genirq keeps the disable depth across such a
 * shutdown (788019eb559f, "genirq: Retain disable depth for managed
 * interrupts across CPU hotplug"): enable_irq() takes back only the
 * handler's disable_irq_nosync(), and the vector starts again when one of
 * its CPUs comes back.  Skipping it would leave the vector disabled for
 * good.  Such polls are counted.
 */
VISIBLE_IF_KUNIT void nvme_drain_enable(struct nvme_drain *d, int irq)
{
	/* for the count only: CPU hotplug changes it under desc->lock */
	if (data_race(irqd_is_managed_and_shutdown(irq_get_irq_data(irq))))
		WRITE_ONCE(d->shutdown_skips, d->shutdown_skips + 1);
	enable_irq(irq);
}
EXPORT_SYMBOL_IF_KUNIT(nvme_drain_enable);

/**
 * nvme_drain_polled() - account a poll run; give the queue back when empty
 * @d: the queue's drain
 * @reaped: completions the run reaped
 * @weight: the run's limit
 *
 * A run that reaped less than @weight found the queue empty.  A completion
 * posted since then is not left waiting: its interrupt, held pending while
 * the vector was disabled, is replayed by enable_irq() (or comes after it).
 *
 * Context: the irq_poll callback, softirq.
 *
 * Return: what the callback returns to irq_poll, the work it did: @weight
 * to be run again, less once the queue is back with its interrupt.
 */
int nvme_drain_polled(struct nvme_drain *d, int reaped, int weight)
{
	WRITE_ONCE(d->poll_runs, d->poll_runs + 1);
	WRITE_ONCE(d->poll_completions, d->poll_completions + reaped);
	if (reaped >= weight)
		return weight;
	irq_poll_complete(&d->iop);
	WRITE_ONCE(d->deferred, false);
	trace_nvme_irq_poll_done(d->irq, d->qid, reaped);
	nvme_drain_enable(d, d->irq);
	return reaped;
}
EXPORT_SYMBOL_IF_KUNIT(nvme_drain_polled);

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nvme-pci's queues as its feature files see them.
 *
 * struct nvme_queue and struct nvme_dev stay in pci.c.  A feature keeps its
 * per-queue state in struct nvme_queue and a pointer back to the queue, and
 * asks pci.c for the rest through the functions below; none of them takes
 * a lock unless it says so.
 */
#ifndef _NVME_PCI_H
#define _NVME_PCI_H

#include <linux/compiler.h>
#include <linux/jump_label.h>
#include <linux/spinlock_types.h>
#include <linux/types.h>

struct nvme_coal_queue;
struct nvme_coal_sample;
struct nvme_lost_irq_sample;
struct nvme_dev;
struct nvme_drain;
struct nvme_lost_irq;
struct nvme_queue;
struct request;

/**
 * struct nvme_cq_mark - where a completion queue stands
 * @irqs: interrupts serviced on it so far (wraps)
 * @head: its head index
 * @phase: its phase, which flips at each wrap: a queue that went once
 *	round between two marks does not look as if it had not moved
 */
struct nvme_cq_mark {
	u32 irqs;
	u16 head;
	u8 phase;
};

/* Did the queue move between marks @a and @b?  Pure.  Context: any. */
static inline bool nvme_cq_moved(const struct nvme_cq_mark *a,
				 const struct nvme_cq_mark *b)
{
	return a->irqs != b->irqs || a->head != b->head || a->phase != b->phase;
}

/*
 * A copy of a mark that another context may write meanwhile: it may mix
 * two marks, which then differs from where the queue stands (up to a wrap
 * of its counters) and only delays a recovery to the next check.
 */
static inline void nvme_cq_mark_copy(struct nvme_cq_mark *dst,
				     const struct nvme_cq_mark *src)
{
	WRITE_ONCE(dst->irqs, READ_ONCE(src->irqs));
	WRITE_ONCE(dst->head, READ_ONCE(src->head));
	WRITE_ONCE(dst->phase, READ_ONCE(src->phase));
}

/**
 * struct nvme_queue_stats - what a queue's interrupt handler counts
 * @irqs: interrupts serviced: runs of nvme_irq() (the thread in threaded
 *	mode), less those fault injection dropped (wraps)
 * @completions: completions nvme_irq() reaped (wraps)
 * @max_batch: most completions one run of nvme_irq() reaped
 * @qd_sum: commands outstanding at each run of nvme_irq(), summed while
 *	adaptive coalescing is on (wraps)
 *
 * Written by the handler alone, read locklessly by the features, which
 * take differences: 32-bit counters keep it small enough to share the
 * cache line of cq_head, which the stock handler writes anyway (check
 * with pahole where struct nvme_queue places it).  Kept only while a
 * feature reads them (pci_stats.c).
 */
struct nvme_queue_stats {
	u32 irqs;
	u32 completions;
	u32 max_batch;
	u32 qd_sum;
};

DECLARE_STATIC_KEY_TRUE(nvme_pci_counting);

/* Does nvme_irq() keep its counts?  Any context. */
static inline bool nvme_pci_counting_on(void)
{
	return static_branch_likely(&nvme_pci_counting);
}

void nvme_pci_counting_start(void);
void nvme_pci_counting_stop(void);

/*
 * The next queue of @dev from *@qid on whose vector was ever requested (its
 * features started), NULL after the last; *@qid moves past it.  Walks them
 * all with: for (qid = 0; (nvmeq = nvme_pci_next_queue(dev, &qid)); ).
 * Any context: the queues live as long as @dev.
 */
struct nvme_queue *nvme_pci_next_queue(struct nvme_dev *dev, unsigned int *qid);
/* The queue's id; any context. */
u16 nvme_pci_qid(const struct nvme_queue *nvmeq);
/* The Linux interrupt of the queue's vector, once requested; any context. */
int nvme_pci_irq(const struct nvme_queue *nvmeq);
/* The queue's MSI-X vector index; any context. */
u16 nvme_pci_vector(const struct nvme_queue *nvmeq);
/* The lock that serialises the queue's submissions. */
spinlock_t *nvme_pci_sq_lock(struct nvme_queue *nvmeq);
/* What a check of the CQ sees, lockless; any context. */
void nvme_pci_cq_sample(struct nvme_queue *nvmeq,
			struct nvme_lost_irq_sample *s);
/* Commands submitted and not yet reaped, lockless; any context. */
u32 nvme_pci_cq_outstanding(struct nvme_queue *nvmeq);
/* Handler runs and depth, completions, commands outstanding; any context. */
void nvme_pci_coal_sample(struct nvme_queue *nvmeq,
			  struct nvme_coal_sample *s);
/*
 * Reap posted completions with the vector disabled and cq_poll_lock held,
 * as nvme_timeout() does, unless the queue moved from @at or @req is no
 * longer outstanding (either may be NULL), which is decided with both
 * held: a handler run or a poll since the caller's last look, or @req
 * completed by one, takes its find away.  With nvme_pci_counting off, a
 * handler run moves the queue from @at only if it reaped.  Process
 * context.
 *
 * Return: completions reaped, 0 if @req is still outstanding after the
 * reap; -EALREADY if it did not look.
 */
int nvme_pci_reap_at(struct nvme_queue *nvmeq, const struct nvme_cq_mark *at,
		     struct request *req);

/* The queue's statistics, and each feature's per-queue state. */
const struct nvme_queue_stats *nvme_pci_stats(struct nvme_queue *nvmeq);
struct nvme_lost_irq *nvme_pci_lost_irq(struct nvme_queue *nvmeq);
struct nvme_drain *nvme_pci_drain(struct nvme_queue *nvmeq);
struct nvme_coal_queue *nvme_pci_coal(struct nvme_queue *nvmeq);

#endif /* _NVME_PCI_H */

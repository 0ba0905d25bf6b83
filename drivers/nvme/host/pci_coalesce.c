// SPDX-License-Identifier: GPL-2.0
/*
 * Adaptive interrupt coalescing of nvme-pci: sampling, actuators, knobs.
 *
 * The work item of a controller samples its queues once a period.  The
 * first interrupt handler run a period after the last sample queues it, so
 * that a load the policy leaves alone costs no timer and an idle
 * controller nothing; while a queue is moderated it runs from its own
 * timer.  It asks the policy for each queue's state and sets it with the
 * finest actuator available: device coalescing (Feature 08h for the
 * controller, 09h Coalescing Disable for the vectors that must stay
 * immediate) if the controller accepts it, genirq per-vector moderation
 * otherwise.  Admin commands are sent from the work item only, outside
 * the lock, at most NVME_COAL_MAX_CMDS per period and only on a change.
 */
#include <kunit/static_stub.h>
#include <kunit/visibility.h>
#include <linux/debugfs.h>
#include <linux/irq_moderation.h>
#include <linux/ktime.h>
#include <linux/moduleparam.h>
#include <linux/sched/mm.h>
#include <linux/seq_file.h>

#include "nvme.h"
#include "pci_coalesce.h"
#include "pci_debugfs.h"

#include "pci_trace.h"

unsigned int nvme_coal_adaptive = 1;
EXPORT_SYMBOL_IF_KUNIT(nvme_coal_adaptive);
DEFINE_STATIC_KEY_TRUE(nvme_coal_on);

/* the boot switch also switches the handler's accounting */
static void adaptive_coalescing_changed(unsigned int on)
{
	if (on) {
		nvme_pci_counting_start();
		static_branch_enable(&nvme_coal_on);
	} else {
		static_branch_disable(&nvme_coal_on);
		nvme_pci_counting_stop();
	}
}

NVME_PCI_KNOB(adaptive_coalescing, nvme_coal_adaptive, 0, 1,
	      adaptive_coalescing_changed);
MODULE_PARM_DESC(adaptive_coalescing,
		 "moderate busy I/O queues' interrupts adaptively (0-1, default 1)");

/*
 * The policy's thresholds: tuning knobs in /sys/kernel/debug/nvme_pci/, not
 * module parameters (no ABI).  A period reads them all at once with
 * nvme_coal_params().
 */
static struct nvme_coal_params nvme_coal_knobs = {
	.period_ms = 50,
	.high_io_delta = 10000,
	.avg_qd_threshold = 8,
	.total_inflight_io_threshold = 32,
	.max_delay_us = 1000,
};

static const struct nvme_pci_knob nvme_coal_tunables[] = {
	{ .name = "coalescing_period_ms", .val = &nvme_coal_knobs.period_ms,
	  .min = 10, .max = 1000 },
	{ .name = "high_io_delta", .val = &nvme_coal_knobs.high_io_delta,
	  .min = 1, .max = 100000000 },
	{ .name = "avg_qd_threshold", .val = &nvme_coal_knobs.avg_qd_threshold,
	  .min = 0, .max = 65536 },
	{ .name = "total_inflight_io_threshold",
	  .val = &nvme_coal_knobs.total_inflight_io_threshold,
	  .min = 0, .max = 16777216 },
	{ .name = "coalescing_max_delay_us", .val = &nvme_coal_knobs.max_delay_us,
	  .min = 1, .max = IRQ_MODERATION_MAX_US },
};

/* Context: module init. */
void nvme_coal_debugfs_init(void)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(nvme_coal_tunables); i++)
		nvme_pci_debugfs_knob(NULL, &nvme_coal_tunables[i]);
}

VISIBLE_IF_KUNIT void nvme_coal_params(struct nvme_coal_params *p)
{
	/* each member is stored whole; a period may mix old and new ones */
	*p = data_race(nvme_coal_knobs);
	p->enabled = READ_ONCE(nvme_coal_adaptive);
}
EXPORT_SYMBOL_IF_KUNIT(nvme_coal_params);

/*
 * What the work item asks pci.c about the controller's queues.  A KUnit
 * test redirects these to a fake controller (kunit/static_stub.h); without
 * CONFIG_KUNIT they are plain calls.  Context: process, lockless.
 */
VISIBLE_IF_KUNIT struct nvme_coal_queue *
nvme_coal_next_queue(struct nvme_coal_ctrl *cc, unsigned int *qid)
{
	struct nvme_queue *nvmeq;

	KUNIT_STATIC_STUB_REDIRECT(nvme_coal_next_queue, cc, qid);
	nvmeq = nvme_pci_next_queue(cc->ndev, qid);
	return nvmeq ? nvme_pci_coal(nvmeq) : NULL;
}
EXPORT_SYMBOL_IF_KUNIT(nvme_coal_next_queue);

VISIBLE_IF_KUNIT u16 nvme_coal_qid(const struct nvme_coal_queue *q)
{
	KUNIT_STATIC_STUB_REDIRECT(nvme_coal_qid, q);
	return nvme_pci_qid(q->nvmeq);
}
EXPORT_SYMBOL_IF_KUNIT(nvme_coal_qid);

VISIBLE_IF_KUNIT int nvme_coal_irq(const struct nvme_coal_queue *q)
{
	KUNIT_STATIC_STUB_REDIRECT(nvme_coal_irq, q);
	return nvme_pci_irq(q->nvmeq);
}
EXPORT_SYMBOL_IF_KUNIT(nvme_coal_irq);

/* The MSI-X vector index, which Feature 09h names. */
VISIBLE_IF_KUNIT u16 nvme_coal_vector(const struct nvme_coal_queue *q)
{
	KUNIT_STATIC_STUB_REDIRECT(nvme_coal_vector, q);
	return nvme_pci_vector(q->nvmeq);
}
EXPORT_SYMBOL_IF_KUNIT(nvme_coal_vector);

/* Fill in @completions, @qd_runs and @inflight. */
VISIBLE_IF_KUNIT void nvme_coal_sample_queue(struct nvme_coal_queue *q,
					     struct nvme_coal_sample *s)
{
	KUNIT_STATIC_STUB_REDIRECT(nvme_coal_sample_queue, q, s);
	nvme_pci_coal_sample(q->nvmeq, s);
}
EXPORT_SYMBOL_IF_KUNIT(nvme_coal_sample_queue);

/*
 * Returns 0, the NVMe status of a refusal, or -errno if the controller did
 * not answer.  May sleep.
 */
VISIBLE_IF_KUNIT int nvme_coal_set_feature(struct nvme_coal_ctrl *cc,
					   unsigned int fid, u32 dw11)
{
	KUNIT_STATIC_STUB_REDIRECT(nvme_coal_set_feature, cc, fid, dw11);
	return nvme_set_features(cc->ctrl, fid, dw11, NULL, 0, NULL);
}
EXPORT_SYMBOL_IF_KUNIT(nvme_coal_set_feature);

/*
 * The next queue from *@qid on that was ever started, NULL after the last:
 * for (qid = 0; (q = nvme_coal_next(cc, &qid)); ) walks them all.
 */
static struct nvme_coal_queue *nvme_coal_next(struct nvme_coal_ctrl *cc,
					      unsigned int *qid)
{
	struct nvme_coal_queue *q;

	/* the admin queue's state is never started */
	while ((q = nvme_coal_next_queue(cc, qid)))
		if (READ_ONCE(q->cc))
			return q;
	return NULL;
}

/**
 * nvme_coal_kick() - queue the controller's sampling now
 * @cc: the controller's state
 *
 * Context: any (the interrupt handler).
 */
void nvme_coal_kick(struct nvme_coal_ctrl *cc)
{
	KUNIT_STATIC_STUB_REDIRECT(nvme_coal_kick, cc);
	/* sampled now: watched again only if this period says so */
	clear_bit(NVME_COAL_WATCH, &cc->flags);
	/*
	 * nvme_wq, not a system workqueue: the work sends admin commands and
	 * may wait an admin timeout for an answer.
	 */
	if (!test_and_set_bit(NVME_COAL_RUNNING, &cc->flags))
		queue_delayed_work(nvme_wq, &cc->work, 0);
}
EXPORT_SYMBOL_IF_KUNIT(nvme_coal_kick);

/*
 * Somebody else (nvme.irq_moderation_us, /proc/irq/N/moderation_us) owns a
 * vector whose genirq delay @cur is neither 0 nor the one set here, until
 * they set it back to 0.  Context: any.
 */
static bool nvme_coal_external(const struct nvme_coal_queue *q,
			       unsigned int cur)
{
	return cur && cur != q->applied_us;
}

/*
 * Set the vector's genirq delay if it is still ours: compare and set in one
 * step, so a value root writes meanwhile is never overwritten.  Context:
 * work, lock.
 */
static void nvme_coal_set_sw(struct nvme_coal_ctrl *cc,
			     struct nvme_coal_queue *q, u32 us)
{
	int irq = nvme_coal_irq(q);
	unsigned int cur = irq_get_moderation(irq);
	unsigned int noio;
	int ret;

	if (nvme_coal_external(q, cur))
		return;
	if (cur == us) {
		q->applied_us = us;	/* 0 if somebody cleared ours */
		return;
	}
	if (!q->refused) {
		/*
		 * A first engage allocates genirq's state, with cc->lock held,
		 * which a reset waits for (nvme_coal_stop()) before this
		 * controller's I/O can complete: no I/O from its reclaim.
		 */
		noio = memalloc_noio_save();
		ret = irq_update_moderation(irq, cur, us);
		memalloc_noio_restore(noio);
		if (ret == -EBUSY)
			return;		/* written meanwhile: not ours now */
		q->refused = ret;
		if (!ret) {
			q->applied_us = us;
			return;
		}
	}
	if (nvme_pci_warn_once(cc->warned, NVME_PCI_WARN_COAL_GENIRQ))
		dev_info(cc->ctrl->device,
			 "adaptive coalescing: genirq does not moderate irq %d (%pe): its completions are signalled at once\n",
			 irq, ERR_PTR(q->refused));
}

/* The Aggregation Time of a Feature 08h value, in us. */
static u32 nvme_coal_feat_time_us(u32 dw11)
{
	return dw11 == NVME_COAL_DW11_UNKNOWN ? 0 : ((dw11 >> 8) & 0xff) * 100;
}

/*
 * Did the controller alone moderate @q through the period that just ended?
 * Its 08h is on (the commands of the previous period were answered just
 * after that period's sample: nearly all of this one ran under them), the
 * vector is not exempt, and no genirq delay, ours or anybody's, is set.
 * Context: work, lock, before this period's decisions.
 */
static bool nvme_coal_device_carried(struct nvme_coal_ctrl *cc,
				     struct nvme_coal_queue *q, unsigned int irq_us)
{
	u32 dw11 = cc->feat_dw11;

	/* an Aggregation Threshold of 0 signals every entry: nothing to see */
	return cc->feat == NVME_COAL_FEAT_ACCEPTED && !cc->carrying &&
	       dw11 && dw11 != NVME_COAL_DW11_UNKNOWN && (dw11 & 0xff) &&
	       nvme_coal_engaged(&q->pol) && !q->exempt && !q->cd_unknown &&
	       !irq_us && nvme_coal_vector(q);
}

/* What one queue's period says of Feature 08h. */
enum nvme_coal_check {
	NVME_COAL_CHECK_NONE,	/* nothing to judge from */
	NVME_COAL_CHECK_MISS,	/* the handler runs did not fall */
	NVME_COAL_CHECK_HIT,	/* they fell as 08h should make them: wins */
};

/*
 * Accepted is not applied: some controllers take Feature 08h and go on
 * signalling every completion, and the moderated queues would then get
 * neither the controller's coalescing nor genirq's.  Judge 08h by its
 * effect on the handler runs per completion of a queue it carried, against
 * the queue's last period that nothing moderated, in 1024ths (@rpc).
 * Context: work, lock, before this period's decisions.
 */
static enum nvme_coal_check nvme_coal_check_08h(struct nvme_coal_ctrl *cc,
						struct nvme_coal_queue *q,
						const struct nvme_coal_params *p,
						u32 *rpc)
{
	const struct nvme_coal_load *l = &q->load;
	unsigned int irq_us = irq_get_moderation(nvme_coal_irq(q));
	u32 dw11 = cc->feat_dw11;
	u64 expect;

	if (l->completions < NVME_COAL_CHECK_MIN)
		return NVME_COAL_CHECK_NONE;
	*rpc = div_u64((u64)l->runs * 1024, l->completions);
	if (!nvme_coal_engaged(&q->pol) && !irq_us &&
	    ((q->exempt && !q->cd_unknown) || !dw11)) {
		q->base_rpc = *rpc;
		return NVME_COAL_CHECK_NONE;
	}
	if (cc->feat_works || !q->base_rpc || !nvme_coal_device_carried(cc, q, irq_us))
		return NVME_COAL_CHECK_NONE;
	/*
	 * What one message should gather: the Aggregation Threshold, or what
	 * the queue completes within the Aggregation Time (completions are
	 * per nominal period).  The runs tell only if that is half as much
	 * again as a run found without 08h: a controller that applies it then
	 * brings them to two thirds or less, clear of the three quarters that
	 * pass (the handler reaps what piled up, and the local APIC merges
	 * messages: a deep queue under QEMU's TCG cannot tell).
	 */
	expect = min_t(u64, (dw11 & 0xff) + 1,
		       div_u64((u64)l->completions * nvme_coal_feat_time_us(dw11),
			       max(p->period_ms, 1U) * USEC_PER_MSEC));
	if (expect * q->base_rpc * 2 < 3 * 1024)
		return NVME_COAL_CHECK_NONE;
	return (u64)*rpc * 4 <= (u64)q->base_rpc * 3 ?
	       NVME_COAL_CHECK_HIT : NVME_COAL_CHECK_MISS;
}

/*
 * The period's verdict on Feature 08h, one step of a lead (a period that
 * judges nothing does not count): NVME_COAL_CHECK_PERIODS more hits than
 * misses settle that it works until the controller is reset; as many more
 * misses, and the controller is taken to ignore it:
 * nvme_coal_device_target() switches it off and genirq takes over.
 * Context: work, lock.
 */
static void nvme_coal_judge_08h(struct nvme_coal_ctrl *cc,
				enum nvme_coal_check verdict,
				struct nvme_coal_queue *missed, u32 rpc)
{
	if (verdict == NVME_COAL_CHECK_NONE)
		return;
	cc->feat_lead += verdict == NVME_COAL_CHECK_HIT ? 1 : -1;
	if (cc->feat_lead >= NVME_COAL_CHECK_PERIODS)
		cc->feat_works = true;
	if (cc->feat_lead > -NVME_COAL_CHECK_PERIODS)
		return;
	cc->feat = NVME_COAL_FEAT_IGNORED;
	dev_info(cc->ctrl->device,
		 "interrupt coalescing: Feature 08h %#x accepted but not applied (queue %u: %u handler runs per 1024 completions, %u unmoderated): using genirq moderation\n",
		 cc->feat_dw11, nvme_coal_qid(missed), rpc, missed->base_rpc);
}

static void nvme_coal_decide_queue(struct nvme_coal_ctrl *cc,
				   struct nvme_coal_queue *q,
				   const struct nvme_coal_params *p,
				   const struct nvme_coal_load *total)
{
	bool was = nvme_coal_engaged(&q->pol);
	u32 parked = q->pol.parked;
	u32 old = q->pol.delay_us;
	bool changed;

	if (was)
		q->moderated_ns += q->load.elapsed_ns;
	changed = nvme_coal_decide(&q->pol, p, &q->load, total);
	if (!parked != !q->pol.parked)
		trace_nvme_coalesce_park(cc->ctrl->instance, nvme_coal_qid(q),
					 q->pol.parked, parked, old, &q->load,
					 total);
	if (!changed)
		return;
	q->decisions++;
	cc->decisions++;
	trace_nvme_coalesce_decision(cc->ctrl->instance, nvme_coal_qid(q), was, old,
				     nvme_coal_engaged(&q->pol), q->pol.delay_us, &q->load,
				     total);
}

/*
 * The device actuator: the Feature 08h value the controller should have
 * (0 if no queue is moderated) and, per queue, whether its vector is to be
 * exempt.  Context: work, lock.
 */
static u32 nvme_coal_device_target(struct nvme_coal_ctrl *cc)
{
	struct nvme_coal_queue *q;
	u32 delay[2] = { }, batch[2] = { };
	unsigned int qid;
	bool parked;

	if (cc->feat == NVME_COAL_FEAT_REFUSED ||
	    cc->feat == NVME_COAL_FEAT_IGNORED)
		return 0;
	/*
	 * One value for the controller: the longest delay bounds every
	 * moderated queue's wait, and the largest batch lets the busiest one
	 * save what it can; a slower one waits for the time instead.  A
	 * parked queue completes next to nothing: its values are kept only
	 * while no unparked queue is moderated, so that the queue its load
	 * moved to waits for its own delay, not for the old one.
	 */
	for (qid = 0; (q = nvme_coal_next(cc, &qid)); ) {
		if (q->active && nvme_coal_engaged(&q->pol)) {
			parked = q->pol.parked;
			delay[parked] = max(delay[parked], q->pol.delay_us);
			batch[parked] = max(batch[parked], q->pol.batch);
		}
	}
	parked = !delay[0];
	return delay[parked] ?
	       nvme_coal_feat_coalesce(delay[parked], batch[parked]) : 0;
}

/**
 * struct nvme_coal_cmd - a Set Features command as the work item sends it
 * @fid: NVME_FEAT_IRQ_COALESCE (08h) or NVME_FEAT_IRQ_CONFIG (09h)
 * @dw11: the value sent
 * @gen: cc->gen when it was built; an answer from another one is stale
 * @q: 09h: the queue whose vector it concerns
 * @exempt: 09h: the Coalescing Disable it sets, recorded on success
 */
struct nvme_coal_cmd {
	unsigned int fid;
	u32 dw11;
	unsigned int gen;
	struct nvme_coal_queue *q;
	bool exempt;
};

/* Context: work, lock. */
static bool nvme_coal_need_08h(struct nvme_coal_ctrl *cc, u32 dw11)
{
	if (dw11 ? dw11 == cc->refused_dw11 : cc->off_refused)
		return false;	/* asked once, refused */
	return cc->feat_dw11 == NVME_COAL_DW11_UNKNOWN ||
	       !nvme_coal_feat_close(cc->feat_dw11, dw11);
}

/*
 * The controller's 08h value is not known (a command may have reached it
 * across a reset): allow the longest aggregation time it can have until
 * the wanted value is confirmed.  Context: lock.
 */
static void nvme_coal_forget_08h(struct nvme_coal_ctrl *cc)
{
	cc->feat_dw11 = NVME_COAL_DW11_UNKNOWN;
	WRITE_ONCE(cc->hold_us,
		   max(cc->hold_us,
		       roundup(READ_ONCE(nvme_coal_knobs.max_delay_us), 100)));
}

/* The Feature ID of a Set Features 08h or 09h, 0 for any other command. */
static u8 nvme_coal_user_fid(const struct nvme_command *cmd)
{
	u8 fid = le32_to_cpu(cmd->common.cdw10) & 0xff;

	if (cmd->common.opcode != nvme_admin_set_features)
		return 0;
	return fid == NVME_FEAT_IRQ_COALESCE || fid == NVME_FEAT_IRQ_CONFIG ?
	       fid : 0;
}

/*
 * A user 08h is settled (answered, or it never went out): the allowance is
 * @t, or at least @t while another one is on its way, which raised it to
 * its own value.  Context: any, user_lock.
 */
static void nvme_coal_user_settle(struct nvme_coal_ctrl *cc, u32 t)
{
	if (cc->user_inflight)
		cc->user_inflight--;
	if (cc->user_inflight)
		t = max(t, cc->user_hold_us);
	WRITE_ONCE(cc->user_hold_us, t);
}

/**
 * nvme_coal_user_sent() - a command from user space goes to the admin queue
 * @cc: the controller's state
 * @cmd: the command
 *
 * A Set Features 08h from user space (nvme-cli, tools/nvme/nvme-coal, the
 * ioctl or io_uring) has the controller hold completions back once it
 * applies it, which may be before it answers: from now on the
 * lost-interrupt poller and the early re-check allow for its aggregation
 * time (nvme_coal_hold_ns()), as for the policy's own.
 *
 * Context: blk-mq dispatch (any context); takes user_lock.
 */
void nvme_coal_user_sent(struct nvme_coal_ctrl *cc,
			 const struct nvme_command *cmd)
{
	unsigned long flags;
	u32 t;

	if (nvme_coal_user_fid(cmd) != NVME_FEAT_IRQ_COALESCE)
		return;
	t = nvme_coal_feat_time_us(le32_to_cpu(cmd->common.cdw11) & 0xffff);
	raw_spin_lock_irqsave(&cc->user_lock, flags);
	cc->user_inflight++;
	WRITE_ONCE(cc->user_hold_us, max(cc->user_hold_us, t));
	raw_spin_unlock_irqrestore(&cc->user_lock, flags);
}
EXPORT_SYMBOL_IF_KUNIT(nvme_coal_user_sent);

/**
 * nvme_coal_user_unsent() - the command nvme_coal_user_sent() saw did not go out
 * @cc: the controller's state
 * @cmd: the command
 *
 * The allowance is the last 08h value user space had taken again.
 *
 * Context: blk-mq dispatch (any context); takes user_lock.
 */
void nvme_coal_user_unsent(struct nvme_coal_ctrl *cc,
			   const struct nvme_command *cmd)
{
	unsigned long flags;

	if (nvme_coal_user_fid(cmd) != NVME_FEAT_IRQ_COALESCE)
		return;
	raw_spin_lock_irqsave(&cc->user_lock, flags);
	nvme_coal_user_settle(cc, nvme_coal_feat_time_us(cc->user_dw11));
	raw_spin_unlock_irqrestore(&cc->user_lock, flags);
}
EXPORT_SYMBOL_IF_KUNIT(nvme_coal_user_unsent);

/**
 * nvme_coal_user_done() - the controller answered a command from user space
 * @cc: the controller's state
 * @cmd: the command
 * @status: the NVMe status of its answer
 *
 * A taken 08h is the controller's value from now on: its aggregation time
 * is the allowance, down to none for 0 (a saved one, SV, is also what a
 * reset brings back); the policy, where it runs, takes it as the
 * controller's value at its next period, and after a 09h sends again
 * every vector's Coalescing Disable it wants.  A refused 08h leaves the
 * controller with its value: the allowance is the last one user space had
 * taken again (the policy's own is its own).
 *
 * Context: completion (interrupt handler, irq_poll or a poller); takes
 * user_lock.
 */
void nvme_coal_user_done(struct nvme_coal_ctrl *cc,
			 const struct nvme_command *cmd, u16 status)
{
	u8 fid = nvme_coal_user_fid(cmd);
	u32 dw11 = le32_to_cpu(cmd->common.cdw11) & 0xffff;
	bool save = le32_to_cpu(cmd->common.cdw10) & BIT(31);
	unsigned long flags;

	if (!fid)
		return;
	atomic_long_inc(&cc->user_cmds);
	raw_spin_lock_irqsave(&cc->user_lock, flags);
	if (fid == NVME_FEAT_IRQ_CONFIG) {
		if (!status) {
			cc->user_09h = true;
			/* a reset brings it back: the vectors are not known then */
			if (save)
				WRITE_ONCE(cc->user_09h_saved, true);
		}
	} else if (status) {
		nvme_coal_user_settle(cc, nvme_coal_feat_time_us(cc->user_dw11));
	} else {
		WRITE_ONCE(cc->user_dw11, dw11);
		/* SV: a reset brings this value back (an unsaved one leaves it) */
		if (save)
			cc->user_saved_dw11 = dw11;
		cc->user_08h = true;
		nvme_coal_user_settle(cc, nvme_coal_feat_time_us(dw11));
	}
	raw_spin_unlock_irqrestore(&cc->user_lock, flags);
}
EXPORT_SYMBOL_IF_KUNIT(nvme_coal_user_done);

/*
 * What user space had the controller take, into the policy's state: the
 * 08h value, and after a 09h no vector's Coalescing Disable taken for
 * granted (but where the controller refused the policy's), so that the
 * policy sends again the ones it wants and genirq carries its moderated
 * queues meanwhile.  Context: work, lock; takes user_lock.
 */
static void nvme_coal_user_sync(struct nvme_coal_ctrl *cc)
{
	struct nvme_coal_queue *q;
	unsigned int qid;
	bool cd;

	raw_spin_lock_irq(&cc->user_lock);
	if (cc->user_08h)
		cc->feat_dw11 = cc->user_dw11;
	cc->user_08h = false;
	cd = cc->user_09h;
	cc->user_09h = false;
	raw_spin_unlock_irq(&cc->user_lock);
	for (qid = 0; cd && (q = nvme_coal_next(cc, &qid)); )
		q->cd_unknown |= !q->cd_refused;
}

/*
 * The controller took an 08h of the policy's: user space's value is gone,
 * and with it its allowance, unless a command of user space's is still on
 * its way.  One answered since this period's nvme_coal_user_sync() may
 * have reached the controller before or after the policy's: the value is
 * not known, and is sent again.  Context: work, lock; takes user_lock.
 */
static void nvme_coal_user_replaced(struct nvme_coal_ctrl *cc)
{
	bool crossed;

	raw_spin_lock_irq(&cc->user_lock);
	crossed = cc->user_08h;
	cc->user_08h = false;
	if (!crossed) {
		WRITE_ONCE(cc->user_dw11, 0);
		if (!cc->user_inflight)
			WRITE_ONCE(cc->user_hold_us, 0);
	}
	raw_spin_unlock_irq(&cc->user_lock);
	if (crossed)
		nvme_coal_forget_08h(cc);
}

/*
 * The controller is reset, or comes back from one: its 08h is what user
 * space saved, 0 if nothing; a user command failed or cancelled meanwhile
 * is never answered, and one sent afterwards raises the allowance again.
 * Context: lock; takes user_lock.
 */
static void nvme_coal_user_reset(struct nvme_coal_ctrl *cc)
{
	raw_spin_lock_irq(&cc->user_lock);
	cc->user_08h = false;
	cc->user_09h = false;
	cc->user_inflight = 0;
	WRITE_ONCE(cc->user_dw11, cc->user_saved_dw11);
	WRITE_ONCE(cc->user_hold_us, nvme_coal_feat_time_us(cc->user_dw11));
	raw_spin_unlock_irq(&cc->user_lock);
}

/*
 * Which unmoderated vectors the controller would coalesce if Feature 08h
 * were on: @pending, one whose exemption (09h Coalescing Disable) is not
 * confirmed yet; @blocked, one the controller refused to exempt.
 * Vector 0 is the admin queue's: the controller never coalesces it.
 * Context: work, lock.
 */
static void nvme_coal_uncovered(struct nvme_coal_ctrl *cc, bool *pending,
				bool *blocked)
{
	struct nvme_coal_queue *q;
	unsigned int qid;

	*pending = false;
	*blocked = false;
	for (qid = 0; (q = nvme_coal_next(cc, &qid)); ) {
		if (!q->active || nvme_coal_engaged(&q->pol) ||
		    !nvme_coal_vector(q))
			continue;
		if (q->exempt && !q->cd_unknown)
			continue;
		if (q->cd_refused)
			*blocked = true;
		else
			*pending = true;
	}
}

/*
 * How many commands this period may send: refilled one per
 * NVME_COAL_CMD_INTERVAL_MS of the period's clock, up to the burst.
 * Context: work, lock.
 */
static unsigned int nvme_coal_cmd_budget(struct nvme_coal_ctrl *cc,
					 u64 now_ns)
{
	const u64 interval = NVME_COAL_CMD_INTERVAL_MS * NSEC_PER_MSEC;
	u64 add = now_ns > cc->cmd_tokens_ns ?
		  div64_u64(now_ns - cc->cmd_tokens_ns, interval) : 0;

	if (cc->cmd_tokens + add >= NVME_COAL_CMD_BURST) {
		cc->cmd_tokens = NVME_COAL_CMD_BURST;
		cc->cmd_tokens_ns = now_ns;
	} else if (add) {
		cc->cmd_tokens += add;
		cc->cmd_tokens_ns += add * interval;
	}
	return min(cc->cmd_tokens, NVME_COAL_MAX_CMDS);
}

/*
 * Build this period's commands.  Feature 08h coalesces every vector that
 * is not exempted, so a non-zero 08h goes out only once every unmoderated
 * vector's exemption is confirmed, in an earlier period: the probe
 * included, and a QD1 queue never waits for the aggregation time.  A
 * vector that cannot be exempted leaves the moderated queues to genirq and
 * the controller off.  Exemptions stay when 08h goes back to 0: a later
 * engage needs no command for them.
 *
 * At most @budget commands; 08h, due or not, keeps its place.
 *
 * Context: work, lock.  Returns the number of commands queued in @cmds.
 */
static int nvme_coal_actuate(struct nvme_coal_ctrl *cc,
			     struct nvme_coal_cmd *cmds, unsigned int budget)
{
	u32 want = nvme_coal_device_target(cc);
	/*
	 * A value the controller refused: genirq carries the moderated
	 * queues and the controller is switched off, not left at an old value.
	 */
	bool carry = want && want == cc->refused_dw11;
	bool pending, blocked, device, send_08h, held, exempt;
	struct nvme_coal_queue *q;
	u32 dw11, next, after;
	unsigned int qid;
	int room, n = 0;
	u16 vector;

	nvme_coal_uncovered(cc, &pending, &blocked);
	carry |= want && blocked;
	dw11 = carry ? 0 : want;
	/*
	 * The 08h value to ask for: while exemptions are pending no new one;
	 * the controller keeps what it has, switched off if that is unknown
	 * (a command may have reached it across a reset).
	 */
	next = dw11;
	if (dw11 && pending)
		next = cc->feat_dw11 == NVME_COAL_DW11_UNKNOWN ? 0 : cc->feat_dw11;
	send_08h = nvme_coal_need_08h(cc, next);
	held = send_08h && !budget;
	send_08h &= !held;
	/* the controller carries the moderated queues while its 08h is on */
	after = send_08h ? next : cc->feat_dw11;
	device = cc->feat == NVME_COAL_FEAT_ACCEPTED && !carry && after &&
		 after != NVME_COAL_DW11_UNKNOWN;
	/* 08h, when due, is sent last, after the vectors it concerns */
	room = budget - send_08h;
	cc->carrying = carry;

	for (qid = 0; (q = nvme_coal_next(cc, &qid)); ) {
		if (!q->active)
			continue;
		/*
		 * genirq carries the queue unless the controller coalesces it:
		 * a vector still exempt (its 09h not yet sent, or refused) it
		 * does not
		 */
		nvme_coal_set_sw(cc, q, device && !q->exempt && !q->cd_unknown ?
				 0 : q->pol.delay_us);
		/* only moderated queues wait for the controller's aggregation */
		exempt = !nvme_coal_engaged(&q->pol);
		if (!dw11 || q->cd_refused ||
		    (q->exempt == exempt && !q->cd_unknown))
			continue;
		vector = nvme_coal_vector(q);
		if (!vector)
			continue;
		if (n >= room) {
			/* due: held back by the rate bound, or by the cap */
			held |= budget < NVME_COAL_MAX_CMDS;
			continue;
		}
		cmds[n++] = (struct nvme_coal_cmd) {
			.fid = NVME_FEAT_IRQ_CONFIG, .q = q, .gen = cc->gen,
			.dw11 = nvme_coal_feat_vector(vector, exempt),
			.exempt = exempt,
		};
	}
	/* the first 08h is the probe of the feature */
	if (send_08h) {
		cmds[n++] = (struct nvme_coal_cmd) {
			.fid = NVME_FEAT_IRQ_COALESCE, .dw11 = next,
			.gen = cc->gen,
		};
		/* the controller may apply it before we hear back */
		WRITE_ONCE(cc->hold_us, max(cc->hold_us,
					    nvme_coal_feat_time_us(next)));
	}
	cc->cmd_tokens -= n;
	cc->cmds_held += held;
	return n;
}

/* Context: work, lock. */
static void nvme_coal_refuse(struct nvme_coal_ctrl *cc, unsigned int fid,
			     int status)
{
	cc->feat = NVME_COAL_FEAT_REFUSED;
	cc->feat_status = status;
	dev_info(cc->ctrl->device,
		 "interrupt coalescing: Set Features %02xh refused (status %#x): using genirq moderation\n",
		 fid, status);
}

/*
 * Record the controller's answer to one command.  A refused 08h value is
 * not asked for again; the probe's refusal, or a 09h refusal before any
 * 09h was taken, means the controller cannot coalesce the way the policy
 * needs: genirq from then on.  A later 09h refusal concerns its vector
 * only.  Returns false for an answer from before a reset.  Context:
 * work, lock.
 */
static bool nvme_coal_answer(struct nvme_coal_ctrl *cc,
			     const struct nvme_coal_cmd *cmd, int status)
{
	if (cmd->gen != cc->gen) {
		/* sent before a reset: it may have reached the new controller */
		if (cmd->fid == NVME_FEAT_IRQ_COALESCE && !status)
			nvme_coal_forget_08h(cc);
		return false;
	}
	if (cmd->fid == NVME_FEAT_IRQ_COALESCE) {
		if (!status) {
			cc->feat_dw11 = cmd->dw11;
			nvme_coal_user_replaced(cc);
			if (cmd->dw11)
				cc->refused_dw11 = NVME_COAL_DW11_NONE;
			cc->off_refused = false;
			if (cc->feat == NVME_COAL_FEAT_UNTRIED)
				cc->feat = NVME_COAL_FEAT_ACCEPTED;
		} else {
			if (cmd->dw11)
				cc->refused_dw11 = cmd->dw11;
			else
				cc->off_refused = true;
			if (cc->feat == NVME_COAL_FEAT_UNTRIED)
				nvme_coal_refuse(cc, cmd->fid, status);
		}
		/* while the value is unknown, the longest hold stays allowed */
		if (cc->feat_dw11 != NVME_COAL_DW11_UNKNOWN)
			WRITE_ONCE(cc->hold_us,
				   nvme_coal_feat_time_us(cc->feat_dw11));
		return true;
	}
	if (!status) {
		cc->cd_accepted = true;
		if (cmd->q->active) {
			cmd->q->exempt = cmd->exempt;
			cmd->q->cd_unknown = false;
		}
	} else if (!cc->cd_accepted && cc->feat != NVME_COAL_FEAT_REFUSED) {
		nvme_coal_refuse(cc, cmd->fid, status);
	} else {
		cmd->q->cd_refused = true;
	}
	return true;
}

/*
 * Send the commands; record what the controller took.  Context: the work
 * item, without the lock: a command can wait for a reset, and the reset
 * takes the lock when it frees the vectors.
 */
static void nvme_coal_send(struct nvme_coal_ctrl *cc,
			   struct nvme_coal_cmd *cmds, int n)
{
	bool fresh = true;
	int i, ret;

	for (i = 0; i < n && fresh; i++) {
		mutex_lock(&cc->lock);
		/*
		 * Built before a reset, or the controller is not there now,
		 * or it is being put into a low power state (suspend).
		 */
		if (cmds[i].gen != cc->gen ||
		    nvme_ctrl_state(cc->ctrl) != NVME_CTRL_LIVE ||
		    test_bit(NVME_COAL_SUSPENDED, &cc->flags)) {
			mutex_unlock(&cc->lock);
			return;
		}
		cc->inflight++;
		cc->cmds++;
		mutex_unlock(&cc->lock);
		ret = nvme_coal_set_feature(cc, cmds[i].fid, cmds[i].dw11);

		mutex_lock(&cc->lock);
		cc->inflight--;
		/* no answer (reset, removal): try next period */
		fresh = ret >= 0 && nvme_coal_answer(cc, &cmds[i], ret);
		mutex_unlock(&cc->lock);
	}
}

/*
 * A queue the policy leaves alone next period whatever it does at QD1: not
 * moderated nor counting toward it, and at most one command outstanding
 * on average at its handler runs (a storm needs more).  Context: lock.
 */
static bool nvme_coal_shallow(const struct nvme_coal_queue *q)
{
	return q->pol.state == NVME_COAL_OFF && q->valid &&
	       q->load.avg_qd16 <= NVME_COAL_QD1;
}

/*
 * One period: sample every queue, decide, actuate.  Returns whether the
 * next period must come from the work's timer: a queue is moderated (an
 * idle one gets no interrupt that would release it), or a command went
 * out or was held back.  Otherwise the next handler run a period from now
 * queues the work: a load the policy leaves alone costs no timer.  Sets
 * NVME_COAL_WATCH if every started queue is shallow and nothing is due:
 * then that is a second from now; NVME_COAL_CALM if every one is off and
 * was not high: NVME_COAL_CALM_PERIODS periods from now.
 * Context: the work item (a KUnit test with a fake controller).
 */
VISIBLE_IF_KUNIT bool nvme_coal_period(struct nvme_coal_ctrl *cc, u64 now_ns)
{
	enum nvme_coal_check verdict = NVME_COAL_CHECK_NONE;
	struct nvme_coal_cmd cmds[NVME_COAL_MAX_CMDS];
	struct nvme_coal_queue *missed = NULL;
	struct nvme_coal_load total = { };
	u32 rpc = 0, missed_rpc = 0;
	struct nvme_coal_params p;
	struct nvme_coal_queue *q;
	unsigned int qid;
	bool engaged = false, watch = true, calm = true;
	u64 held;
	int n;

	nvme_coal_params(&p);
	mutex_lock(&cc->lock);
	nvme_coal_user_sync(cc);
	for (qid = 0; (q = nvme_coal_next(cc, &qid)); ) {
		struct nvme_coal_sample s = { .now_ns = now_ns };

		q->valid = false;
		if (!q->active)
			continue;
		nvme_coal_sample_queue(q, &s);
		q->valid = nvme_coal_measure(&q->pol, &s, p.period_ms, &q->load);
		q->load.engaged = nvme_coal_engaged(&q->pol);
		if (q->valid)
			nvme_coal_add_load(&total, &q->load);
	}
	for (qid = 0; (q = nvme_coal_next(cc, &qid)); ) {
		enum nvme_coal_check c = NVME_COAL_CHECK_NONE;

		if (!q->active)
			continue;
		if (q->valid) {
			/* the period as the policy sees it, before it decides */
			trace_nvme_coalesce_sample(cc->ctrl->instance, nvme_coal_qid(q),
						   &q->load, nvme_coal_engaged(&q->pol),
						   q->pol.delay_us);
			c = nvme_coal_check_08h(cc, q, &p, &rpc);
			if (c == NVME_COAL_CHECK_MISS && !missed) {
				missed = q;
				missed_rpc = rpc;
			}
			verdict = max(verdict, c);
			nvme_coal_decide_queue(cc, q, &p, &total);
		}
		/* switched off: the timer runs until every queue is released */
		engaged |= nvme_coal_engaged(&q->pol);
		watch &= nvme_coal_shallow(q);
		calm &= q->valid && q->pol.state == NVME_COAL_OFF;
	}
	if (!cc->feat_works)
		nvme_coal_judge_08h(cc, verdict, missed, missed_rpc);
	held = cc->cmds_held;
	n = nvme_coal_actuate(cc, cmds, nvme_coal_cmd_budget(cc, now_ns));
	held = cc->cmds_held - held;
	assign_bit(NVME_COAL_WATCH, &cc->flags, watch && !n && !held);
	assign_bit(NVME_COAL_CALM, &cc->flags, calm && !n && !held);
	mutex_unlock(&cc->lock);
	nvme_coal_send(cc, cmds, n);
	/* commands for a controller that is not live wait for an interrupt */
	return engaged ||
	       ((n || held) && nvme_ctrl_state(cc->ctrl) == NVME_CTRL_LIVE);
}
EXPORT_SYMBOL_IF_KUNIT(nvme_coal_period);

/* the sample after a calm wait, if not much later, is judged */
static_assert(NVME_COAL_CALM_PERIODS < NVME_COAL_STALE_PERIODS);

/*
 * How long after a period without a timer the first handler run queues
 * the next one: a period; a second if the controller is watched;
 * NVME_COAL_CALM_PERIODS periods if it is calm, counted in milliseconds
 * before they are rounded up to jiffies, so that the wait stays under the
 * policy's stale limit at any HZ.  Context: the work item.
 */
VISIBLE_IF_KUNIT unsigned long nvme_coal_wait(const struct nvme_coal_ctrl *cc,
					      u32 period_ms)
{
	if (test_bit(NVME_COAL_WATCH, &cc->flags))
		return msecs_to_jiffies(max_t(u32, period_ms, NVME_COAL_WATCH_MS));
	if (test_bit(NVME_COAL_CALM, &cc->flags))
		return msecs_to_jiffies(NVME_COAL_CALM_PERIODS * period_ms);
	return msecs_to_jiffies(period_ms);
}
EXPORT_SYMBOL_IF_KUNIT(nvme_coal_wait);

static void nvme_coal_work(struct work_struct *work)
{
	struct nvme_coal_ctrl *cc = container_of(to_delayed_work(work),
						 struct nvme_coal_ctrl, work);
	u32 period_ms;
	bool more;

	/* NVME_COAL_RUNNING stays set: no interrupt queues the work again */
	if (test_bit(NVME_COAL_DEAD, &cc->flags) ||
	    test_bit(NVME_COAL_SUSPENDED, &cc->flags))
		return;
	more = nvme_coal_period(cc, ktime_get_ns());
	if (test_bit(NVME_COAL_DEAD, &cc->flags) ||
	    test_bit(NVME_COAL_SUSPENDED, &cc->flags))
		return;
	period_ms = READ_ONCE(nvme_coal_knobs.period_ms);
	if (more) {
		queue_delayed_work(nvme_wq, &cc->work,
				   msecs_to_jiffies(period_ms));
		return;
	}
	/*
	 * The first handler run after the wait samples again; one that reads
	 * the old @due only samples early.
	 */
	WRITE_ONCE(cc->due, get_jiffies_64() + nvme_coal_wait(cc, period_ms));
	clear_bit(NVME_COAL_RUNNING, &cc->flags);
}

static const char *nvme_coal_state(const struct nvme_coal_queue *q,
				   unsigned int cur)
{
	if (!q->active)
		return "stopped";
	if (nvme_coal_external(q, cur))
		return "external";
	return nvme_coal_engaged(&q->pol) ? "moderated" : "off";
}

static const char *const nvme_coal_policy_names[] = {
	[NVME_COAL_OFF] = "off",
	[NVME_COAL_ARMING] = "arming",
	[NVME_COAL_ENGAGED] = "engaged",
	[NVME_COAL_HOLDOFF] = "hold-off",
};

static int coalescing_show(struct seq_file *m, void *unused)
{
	static const char * const feat[] = {
		[NVME_COAL_FEAT_UNTRIED] = "untried",
		[NVME_COAL_FEAT_ACCEPTED] = "accepted",
		[NVME_COAL_FEAT_REFUSED] = "refused",
		[NVME_COAL_FEAT_IGNORED] = "ignored",
	};
	struct nvme_coal_ctrl *cc = m->private;
	struct nvme_coal_queue *q;
	const char *actuator;
	struct nvme_coal_params p;
	unsigned int qid;
	bool sw = false;

	nvme_coal_params(&p);
	mutex_lock(&cc->lock);
	for (qid = 0; (q = nvme_coal_next(cc, &qid)); )
		sw |= q->active && !q->refused;
	if (cc->feat == NVME_COAL_FEAT_ACCEPTED && !cc->carrying)
		actuator = "device";
	else
		actuator = sw ? "genirq" : "none";
	seq_printf(m, "adaptive: %s\n", p.enabled ? "on" : "off");
	seq_printf(m, "actuator: %s\n", actuator);
	seq_printf(m, "feature_08h: %s\n", feat[cc->feat]);
	if (cc->feat == NVME_COAL_FEAT_REFUSED)
		seq_printf(m, "feature_status: %#x\n", cc->feat_status);
	seq_printf(m, "feature_08h_dw11: %#x\n", cc->feat_dw11);
	seq_printf(m, "feature_08h_effect: %s\n",
		   cc->feat == NVME_COAL_FEAT_IGNORED ? "none" :
		   cc->feat_works ? "seen" : "unknown");
	seq_printf(m, "feature_08h_lead: %d\n", cc->feat_lead);
	seq_printf(m, "decisions: %llu\n", cc->decisions);
	seq_printf(m, "admin_commands: %llu\n", cc->cmds);
	seq_printf(m, "admin_commands_held: %llu\n", cc->cmds_held);
	seq_printf(m, "user_commands: %ld\n", atomic_long_read(&cc->user_cmds));
	seq_printf(m, "user_08h_dw11: %#x\n", READ_ONCE(cc->user_dw11));
	seq_printf(m, "hold_us: %u\n",
		   max(READ_ONCE(cc->hold_us), READ_ONCE(cc->user_hold_us)));
	for (qid = 0; (q = nvme_coal_next(cc, &qid)); ) {
		u16 id = nvme_coal_qid(q);
		unsigned int cur = 0;

		/* a stopped queue's irq number may be another vector's now */
		if (q->active)
			cur = irq_get_moderation(nvme_coal_irq(q));

		seq_printf(m, "q%u.state: %s\n", id, nvme_coal_state(q, cur));
		seq_printf(m, "q%u.policy: %s\n", id,
			   nvme_coal_policy_names[q->pol.state]);
		seq_printf(m, "q%u.delay_us: %u\n", id, q->pol.delay_us);
		/* the delay of this code on the vector now */
		seq_printf(m, "q%u.irq_delay_us: %u\n", id,
			   cur == q->applied_us ? cur : 0);
		seq_printf(m, "q%u.avg_qd: %u\n", id, q->load.avg_qd);
		seq_printf(m, "q%u.completions: %u\n", id, q->load.completions);
		seq_printf(m, "q%u.runs: %u\n", id, q->load.runs);
		seq_printf(m, "q%u.storm: %u\n", id, q->pol.storm);
		seq_printf(m, "q%u.parked: %u\n", id, q->pol.parked);
		seq_printf(m, "q%u.trickled: %u\n", id, q->pol.trickled);
		seq_printf(m, "q%u.exempt: %u\n", id, q->exempt);
		seq_printf(m, "q%u.cd_unknown: %u\n", id, q->cd_unknown);
		seq_printf(m, "q%u.decisions: %llu\n", id, q->decisions);
		seq_printf(m, "q%u.moderated_ms: %llu\n", id,
			   div_u64(q->moderated_ns, NSEC_PER_MSEC));
	}
	mutex_unlock(&cc->lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(coalescing);

/**
 * nvme_coal_ctrl_init() - set up a controller's adaptive coalescing
 * @cc: the state, in the controller's private data
 * @ctrl: the controller
 * @ndev: the same controller, whose queues the work item walks
 * @warned: the controller's warn-once bitmap
 * @parent: the controller's debugfs directory (may be an error pointer)
 *
 * Context: process.
 */
void nvme_coal_ctrl_init(struct nvme_coal_ctrl *cc, struct nvme_ctrl *ctrl,
			 struct nvme_dev *ndev, unsigned long *warned,
			 struct dentry *parent)
{
	cc->ctrl = ctrl;
	cc->ndev = ndev;
	cc->warned = warned;
	cc->refused_dw11 = NVME_COAL_DW11_NONE;
	cc->due = get_jiffies_64();
	mutex_init(&cc->lock);
	raw_spin_lock_init(&cc->user_lock);
	INIT_DELAYED_WORK(&cc->work, nvme_coal_work);
	debugfs_create_file("coalescing", 0400, parent, cc, &coalescing_fops);
}
EXPORT_SYMBOL_IF_KUNIT(nvme_coal_ctrl_init);

/**
 * nvme_coal_ctrl_stop() - stop a controller's sampling for good
 * @cc: the controller's state
 *
 * Context: process, after every vector of the controller is freed (no
 * handler can start the work again) and while the admin queue still
 * exists (the work may be sending a command).  A state that was never
 * initialised (probe failed early) is left alone.
 */
void nvme_coal_ctrl_stop(struct nvme_coal_ctrl *cc)
{
	if (!cc->ctrl)
		return;
	set_bit(NVME_COAL_DEAD, &cc->flags);
	set_bit(NVME_COAL_RUNNING, &cc->flags);
	cancel_delayed_work_sync(&cc->work);
}
EXPORT_SYMBOL_IF_KUNIT(nvme_coal_ctrl_stop);

/**
 * nvme_coal_suspend() - hold a controller's sampling for a suspend
 * @cc: the controller's state
 *
 * Host-managed suspend keeps the controller live and its vectors
 * requested while it changes the power state: no Set Features command
 * may go out around that, and the work must not run on until
 * suspend_device_irqs().  The queues keep what they have; the controller
 * keeps its features across the power state change.
 *
 * Context: process, the controller's queues frozen (nvme_suspend()).
 * Every command sent before has been answered when this returns.
 */
void nvme_coal_suspend(struct nvme_coal_ctrl *cc)
{
	if (!cc->ctrl)
		return;
	set_bit(NVME_COAL_SUSPENDED, &cc->flags);
	/* no interrupt queues the work until nvme_coal_resume() */
	set_bit(NVME_COAL_RUNNING, &cc->flags);
	cancel_delayed_work_sync(&cc->work);
}
EXPORT_SYMBOL_IF_KUNIT(nvme_coal_suspend);

/**
 * nvme_coal_resume() - let the sampling run again after a suspend
 * @cc: the controller's state
 *
 * The next interrupt starts the sampling, which sends what the load then
 * wants.  Without nvme_coal_suspend() before (the controller was shut
 * down instead, or the suspend failed early), nothing changes.
 *
 * Context: process (nvme_resume(), or nvme_suspend() failing).
 */
void nvme_coal_resume(struct nvme_coal_ctrl *cc)
{
	if (!cc->ctrl || !test_and_clear_bit(NVME_COAL_SUSPENDED, &cc->flags))
		return;
	if (!test_bit(NVME_COAL_DEAD, &cc->flags))
		clear_bit(NVME_COAL_RUNNING, &cc->flags);
}
EXPORT_SYMBOL_IF_KUNIT(nvme_coal_resume);

/**
 * nvme_coal_start() - an I/O queue's vector was requested
 * @q: the queue's state
 * @cc: its controller's state
 * @nvmeq: the queue; the admin queue is never moderated
 *
 * The vector starts unmoderated.  The controller's features went back to
 * their defaults when its last queue stopped (nvme_coal_stop()).
 *
 * Context: process.
 */
void nvme_coal_start(struct nvme_coal_queue *q, struct nvme_coal_ctrl *cc,
		     struct nvme_queue *nvmeq)
{
	struct nvme_coal_queue *other;
	unsigned int qid;
	bool first = true;
	int refused;

	q->nvmeq = nvmeq;
	if (!nvme_coal_qid(q))
		return;
	/* known now, so that the debugfs file tells it before any load */
	refused = irq_can_moderate(nvme_coal_irq(q));
	mutex_lock(&cc->lock);
	for (qid = 0; (other = nvme_coal_next(cc, &qid)); )
		first &= !other->active;
	/* a command still on its way may reach the controller just reset */
	if (first && cc->inflight)
		nvme_coal_forget_08h(cc);
	/*
	 * A user command whose LIVE check passed just before the reset
	 * began may be counted after nvme_coal_stop() reset the count, and
	 * then cancelled unanswered: the count starts again from nothing.
	 */
	if (first)
		nvme_coal_user_reset(cc);
	memset(&q->pol, 0, sizeof(q->pol));
	q->applied_us = 0;
	q->base_rpc = 0;
	q->refused = refused;
	q->exempt = false;
	q->cd_refused = false;
	q->cd_unknown = READ_ONCE(cc->user_09h_saved);
	q->active = true;
	WRITE_ONCE(q->cc, cc);
	mutex_unlock(&cc->lock);
}
EXPORT_SYMBOL_IF_KUNIT(nvme_coal_start);

/**
 * nvme_coal_stop() - an I/O queue's vector is about to be freed
 * @q: the queue's state
 *
 * free_irq() ends the vector's moderation; the statistics stay.
 *
 * Context: process.
 */
void nvme_coal_stop(struct nvme_coal_queue *q)
{
	struct nvme_coal_ctrl *cc = q->cc;
	struct nvme_coal_queue *other;
	unsigned int qid;
	bool last = true;

	if (!cc)
		return;
	mutex_lock(&cc->lock);
	q->active = false;
	/* nothing moderated is left to report; nvme_coal_start() starts afresh */
	memset(&q->pol, 0, sizeof(q->pol));
	for (qid = 0; (other = nvme_coal_next(cc, &qid)); )
		last &= !other->active;
	if (last) {
		/*
		 * The controller is being disabled or reset: its features go
		 * back to their defaults.  Commands built or sent before are
		 * stale from now on; one still on its way may reach the next
		 * controller, and the value is then not known.
		 */
		cc->gen++;
		cc->refused_dw11 = NVME_COAL_DW11_NONE;
		cc->off_refused = false;
		cc->carrying = false;
		/* new firmware may apply 08h: tried and judged again */
		if (cc->feat == NVME_COAL_FEAT_IGNORED)
			cc->feat = NVME_COAL_FEAT_UNTRIED;
		cc->feat_works = false;
		cc->feat_lead = 0;
		/* what user space saved (SV) comes back, the rest does not */
		nvme_coal_user_reset(cc);
		if (cc->inflight) {
			nvme_coal_forget_08h(cc);
		} else {
			cc->feat_dw11 = READ_ONCE(cc->user_dw11);
			WRITE_ONCE(cc->hold_us, 0);
		}
	}
	mutex_unlock(&cc->lock);
}
EXPORT_SYMBOL_IF_KUNIT(nvme_coal_stop);

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Adaptive interrupt coalescing of nvme-pci: a per-controller work item
 * samples each I/O queue every period, asks the policy (pci_coalesce_policy.c)
 * whether the queue should be moderated and for how long, and drives the
 * actuator: device coalescing (Features 08h/09h) where the controller
 * accepts it, genirq per-vector moderation everywhere else.
 */
#ifndef _NVME_PCI_COALESCE_H
#define _NVME_PCI_COALESCE_H

#include <linux/bitops.h>
#include <linux/dcache.h>
#include <linux/jiffies.h>
#include <linux/jump_label.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/time64.h>
#include <linux/types.h>
#include <linux/workqueue.h>

#include "pci_coalesce_policy.h"
#include "pci.h"

struct nvme_command;
struct nvme_ctrl;

/* Set Features commands one period may send. */
#define NVME_COAL_MAX_CMDS	4
/*
 * Set Features commands a controller is sent over time: a burst of up to
 * NVME_COAL_CMD_BURST, NVME_COAL_MAX_CMDS a period (exempting the vectors
 * of 15 queues and switching 08h on takes four periods), then one per
 * NVME_COAL_CMD_INTERVAL_MS: a controller with more unmoderated vectors
 * waits a second more per eight before 08h goes on.  A steady load needs
 * none; a queue that engages and is released every period would otherwise
 * cost 20 a second, and consumer firmware is not made for a stream of
 * admin commands.
 */
#define NVME_COAL_CMD_BURST		16
#define NVME_COAL_CMD_INTERVAL_MS	125

enum nvme_coal_feat {
	NVME_COAL_FEAT_UNTRIED,	/* no queue was moderated yet */
	NVME_COAL_FEAT_ACCEPTED,	/* Features 08h and 09h can be set */
	NVME_COAL_FEAT_REFUSED,	/* the controller said no: genirq only */
	NVME_COAL_FEAT_IGNORED,	/* took 08h, still signals every completion */
};

/*
 * Feature 08h is judged by its effect: on a queue the controller alone
 * moderated for a whole period with at least NVME_COAL_CHECK_MIN
 * completions, handler runs per completion must have fallen to three
 * quarters of the queue's last unmoderated period, where 08h should bring
 * them to two thirds or less.  A judged period in which one queue's did is
 * a hit, one in which none did a miss; NVME_COAL_CHECK_PERIODS more hits
 * than misses settle that the controller applies it, as many more misses
 * that it ignores it.  One period may mislead (the host's own pace moves
 * the handler runs of a queue under QEMU's TCG): a lead of three takes
 * three periods on a steady controller, and if one period in four misleads
 * it settles wrongly one time in 28 (a first hit: four times in ten).
 */
#define NVME_COAL_CHECK_MIN	64
#define NVME_COAL_CHECK_PERIODS	3

/* nvme_coal_ctrl.feat_dw11 after a reset: the controller must be told */
#define NVME_COAL_DW11_UNKNOWN	U32_MAX
/* nvme_coal_ctrl.refused_dw11 when no 08h value was refused */
#define NVME_COAL_DW11_NONE	U32_MAX

/* bits of nvme_coal_ctrl.flags */
#define NVME_COAL_RUNNING	0	/* the work item is queued or running */
#define NVME_COAL_DEAD		1	/* the controller is going away */
#define NVME_COAL_SUSPENDED	2	/* host-managed suspend: no command */
#define NVME_COAL_WATCH		3	/* every queue at QD1 or idle, nothing due */
#define NVME_COAL_CALM		4	/* every queue off and not high, nothing due */

/*
 * How long a watched controller waits for its next sample: a QD1 load,
 * which the policy never moderates, is sampled twice a second or so
 * instead of every period (the sample after the watch only sets a new
 * baseline, the one a period later is judged; the bench's cost scenario
 * counts the timer interrupts that saves), and the first handler run that
 * finds a queue deeper has it sampled at once.
 */
#define NVME_COAL_WATCH_MS	1000

/*
 * How many periods a calm controller waits for its next sample: with every
 * queue off, its last sample not high, and no command due, a deeper load
 * the policy leaves alone is sampled every third period instead of every
 * one.  A rise is then first seen high up to three periods later: a sample
 * covers three periods, and one the rise fills only in part may not be
 * high.  Under NVME_COAL_STALE_PERIODS, so that the sample after the wait
 * is judged.
 */
#define NVME_COAL_CALM_PERIODS	3

/**
 * struct nvme_coal_ctrl - adaptive coalescing of one controller
 * @ctrl: the controller, for its state, messages and commands
 * @ndev: the controller, for its queues
 * @work: samples the queues; queued by a handler run once @due has come,
 *	from its own timer every period while a queue is moderated
 * @lock: protects everything the work item decides
 * @flags: NVME_COAL_RUNNING, NVME_COAL_DEAD, NVME_COAL_SUSPENDED,
 *	NVME_COAL_WATCH, NVME_COAL_CALM
 * @due: get_jiffies_64() from which a handler run queues the work, while
 *	it is not running (no queue moderated, no command waiting)
 * @feat: what the controller answered to Feature 08h
 * @feat_status: the NVMe status of a refusal
 * @feat_dw11: the Feature 08h value the controller has now (0 = off,
 *	NVME_COAL_DW11_UNKNOWN after a reset of a controller that took one)
 * @refused_dw11: the last non-zero 08h value the controller refused, not
 *	asked for again; NVME_COAL_DW11_NONE if none
 * @off_refused: the controller refused 08h = 0, not asked for again
 * @carrying: the wanted 08h value was refused, or an unmoderated vector
 *	cannot be exempted: genirq carries the queues
 * @hold_us: the longest aggregation time the controller applies now or
 *	will once a command in flight completes; read by the lost-interrupt
 *	poller
 * @user_lock: protects the user_ members below (written from blk-mq
 *	dispatch and from the admin queue's completions); readers of
 *	@user_hold_us and @user_dw11 take none
 * @user_hold_us: the same as @hold_us for the 08h values user space sent
 * @user_dw11: the controller's 08h value as user space last had it taken;
 *	0 once the policy's replaced it, the saved one after a reset
 * @user_saved_dw11: the last 08h value user space saved (SV), which a
 *	reset brings back
 * @user_inflight: Set Features 08h from user space sent, not answered
 * @user_08h: user space had an 08h taken since the policy last looked
 * @user_09h: the same for a 09h
 * @user_09h_saved: user space saved a 09h: after a reset no vector's
 *	Coalescing Disable is known
 * @gen: counts controller (re)starts; a command sent before one is stale
 * @inflight: Set Features commands sent and not answered yet
 * @cd_accepted: the controller took a Feature 09h command
 * @feat_works: a non-zero 08h showed its effect; not checked again until
 *	the controller is reset
 * @feat_lead: judged periods in which it showed its effect, less those in
 *	which it showed none, since the last reset
 * @cmd_tokens: Set Features commands that may be sent now
 * @cmd_tokens_ns: when @cmd_tokens was last refilled (the period's clock)
 * @cmds: Set Features commands sent
 * @cmds_held: periods in which the rate bound held commands back
 * @user_cmds: Set Features 08h and 09h from user space answered
 * @decisions: state or delay changes of all queues
 * @warned: the controller's warn-once bitmap (enum nvme_pci_warn)
 */
struct nvme_coal_ctrl {
	struct nvme_ctrl *ctrl;
	struct nvme_dev *ndev;
	struct delayed_work work;
	struct mutex lock;	/* protects the decisions */
	unsigned long flags;
	u64 due;
	enum nvme_coal_feat feat;
	int feat_status;
	u32 feat_dw11;
	u32 refused_dw11;
	bool off_refused;
	bool carrying;
	u32 hold_us;
	raw_spinlock_t user_lock;
	u32 user_hold_us;
	u32 user_dw11;
	u32 user_saved_dw11;
	unsigned int user_inflight;
	bool user_08h;
	bool user_09h;
	bool user_09h_saved;
	unsigned int gen;
	unsigned int inflight;
	bool cd_accepted;
	bool feat_works;
	int feat_lead;
	unsigned int cmd_tokens;
	u64 cmd_tokens_ns;
	u64 cmds;
	u64 cmds_held;
	atomic_long_t user_cmds;
	u64 decisions;
	unsigned long *warned;
};

/**
 * struct nvme_coal_queue - adaptive coalescing of one I/O queue
 * @pol: the policy's state
 * @load: the last usable period
 * @nvmeq: the queue
 * @cc: the controller's state; set at the first start, never cleared
 * @active: the vector is requested; changed under @cc->lock
 * @valid: @load is from the period that just ended
 * @refused: why genirq will not moderate the vector (-errno), 0 if it will
 * @exempt: the vector is exempt from device coalescing (Feature 09h CD)
 * @cd_refused: the controller refused Feature 09h for this vector
 * @cd_unknown: user space set Feature 09h, or a reset brought back one it
 *	saved: whether the vector is exempt is not known until a 09h of the
 *	policy's is taken
 * @applied_us: the genirq delay this code set on the vector
 * @base_rpc: handler runs per 1024 completions in the last unmoderated
 *	period with enough of them; 0 if none yet
 * @decisions: state or delay changes
 * @moderated_ns: time spent moderated
 */
struct nvme_coal_queue {
	struct nvme_coal_policy pol;
	struct nvme_coal_load load;
	struct nvme_queue *nvmeq;
	struct nvme_coal_ctrl *cc;
	bool active;
	bool valid;
	bool exempt;
	bool cd_refused;
	bool cd_unknown;
	int refused;
	u32 applied_us;
	u32 base_rpc;
	u64 decisions;
	u64 moderated_ns;
};

extern unsigned int nvme_coal_adaptive;
/* nvme.adaptive_coalescing is 1: the interrupt handler accounts its runs */
DECLARE_STATIC_KEY_TRUE(nvme_coal_on);

void nvme_coal_debugfs_init(void);
void nvme_coal_ctrl_init(struct nvme_coal_ctrl *cc, struct nvme_ctrl *ctrl,
			 struct nvme_dev *ndev, unsigned long *warned,
			 struct dentry *parent);
void nvme_coal_ctrl_stop(struct nvme_coal_ctrl *cc);
void nvme_coal_suspend(struct nvme_coal_ctrl *cc);
void nvme_coal_resume(struct nvme_coal_ctrl *cc);
void nvme_coal_start(struct nvme_coal_queue *q, struct nvme_coal_ctrl *cc,
		     struct nvme_queue *nvmeq);
void nvme_coal_stop(struct nvme_coal_queue *q);
void nvme_coal_kick(struct nvme_coal_ctrl *cc);
void nvme_coal_user_sent(struct nvme_coal_ctrl *cc,
			 const struct nvme_command *cmd);
void nvme_coal_user_unsent(struct nvme_coal_ctrl *cc,
			   const struct nvme_command *cmd);
void nvme_coal_user_done(struct nvme_coal_ctrl *cc,
			 const struct nvme_command *cmd, u16 status);

#if IS_ENABLED(CONFIG_KUNIT)
void nvme_coal_params(struct nvme_coal_params *p);
bool nvme_coal_period(struct nvme_coal_ctrl *cc, u64 now_ns);
unsigned long nvme_coal_wait(const struct nvme_coal_ctrl *cc, u32 period_ms);
/* what a KUnit test's fake controller stands in for */
struct nvme_coal_queue *nvme_coal_next_queue(struct nvme_coal_ctrl *cc,
					     unsigned int *qid);
u16 nvme_coal_qid(const struct nvme_coal_queue *q);
int nvme_coal_irq(const struct nvme_coal_queue *q);
u16 nvme_coal_vector(const struct nvme_coal_queue *q);
void nvme_coal_sample_queue(struct nvme_coal_queue *q,
			    struct nvme_coal_sample *s);
int nvme_coal_set_feature(struct nvme_coal_ctrl *cc, unsigned int fid,
			  u32 dw11);
#endif

/**
 * nvme_coal_enabled() - should the interrupt handler account its depth?
 *
 * A patched-out branch when nvme.adaptive_coalescing is 0, so that the
 * handler does not even count the commands outstanding.
 *
 * Context: any.
 */
static inline bool nvme_coal_enabled(void)
{
	return static_branch_likely(&nvme_coal_on);
}

/**
 * nvme_coal_wake() - a queue's interrupt handler runs
 * @q: the queue's state
 * @depth: the commands outstanding on the queue as the handler runs
 *
 * Queues the controller's sampling once a period has passed since the
 * last sample, a second if the controller is watched at QD1, three
 * periods if it is calm, unless it runs from its own timer; a watched
 * controller whose queue has more than one command outstanding is sampled
 * at once.  The run and its depth are in the queue's statistics, which the
 * sampling reads.
 *
 * Context: the queue's interrupt handler.
 */
static inline void nvme_coal_wake(struct nvme_coal_queue *q, u32 depth)
{
	struct nvme_coal_ctrl *cc = READ_ONCE(q->cc);
	unsigned long flags;

	/* nvme_coal_enabled() said nvme.adaptive_coalescing is on */
	if (!cc)
		return;
	flags = READ_ONCE(cc->flags);
	if (!(flags & BIT(NVME_COAL_RUNNING)) &&
	    unlikely(time_after_eq64(get_jiffies_64(), READ_ONCE(cc->due)) ||
		     (depth > 1 && (flags & BIT(NVME_COAL_WATCH)))))
		nvme_coal_kick(cc);
}

/**
 * nvme_coal_hold_ns() - how long the controller may hold a queue's interrupt
 * @q: the queue's state
 *
 * The Feature 08h aggregation time the controller has or is being sent,
 * by the policy or by user space, for the lost-interrupt poller: a
 * completion that waits that long on purpose is not stuck.
 *
 * Context: any; lockless.
 *
 * Return: the time in ns, 0 if the controller does not coalesce.
 */
static inline u64 nvme_coal_hold_ns(const struct nvme_coal_queue *q)
{
	const struct nvme_coal_ctrl *cc = READ_ONCE(q->cc);

	if (!cc)
		return 0;
	return (u64)max(READ_ONCE(cc->hold_us), READ_ONCE(cc->user_hold_us)) *
	       NSEC_PER_USEC;
}

#endif /* _NVME_PCI_COALESCE_H */

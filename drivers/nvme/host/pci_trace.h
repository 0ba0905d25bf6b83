/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoints of nvme-pci's interrupt handling; pci_lost_irq.c creates them.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM nvme_pci

#if !defined(_NVME_PCI_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _NVME_PCI_TRACE_H

#include <linux/tracepoint.h>

#include "pci_coalesce_policy.h"

/*
 * A check found a completion posted with no interrupt serviced and the
 * poller reaped the queue: how many completions, how long the first had
 * waited at least, and whether the vector's CPU took no interrupt (then
 * none was lost).
 */
TRACE_EVENT(nvme_lost_irq_recovered,
	    TP_PROTO(const char *ctrl, u16 qid, int reaped, u64 stall_us,
		     bool cpu_blocked),
	    TP_ARGS(ctrl, qid, reaped, stall_us, cpu_blocked),
	    TP_STRUCT__entry(__string(ctrl, ctrl)
			     __field(u16, qid)
			     __field(int, reaped)
			     __field(u64, stall_us)
			     __field(bool, cpu_blocked)),
	    TP_fast_assign(__assign_str(ctrl);
			   __entry->qid = qid;
			   __entry->reaped = reaped;
			   __entry->stall_us = stall_us;
			   __entry->cpu_blocked = cpu_blocked;),
	    TP_printk("%s qid=%u reaped=%d stall_us=%llu cpu_blocked=%d",
		      __get_str(ctrl), __entry->qid, __entry->reaped,
		      __entry->stall_us, __entry->cpu_blocked)
);

/*
 * A command's early deadline passed and the poll of its queue found it
 * complete: how many completions the poll reaped, and how long it waited.
 */
TRACE_EVENT(nvme_lost_irq_deadline_recovered,
	    TP_PROTO(const char *ctrl, u16 qid, int tag, int reaped, u32 wait_ms),
	    TP_ARGS(ctrl, qid, tag, reaped, wait_ms),
	    TP_STRUCT__entry(__string(ctrl, ctrl)
			     __field(u16, qid)
			     __field(int, tag)
			     __field(int, reaped)
			     __field(u32, wait_ms)),
	    TP_fast_assign(__assign_str(ctrl);
			   __entry->qid = qid;
			   __entry->tag = tag;
			   __entry->reaped = reaped;
			   __entry->wait_ms = wait_ms;),
	    TP_printk("%s qid=%u tag=%d reaped=%d wait_ms=%u",
		      __get_str(ctrl), __entry->qid, __entry->tag,
		      __entry->reaped, __entry->wait_ms)
);

/*
 * A re-check after an empty handler run found a completion posted with no
 * interrupt since, and the queue was reaped: how many completions, and how
 * long after the empty run the re-check found them.
 */
TRACE_EVENT(nvme_early_irq_recovered,
	    TP_PROTO(const char *ctrl, u16 qid, int reaped, u64 wait_us),
	    TP_ARGS(ctrl, qid, reaped, wait_us),
	    TP_STRUCT__entry(__string(ctrl, ctrl)
			     __field(u16, qid)
			     __field(int, reaped)
			     __field(u64, wait_us)),
	    TP_fast_assign(__assign_str(ctrl);
			   __entry->qid = qid;
			   __entry->reaped = reaped;
			   __entry->wait_us = wait_us;),
	    TP_printk("%s qid=%u reaped=%d wait_us=%llu",
		      __get_str(ctrl), __entry->qid, __entry->reaped,
		      __entry->wait_us)
);

/* A check found a completion waiting, but ran @gap_us after the last one. */
TRACE_EVENT(nvme_lost_irq_late,
	    TP_PROTO(const char *ctrl, u16 qid, u64 gap_us),
	    TP_ARGS(ctrl, qid, gap_us),
	    TP_STRUCT__entry(__string(ctrl, ctrl)
			     __field(u16, qid)
			     __field(u64, gap_us)),
	    TP_fast_assign(__assign_str(ctrl);
			   __entry->qid = qid;
			   __entry->gap_us = gap_us;),
	    TP_printk("%s qid=%u gap_us=%llu",
		      __get_str(ctrl), __entry->qid, __entry->gap_us)
);

DECLARE_EVENT_CLASS(nvme_irq_poll_class,
		    TP_PROTO(int irq, u16 qid, int reaped),
		    TP_ARGS(irq, qid, reaped),
		    TP_STRUCT__entry(__field(int, irq)
				     __field(u16, qid)
				     __field(int, reaped)),
		    TP_fast_assign(__entry->irq = irq;
				   __entry->qid = qid;
				   __entry->reaped = reaped;),
		    TP_printk("irq=%d qid=%u reaped=%d",
			      __entry->irq, __entry->qid, __entry->reaped)
);

/* The handler used up its budget with completions left: irq_poll takes over. */
DEFINE_EVENT(nvme_irq_poll_class, nvme_irq_poll_fallback,
	     TP_PROTO(int irq, u16 qid, int reaped),
	     TP_ARGS(irq, qid, reaped));

/* irq_poll emptied the queue and gave it back to its interrupt. */
DEFINE_EVENT(nvme_irq_poll_class, nvme_irq_poll_done,
	     TP_PROTO(int irq, u16 qid, int reaped),
	     TP_ARGS(irq, qid, reaped));

/* A queue was moderated, released, or got a new delay; and why. */
TRACE_EVENT(nvme_coalesce_decision,
	    TP_PROTO(int ctrl, u16 qid, bool old_on, u32 old_us, bool new_on,
		     u32 new_us, const struct nvme_coal_load *q,
		     const struct nvme_coal_load *total),
	    TP_ARGS(ctrl, qid, old_on, old_us, new_on, new_us, q, total),
	    TP_STRUCT__entry(__field(int, ctrl)
			     __field(u16, qid)
			     __field(bool, old_on)
			     __field(bool, new_on)
			     __field(u32, old_us)
			     __field(u32, new_us)
			     __field(u32, completions)
			     __field(u32, avg_qd)
			     __field(u32, ctrl_completions)
			     __field(u32, ctrl_qd)
			     __field(u32, period_us)),
	    TP_fast_assign(__entry->ctrl = ctrl;
			   __entry->qid = qid;
			   __entry->old_on = old_on;
			   __entry->new_on = new_on;
			   __entry->old_us = old_us;
			   __entry->new_us = new_us;
			   __entry->completions = q->completions;
			   __entry->avg_qd = q->avg_qd;
			   __entry->ctrl_completions = total->completions;
			   __entry->ctrl_qd = total->avg_qd;
			   __entry->period_us = div_u64(q->elapsed_ns, NSEC_PER_USEC);),
	    TP_printk("nvme%d qid=%u %s/%uus -> %s/%uus completions=%u avg_qd=%u ctrl_completions=%u ctrl_qd=%u period_us=%u",
		      __entry->ctrl, __entry->qid,
		      __entry->old_on ? "on" : "off", __entry->old_us,
		      __entry->new_on ? "on" : "off", __entry->new_us,
		      __entry->completions, __entry->avg_qd,
		      __entry->ctrl_completions, __entry->ctrl_qd,
		      __entry->period_us)
);

/*
 * A moderated queue was parked (its load moved to another queue of the
 * controller: kept moderated) or left parked: its load came back, or it
 * is released (nvme_coalesce_decision then follows).
 */
TRACE_EVENT(nvme_coalesce_park,
	    TP_PROTO(int ctrl, u16 qid, bool parked, u32 periods, u32 delay_us,
		     const struct nvme_coal_load *q,
		     const struct nvme_coal_load *total),
	    TP_ARGS(ctrl, qid, parked, periods, delay_us, q, total),
	    TP_STRUCT__entry(__field(int, ctrl)
			     __field(u16, qid)
			     __field(bool, parked)
			     __field(u32, periods)
			     __field(u32, delay_us)
			     __field(u32, completions)
			     __field(u32, ctrl_completions)),
	    TP_fast_assign(__entry->ctrl = ctrl;
			   __entry->qid = qid;
			   __entry->parked = parked;
			   __entry->periods = periods;
			   __entry->delay_us = delay_us;
			   __entry->completions = q->completions;
			   __entry->ctrl_completions = total->completions;),
	    TP_printk("nvme%d qid=%u %s periods=%u delay_us=%u completions=%u ctrl_completions=%u",
		      __entry->ctrl, __entry->qid,
		      __entry->parked ? "parked" : "unparked",
		      __entry->periods, __entry->delay_us,
		      __entry->completions, __entry->ctrl_completions)
);

/* One period of one queue, as the policy saw it. */
TRACE_EVENT(nvme_coalesce_sample,
	    TP_PROTO(int ctrl, u16 qid, const struct nvme_coal_load *q,
		     bool engaged, u32 delay_us),
	    TP_ARGS(ctrl, qid, q, engaged, delay_us),
	    TP_STRUCT__entry(__field(int, ctrl)
			     __field(u16, qid)
			     __field(bool, engaged)
			     __field(u32, delay_us)
			     __field(u32, completions)
			     __field(u32, runs)
			     __field(u32, avg_qd16)),
	    TP_fast_assign(__entry->ctrl = ctrl;
			   __entry->qid = qid;
			   __entry->engaged = engaged;
			   __entry->delay_us = delay_us;
			   __entry->completions = q->completions;
			   __entry->runs = q->runs;
			   __entry->avg_qd16 = q->avg_qd16;),
	    TP_printk("nvme%d qid=%u completions=%u runs=%u avg_qd16=%u %s/%uus",
		      __entry->ctrl, __entry->qid, __entry->completions,
		      __entry->runs, __entry->avg_qd16,
		      __entry->engaged ? "on" : "off", __entry->delay_us)
);

#endif /* _NVME_PCI_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE pci_trace
#include <trace/define_trace.h>

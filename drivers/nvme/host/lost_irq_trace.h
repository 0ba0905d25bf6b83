/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoints of the nvme-pci lost completion interrupt poller.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM nvme_pci

#if !defined(_NVME_LOST_IRQ_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _NVME_LOST_IRQ_TRACE_H

#include <linux/tracepoint.h>

/*
 * A check found a completion posted with no interrupt serviced and the
 * poller reaped the queue: how many completions, and how long the first
 * had waited at least.
 */
TRACE_EVENT(nvme_lost_irq_recovered,
	    TP_PROTO(const char *ctrl, u16 qid, int reaped, u64 stall_us),
	    TP_ARGS(ctrl, qid, reaped, stall_us),
	    TP_STRUCT__entry(__string(ctrl, ctrl)
			     __field(u16, qid)
			     __field(int, reaped)
			     __field(u64, stall_us)),
	    TP_fast_assign(__assign_str(ctrl);
			   __entry->qid = qid;
			   __entry->reaped = reaped;
			   __entry->stall_us = stall_us;),
	    TP_printk("%s qid=%u reaped=%d stall_us=%llu",
		      __get_str(ctrl), __entry->qid, __entry->reaped,
		      __entry->stall_us)
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

#endif /* _NVME_LOST_IRQ_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE lost_irq_trace
#include <trace/define_trace.h>

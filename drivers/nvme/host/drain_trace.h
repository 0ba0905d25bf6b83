/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoints of the nvme-pci bounded completion drain.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM nvme_pci

#if !defined(_NVME_DRAIN_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _NVME_DRAIN_TRACE_H

#include <linux/tracepoint.h>

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

#endif /* _NVME_DRAIN_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE drain_trace
#include <trace/define_trace.h>

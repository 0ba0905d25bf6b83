/* SPDX-License-Identifier: GPL-2.0 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM irq_moderation

#if !defined(_TRACE_IRQ_MODERATION_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_IRQ_MODERATION_H

#include <linux/tracepoint.h>

/*
 * An interrupt arrived in its vector's quiet time and is held: the vector
 * and the time left until it is replayed.
 */
TRACE_EVENT(irq_moderation_hold,
	    TP_PROTO(unsigned int irq, u64 wait_ns),
	    TP_ARGS(irq, wait_ns),
	    TP_STRUCT__entry(__field(unsigned int, irq)
			     __field(u64, wait_ns)),
	    TP_fast_assign(__entry->irq = irq;
			   __entry->wait_ns = wait_ns;),
	    TP_printk("irq=%u wait_ns=%llu", __entry->irq, __entry->wait_ns)
);

/*
 * A quiet time that held an interrupt ended: the vector, and whether the
 * held interrupt is still pending and replayed now.
 */
TRACE_EVENT(irq_moderation_release,
	    TP_PROTO(unsigned int irq, bool replay),
	    TP_ARGS(irq, replay),
	    TP_STRUCT__entry(__field(unsigned int, irq)
			     __field(bool, replay)),
	    TP_fast_assign(__entry->irq = irq;
			   __entry->replay = replay;),
	    TP_printk("irq=%u replay=%d", __entry->irq, __entry->replay)
);

#endif /* _TRACE_IRQ_MODERATION_H */

/* This part must be outside protection */
#include <trace/define_trace.h>

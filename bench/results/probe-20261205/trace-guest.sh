#!/bin/bash
T=/sys/kernel/tracing
echo 0 > $T/tracing_on
echo 30000 > $T/buffer_size_kb
echo > $T/set_event
for e in timer:hrtimer_expire_entry timer:timer_expire_entry irq_vectors:local_timer_entry irq_vectors:call_function_single_entry irq_vectors:reschedule_entry timer:hrtimer_start sched:sched_switch workqueue:workqueue_execute_start irq:irq_handler_entry sched:sched_wakeup; do echo $e >> $T/set_event; done
echo 1 > $T/tracing_on
$(dirname "$0")/../../../scripts/guest/bench-run $(dirname "$0")/jobs-qd1.json $RESULTS/out.jsonl
echo 0 > $T/tracing_on
cat $T/trace > $RESULTS/trace.txt

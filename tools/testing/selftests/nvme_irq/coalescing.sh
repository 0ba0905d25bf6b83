#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Adaptive interrupt coalescing of nvme-pci.  With the thresholds lowered
# to what QEMU under TCG can reach: fio randread at QD1 leaves every queue
# unmoderated; at QD32 over every drive the busy queues are moderated
# (state file and tracepoint), verify is clean, and the interrupts per
# completed I/O fall against nvme.adaptive_coalescing=0 (written at run time) in the
# same boot (handler runs under genirq moderation, the device's messages,
# read through scripts/vm's QMP channel, when the controller coalesces);
# once the load stops the queues are released.  A moderated queue whose
# load moves to another CPU's queue is parked, and leaves that state when
# the load comes back (tracepoint).  A controller that lets
# Feature 08h be changed carries the moderated queues itself: the Interrupt
# Coalescing and Interrupt Vector Configuration values read back from it
# are the ones the driver set (aggregation on, the vectors of the queues
# not moderated exempt, before any non-zero 08h), and 08h back at 0 once
# released.  One that refuses 08h and 09h (stock QEMU) gets one info line
# per controller, no error, and genirq moderation instead.  Vectors
# moderated through /proc/irq/N/moderation_us are left alone until set back
# to 0.  Every knob rejects bad values and keeps its value.  Booted with
# nvme.adaptive_coalescing=0 nothing is moderated; with noirqmoderation
# genirq's refusal is logged once per controller.

DIR=$(dirname "$0")
. "$DIR/../kselftest/ktap_helpers.sh"
. "$DIR/lib.sh"

WORK=${TMPDIR:-/tmp}/nvme_irq_coalescing
DBG=/sys/kernel/debug/nvme_pci
# the feature's one switch: a module parameter, writable at run time
SWITCH=/sys/module/nvme/parameters/adaptive_coalescing
EV=/sys/kernel/tracing/events/nvme_pci/nvme_coalesce_decision
TRACE=/sys/kernel/tracing/trace

ALL_TESTS="
	switch_rejects switch_erange switch_keeps
	period_rejects period_erange period_keeps
	delta_rejects delta_erange delta_keeps
	avg_qd_rejects avg_qd_erange avg_qd_keeps
	inflight_rejects inflight_erange inflight_keeps
	max_delay_rejects max_delay_erange max_delay_keeps
	qd1_fio_clean
	qd1_unmoderated
	off_fio_clean
	on_fio_clean
	on_moderated
	on_fewer_runs
	on_released
	park_traced
	unpark_traced
	device_feature_08h
	device_readback_loaded
	device_readback_released
	device_exempt_before_08h
	external_left_alone
	external_given_back
	disabled_under_load
"
# booted with nvme.adaptive_coalescing=0
BOOT_OFF_TESTS="
	boot_off_says_off
	boot_off_fio_clean
	boot_off_moderates_nothing
"
# booted with noirqmoderation on controllers that refuse Feature 08h
NOIRQ_TESTS="
	noirq_actuator_none
	noirq_fio_clean
	noirq_refused_once
	noirq_actuator_still_none
"

# key: value of every controller's coalescing file, one line per controller
coal_key() {
	local c

	for c in $(nvme_ctrls); do
		awk -v k="$1:" '$1 == k { print $2 }' "$DBG/$c/coalescing"
	done
}
# every controller's coalescing file says $1: $2 (and there is one)
all_say() {
	local v

	v=$(coal_key "$1")
	[ -n "$v" ] && [ -z "$(grep -vx "$2" <<< "$v")" ]
}
# every I/O queue of every controller is in state $1
all_queues() {
	local c

	for c in $(nvme_ctrls); do
		# a controller that lists no queue does not pass
		awk -v s="$1" '$1 ~ /^q[0-9]+\.state:$/ { n++; if ($2 != s) bad = 1 }
			END { exit bad || !n }' "$DBG/$c/coalescing" || return 1
	done
}
decisions() {
	coal_key decisions | awk '{ s += $1 } END { print s + 0 }'
}
moderated_ms() {
	for c in $(nvme_ctrls); do cat "$DBG/$c/coalescing"; done |
		awk '$1 ~ /moderated_ms:$/ { s += $2 } END { print s + 0 }'
}
# MSI-X messages the named controllers sent on their I/O vectors, as the
# emulated device counts them (nothing printed without scripts/vm's QMP
# channel).  The guest's own counters cannot tell them: its local APIC
# merges a message into one still pending.
device_msgs() {
	local c v s=0

	[ -n "${NVME_IRQ_QMP:-}" ] || return 0
	for c in $(nvme_ctrls); do
		v=$("$NVME_IRQ_QMP" get "$("$NVME_IRQ_QMP" dev "$c")" \
			x-msix-messages 2> /dev/null) || return 0
		# the first is the admin queue's vector
		s=$((s + $(awk '{ for (i = 2; i <= NF; i++) s += $i }
			END { print s + 0 }' <<< "$v")))
	done
	echo "$s"
}

# fio over every drive; per 10000 completions, handler runs into
# $WORK/$1.ratio and the device's messages into $WORK/$1.msgs
fio_opts_noverify="--bs=4k --ioengine=libaio --direct=1 --size=16m"
fio_opts="$fio_opts_noverify --verify=crc32c --verify_fatal=1"
runs_per_io() {
	local name=$1 r0 c0 m0 r1 c1 m1 rc
	shift

	m0=$(device_msgs)
	r0=$(drain_sum irq_runs)
	c0=$(($(drain_sum irq_completions) + $(drain_sum poll_completions)))
	fio_json "$name" --rw=randread "$@" $fio_opts $(fio_all_drives)
	rc=$?
	r1=$(drain_sum irq_runs)
	c1=$(($(drain_sum irq_completions) + $(drain_sum poll_completions)))
	m1=$(device_msgs)
	echo "$(((r1 - r0) * 10000 / (c1 - c0 + 1)))" > "$WORK/$name.ratio"
	ktap_print_msg "$name: $((r1 - r0)) handler runs for $((c1 - c0)) completions"
	rm -f "$WORK/$name.msgs"
	if [ -n "$m0" ] && [ -n "$m1" ]; then
		echo "$(((m1 - m0) * 10000 / (c1 - c0 + 1)))" > "$WORK/$name.msgs"
		ktap_print_msg "$name: the devices sent $((m1 - m0)) messages"
	fi
	return $rc
}

# thresholds TCG reaches: the controller-rate gate open to any load (a
# rate in completions per period does not carry from one host to another:
# QD32 here runs 3k to 16k IOPS, depending on the host), so that the depth
# thresholds alone tell the QD1 load from the QD32 one; data written first
# so that every read verifies, decisions traced
low_thresholds() {
	echo 1 > "$SWITCH"
	echo 50 > "$DBG/coalescing_period_ms"
	echo 1 > "$DBG/high_io_delta"
	echo 1 > "$DBG/avg_qd_threshold"
	echo 2 > "$DBG/total_inflight_io_threshold"
	echo 1000 > "$DBG/coalescing_max_delay_us"
	fio_json prep --rw=write --iodepth=16 --do_verify=0 $fio_opts \
		$(fio_all_drives) > /dev/null
	echo 1 > "$EV/enable"
}

boot_off_says_off() {
	ktap_test_result "nvme.adaptive_coalescing=0: every controller says adaptive: off" \
		all_say adaptive off
}

boot_off_run() {
	echo 1 > "$DBG/high_io_delta"
	echo 0 > "$DBG/avg_qd_threshold"
	echo 0 > "$DBG/total_inflight_io_threshold"
	fio_json prep --rw=write --iodepth=16 --do_verify=0 $fio_opts \
		$(fio_all_drives) > /dev/null
	runs_per_io boot-off --iodepth=32 --time_based --runtime=2
}

boot_off_fio_clean() {
	ktap_test_result "nvme.adaptive_coalescing=0: QD32 randread verify clean" \
		once boot_off boot_off_run
}

nothing_moderated() {
	[ "$(moderated_ms)" = 0 ] && [ "$(decisions)" = 0 ] && all_queues off
}

boot_off_moderates_nothing() {
	once boot_off boot_off_run
	ktap_test_result "nvme.adaptive_coalescing=0: QD32 load moderates nothing" \
		nothing_moderated
}

noirq_actuator_none() {
	ktap_test_result "noirqmoderation: actuator none before any load" \
		all_say actuator none
}

noirq_run() {
	echo 1 > "$DBG/high_io_delta"
	echo 0 > "$DBG/avg_qd_threshold"
	echo 0 > "$DBG/total_inflight_io_threshold"
	fio_json prep --rw=write --iodepth=16 --do_verify=0 $fio_opts \
		$(fio_all_drives) > /dev/null
	runs_per_io noirqmod --iodepth=32 --time_based --runtime=3
}

noirq_fio_clean() {
	ktap_test_result "noirqmoderation: QD32 randread verify clean" \
		once noirq noirq_run
}

refused_once() {
	once_per_ctrl "adaptive coalescing: genirq does not moderate"
}

noirq_refused_once() {
	once noirq noirq_run
	ktap_test_result "noirqmoderation: genirq's refusal logged once per controller" \
		refused_once
}

noirq_actuator_still_none() {
	once noirq noirq_run
	ktap_test_result "noirqmoderation: actuator still none after load" \
		all_say actuator none
}

# every controller reports Feature 08h changeable (supported capabilities)
probe_device() {
	local c cap

	device_coalesces=true
	for c in $(nvme_ctrls); do
		cap=$(feat "$c" -f 8 -s 3)
		[ "$cap" -ge 0 ] && [ $((cap & 4)) -ne 0 ] || device_coalesces=false
	done
	ktap_print_msg "the controllers let Feature 08h be changed: $device_coalesces"
}

# "QID VECTOR" of every I/O queue of controller $1
queue_vectors() {
	awk -v c="$1" '$NF ~ "^" c "q[1-9][0-9]*$" {
		q = $NF; sub(".*q", "", q)
		for (i = 1; i <= NF; i++)
			if ($i ~ /^[0-9]+-edge$/) { sub("-edge", "", $i); print q, $i } }' \
		/proc/interrupts
}
# The driver's view (debugfs) and the device's (Get Features 08h, 09h of
# every I/O vector) agree, read with the debugfs file unchanged around the
# device's answers; prints what it compared, true if it matched.
device_agrees() {
	local c=$1 before after dw11 q v cd want

	before=$(grep -E '^(feature_08h_dw11|q[0-9]+\.exempt):' "$DBG/$c/coalescing")
	dw11=$(feat "$c" -f 8) || return 1
	want=$(awk '$1 == "feature_08h_dw11:" { print $2 }' <<< "$before")
	cds=""
	while read -r q v; do
		cd=$(feat "$c" -f 9 --cdw11="$v") || return 1
		cd=$(((cd >> 16) & 1))
		cds+=" q$q:$cd"
		[ "$cd" = "$(awk -v k="q$q.exempt:" '$1 == k { print $2 }' <<< "$before")" ] ||
			want=mismatch
	done <<< "$(queue_vectors "$c")"
	after=$(grep -E '^(feature_08h_dw11|q[0-9]+\.exempt):' "$DBG/$c/coalescing")
	[ "$before" = "$after" ] || return 2	# changed meanwhile: ask again
	echo "$c: 08h $(printf '0x%x' "$dw11") (driver $want), CD$cds"
	[ "$want" != mismatch ] && [ $((want)) -eq "$dw11" ] || return 1
	[ "$dw11" -ne 0 ] || return 3	# agreed, coalescing off
}

# Every knob rejects bad values, keeping its value
declare -A KNOB_BAD_OK KNOB_ERR KNOB_OLD

# a tuning knob in debugfs, or the switch among the module parameters
knob_file() {
	if [ -e "$DBG/$1" ]; then
		echo "$DBG/$1"
	else
		echo "/sys/module/nvme/parameters/$1"
	fi
}

knob_run() {	# knob_run KNOB LOW HIGH: LOW empty when 0 is valid
	local knob=$1 low=$2 high=$3 f bad ok=1

	f=$(knob_file "$1")
	KNOB_OLD[$knob]=$(cat "$f")
	for bad in -1 abc "$low" "$high"; do
		[ -z "$bad" ] && continue
		write_rejected "$f" "$bad" || ok=0
	done
	KNOB_BAD_OK[$knob]=$ok
	KNOB_ERR[$knob]=$( (echo "$high" > "$f") 2>&1)
	ktap_print_msg "$knob=$high: ${KNOB_ERR[$knob]##*: }"
}

knob_is_erange() {
	case "${KNOB_ERR[$1]}" in
	*"out of range"*) return 0 ;;
	esac
	return 1
}

knob_rejects() {
	once "$1" knob_run "$@"
	ktap_test_result "$1 rejects -1, abc${2:+, $2}, $3" [ "${KNOB_BAD_OK[$1]}" = 1 ]
}

knob_erange() {
	once "$1" knob_run "$@"
	ktap_test_result "$1: above the range is ERANGE" knob_is_erange "$1"
}

# a function: ktap_test_result runs its condition unquoted (an empty word
# would go); a knob that could not be read is not kept
knob_unchanged() {
	[ -n "${KNOB_OLD[$1]}" ] &&
		[ "$(cat "$(knob_file "$1")")" = "${KNOB_OLD[$1]}" ]
}

knob_keeps() {
	once "$1" knob_run "$@"
	ktap_test_result "$1 keeps ${KNOB_OLD[$1]}" knob_unchanged "$1"
}

SWITCHK="adaptive_coalescing '' 2"
PERIOD="coalescing_period_ms 9 1001"
DELTA="high_io_delta 0 100000001"
AVG_QD="avg_qd_threshold '' 65537"
INFLIGHT="total_inflight_io_threshold '' 16777217"
MAX_DELAY="coalescing_max_delay_us 0 10001"
switch_rejects() { eval knob_rejects "$SWITCHK"; }
switch_erange() { eval knob_erange "$SWITCHK"; }
switch_keeps() { eval knob_keeps "$SWITCHK"; }
period_rejects() { eval knob_rejects "$PERIOD"; }
period_erange() { eval knob_erange "$PERIOD"; }
period_keeps() { eval knob_keeps "$PERIOD"; }
delta_rejects() { eval knob_rejects "$DELTA"; }
delta_erange() { eval knob_erange "$DELTA"; }
delta_keeps() { eval knob_keeps "$DELTA"; }
avg_qd_rejects() { eval knob_rejects "$AVG_QD"; }
avg_qd_erange() { eval knob_erange "$AVG_QD"; }
avg_qd_keeps() { eval knob_keeps "$AVG_QD"; }
inflight_rejects() { eval knob_rejects "$INFLIGHT"; }
inflight_erange() { eval knob_erange "$INFLIGHT"; }
inflight_keeps() { eval knob_keeps "$INFLIGHT"; }
max_delay_rejects() { eval knob_rejects "$MAX_DELAY"; }
max_delay_erange() { eval knob_erange "$MAX_DELAY"; }
max_delay_keeps() { eval knob_keeps "$MAX_DELAY"; }

# QD1 never engages
qd1_run() {
	local d0

	once low low_thresholds
	echo > "$TRACE"
	d0=$(decisions)
	runs_per_io qd1 --iodepth=1 --time_based --runtime=3
	qd1_fio=$?
	qd1_engaged=$(grep -c ' -> on/' "$TRACE")
	qd1_decisions=$(($(decisions) - d0))
	ktap_print_msg "QD1: $qd1_engaged engagements traced, $qd1_decisions decisions"
	all_queues off
	qd1_off=$?
}

qd1_fio_clean() {
	once qd1 qd1_run
	ktap_test_result "QD1 randread verify clean" [ "$qd1_fio" = 0 ]
}

qd1_unmoderated() {
	once qd1 qd1_run
	ktap_test_result "QD1: no queue moderated (state file and tracepoint)" \
		[ "$qd1_engaged:$qd1_decisions:$qd1_off" = 0:0:0 ]
}

# each job on a CPU of its own, so that its load stays on one queue
pin="--cpus_allowed=0-$(($(nproc) - 1)) --cpus_allowed_policy=split"

# adaptive off: the reference
off_run() {
	once low low_thresholds
	echo 0 > "$SWITCH"
	runs_per_io off --iodepth=32 --time_based --runtime=4 $pin
	off_fio=$?
	echo 1 > "$SWITCH"
}

off_fio_clean() {
	once off off_run
	ktap_test_result "adaptive off: QD32 randread verify clean" [ "$off_fio" = 0 ]
}

# adaptive on
on_run() {
	local m0

	once low low_thresholds
	echo 1 > "$SWITCH"
	echo > "$TRACE"
	m0=$(moderated_ms)
	runs_per_io on --iodepth=32 --time_based --runtime=4 $pin
	on_fio=$?
	on_engaged=$(grep -c ' -> on/' "$TRACE")
	on_moderated_ms=$(($(moderated_ms) - m0))
	ktap_print_msg "$on_engaged engagements traced, moderated $on_moderated_ms ms in all"
	grep ' -> on/' "$TRACE" | head -n 2 | sed 's/^ *//; s/^/# /'
	sleep 0.5
	all_queues off
	on_released=$?
}

on_fio_clean() {
	once on on_run
	ktap_test_result "adaptive on: QD32 randread verify clean" [ "$on_fio" = 0 ]
}

on_moderated() {
	once on on_run
	ktap_test_result "QD32: busy queues moderated (tracepoint and time moderated)" \
		[ "$on_engaged" -gt 0 -a "$on_moderated_ms" -gt 0 ]
}

# Fewer interrupts per completed I/O with adaptive on: fewer messages from
# the devices where they count them (the project's QEMU), fewer handler
# runs elsewhere.  Both the controller's coalescing and genirq moderation
# (the masked vector's message is held until the unmask) cut the messages.
# Under TCG the handler runs are no measure: the guest's local APIC
# already merges the messages of an unmoderated queue into runs of several
# completions, as many as the host's speed lets pile up (4 to 5 in a CI
# run, with adaptive off and on alike).
fewer_runs() {
	local off on what=handler_runs ext=ratio

	if [ -s "$WORK/off.msgs" ] && [ -s "$WORK/on.msgs" ]; then
		what=device_messages ext=msgs
	fi
	ktap_print_msg "handler runs per 10000 completions: adaptive off" \
		"$(cat "$WORK/off.ratio" 2> /dev/null), on $(cat "$WORK/on.ratio" 2> /dev/null)"
	ktap_print_msg "device messages per 10000 completions: adaptive off" \
		"$(cat "$WORK/off.msgs" 2> /dev/null), on $(cat "$WORK/on.msgs" 2> /dev/null)"
	off=$(cat "$WORK/off.$ext" 2> /dev/null)
	on=$(cat "$WORK/on.$ext" 2> /dev/null)
	ktap_print_msg "compared: $what"
	[ -n "$off" ] && [ -n "$on" ] && [ "$on" -lt "$off" ]
}

on_fewer_runs() {
	once probe probe_device
	once off off_run
	once on on_run
	ktap_test_result "fewer interrupts per completed I/O with adaptive on" \
		fewer_runs
}

on_released() {
	once on on_run
	ktap_test_result "load stopped: every queue released" [ "$on_released" = 0 ]
}

# A moderated queue whose load moves to another queue of its controller is
# parked (kept moderated), and no longer parked once the load comes back:
# one fio job at QD32 on the first drive, on CPU 1; once CPU 1's queue is
# moderated (debugfs), the job is moved to CPU 0 (taskset: no gap between
# the queues' loads) until the queue is parked, a few periods more (within
# the 20 a queue stays parked), and back; the nvme_coalesce_park events of
# CPU 1's queue, traced in an instance of their own.  A host that stalls
# the guest may end the park before the load is moved back (the
# controller's load falls, or the script comes back too late) or as it
# comes back: then the run is repeated, three runs at most.
PARK=/sys/kernel/tracing/instances/nvme_irq_park

# queue_engaged C Q, queue_parked C Q: as C's debugfs says of its queue Q
queue_engaged() {
	[ "$(nvme_pci_key "$1" coalescing "q$2.policy")" = engaged ]
}

queue_parked() {
	[ "$(nvme_pci_key "$1" coalescing "q$2.parked")" -gt 0 ] 2> /dev/null
}

# park_events holds CPU 1's queue's park events and decisions in order, one
# a line: "EVENT PERIODS COMPLETIONS CTRL_COMPLETIONS", EVENT parked,
# unparked, or a decision's: on (moderated), off (released) or retune (a
# new delay), PERIODS - for a decision; and "moved - 0 0" once the load
# was moved to CPU 0, "back - 0 0" once it was moved back to CPU 1
PARK_MOVED=nvme_irq_park_moved
PARK_BACK=nvme_irq_park_back
# the periods a queue stays parked at most (NVME_COAL_WINDOW_PERIODS)
PARK_WINDOW=20

park_trace_events() {
	awk -v moved="$PARK_MOVED" -v back="$PARK_BACK" '
	     $0 ~ ": " moved "$" { print "moved - 0 0"; next }
	     $0 ~ ": " back "$" { print "back - 0 0"; next }
	     /nvme_coalesce_(park|decision):/ { e = ""; p = "-"; q = c = 0
		for (i = 1; i <= NF; i++) {
			if ($i == "parked" || $i == "unparked") e = $i
			else if ($(i - 1) == "->") {
				e = substr($i, 1, index($i, "/") - 1)
				o = substr($(i - 2), 1, index($(i - 2), "/") - 1)
				if (o == e) e = "retune"
			}
			if ($i ~ /^periods=/) p = substr($i, 9)
			if ($i ~ /^completions=/) q = substr($i, 13)
			if ($i ~ /^ctrl_completions=/) c = substr($i, 18)
		}
		print e, p, q, c }' "$1"
}

# a park the load ended: parked after the load was moved away, the queue
# left it after the load was moved back, with completions of its own, at
# least an eighth of those of the period that moderated it (the policy's
# test of a queue busy again: only the load's return to CPU 1 gives them),
# within the window (after it, the policy kept a park its load had ended)
park_ended_by_load() {
	awk -v win="$PARK_WINDOW" '
	     $1 == "moved" { m = 1 }
	     $1 == "back" { b = 1 }
	     $1 == "on" { ref = $3 }
	     $1 == "parked" { p = m }
	     $1 == "unparked" { if (p && b && ref && $3 * 8 >= ref && $2 < win) ok = 1; p = 0 }
	     $1 == "off" { p = 0 }
	     END { exit !ok }' <<< "$park_events"
}

# parked after the load was moved away
parked_after_move() {
	awk '$1 == "moved" { m = 1 } $1 == "parked" && m { ok = 1 } END { exit !ok }' \
		<<< "$park_events"
}

park_once() {	# park_once NS CTRL QID
	local pid fpid moved=false

	echo > "$PARK/trace"
	echo 1 > "$PARK/tracing_on"
	# no verify: a verifying read job ends after one pass over its size
	fio_json park --thread --rw=randread --iodepth=32 --time_based \
		--runtime=5 $fio_opts_noverify --filename="/dev/$1" --name=park \
		--cpus_allowed=1 &
	pid=$!
	# moved at once: in the move's period the other queues gain what this
	# one loses, which the policy does not count against a moderation
	wait_until 30 queue_engaged "$2" "$3" ||
		ktap_print_msg "queue $3 not moderated after 3 s"
	# fio_json's fio, a child of the background shell
	fpid=$(pgrep -x -P "$pid" fio | head -n 1)
	# each marker before its move: what the move causes is traced after it
	if [ -z "$fpid" ]; then
		ktap_print_msg "no fio under $pid to move"
	elif ! echo "$PARK_MOVED" > "$PARK/trace_marker"; then
		ktap_print_msg "no trace marker: the load is not moved"
	elif ! taskset -a -p -c 0 "$fpid" > /dev/null; then
		ktap_print_msg "taskset could not move fio $fpid to CPU 0"
	else
		wait_until 8 queue_parked "$2" "$3"
		pause 0.25
		if ! echo "$PARK_BACK" > "$PARK/trace_marker"; then
			ktap_print_msg "no trace marker: a failed run is not tried again"
		elif ! taskset -a -p -c 1 "$fpid" > /dev/null; then
			ktap_print_msg "taskset could not move fio $fpid back"
		else
			moved=true
		fi
	fi
	wait "$pid"
	park_fio=$?
	# a marker without its move: nothing to judge, the run fails
	$moved || park_fio=1
	echo 0 > "$PARK/tracing_on"
	grep -E " $2 qid=$3 |: ($PARK_MOVED|$PARK_BACK)\$" "$PARK/trace" > "$WORK/park.trace"
	ktap_print_msg "$(grep -c nvme_coalesce_decision "$WORK/park.trace") decisions on queue $3"
	park_events=$(park_trace_events "$WORK/park.trace")
	# in order: EVENT [PERIODS] COMPLETIONS/CTRL_COMPLETIONS, and the moves
	ktap_print_msg "$(awk '$1 == "moved" || $1 == "back" { l = l ", " $1; next }
		{ l = l ", " $1 ($2 == "-" ? "" : " " $2) " " $3 "/" $4 }
		END { print "events:" substr(l, 2) }' <<< "$park_events")"
	# no park at all: the decisions tell why
	grep -q nvme_coalesce_park "$WORK/park.trace" ||
		grep nvme_coalesce_decision "$WORK/park.trace" | head -n 12 |
		sed 's/^.*nvme_coalesce_/# /'
}

# Why the run is to be tried again, if the first time the queue left the
# park or was released, the host got in the way: before the load was
# moved, with no moderation again before the move (the setup failed: a
# storm moderation that lost its rate is released, as the policy says);
# or, the queue idle (under an eighth of the completions that moderated
# it), before the load was moved back, the park ran out (the script came
# back too late) or the other queues completed under half what the queue
# did in the period that moderated it (the policy's own reason: the host
# stalled the guest's CPU 0), and after it, the whole controller did (the
# guest stalled as the load came back).  Anything else (a release of a
# busy queue after the move, a park the load did not end) is the
# policy's to get right: no retry, nor without both markers.
park_retry_why() {
	grep -q '^moved ' <<< "$park_events" && grep -q '^back ' <<< "$park_events" ||
		return 1
	awk -v win="$PARK_WINDOW" '
	     $1 == "moved" { m = 1 }
	     $1 == "moved" && gone { why = "the queue was released before the load was moved" }
	     $1 == "back" { b = 1 }
	     $1 == "on" { ref = $3; gone = 0 }
	     $1 != "unparked" && $1 != "off" && why == "" { next }
	     !m { gone = 1; next }
	     m && why == "" && ref && $3 * 8 < ref {
		if (!b && $1 == "unparked" && $2 >= win)
			why = "the park ran out before the load was moved back"
		else if (!b && ($4 - $3) * 2 < ref)
			why = "before the load was moved back, the other queues completed " \
			      $4 - $3 ", under half the " ref " that moderated the queue"
		else if (b && $4 * 2 < ref)
			why = "as the load came back, the controller completed " $4 \
			      ", under half the " ref " that moderated the queue"
	     }
	     { exit }
	     END { if (why == "") exit 1; print why }' <<< "$park_events"
}

park_run() {
	local ns c h n why q=""

	once low low_thresholds
	ns=$(first_ns)
	ns=${ns##*/}
	c=$(ns_ctrl "$ns")
	for h in /sys/block/"$ns"/mq/*; do
		[ "$(cat "$h/cpu_list")" = 1 ] && q=$((${h##*/} + 1))
	done
	park_events="" park_fio=1 park_why=""
	if [ "$(nproc)" -lt 2 ] || [ -z "$q" ] || [ -z "$c" ]; then
		park_why="needs a queue of its own for CPU 1 in /sys/block/$ns/mq"
		return
	fi
	if ! command -v taskset > /dev/null; then
		park_why="needs taskset"
		return
	fi
	rmdir "$PARK" 2> /dev/null
	if ! mkdir "$PARK"; then
		park_why="no trace instance"
		return
	fi
	at_exit 'rmdir "$PARK" 2> /dev/null'
	# the work items run on both CPUs: one clock for the order of events
	echo global > "$PARK/trace_clock"
	echo 1 > "$PARK/events/nvme_pci/nvme_coalesce_park/enable"
	echo 1 > "$PARK/events/nvme_pci/nvme_coalesce_decision/enable"
	# Under TCG the submitter is the bottleneck: the job's queue averages a
	# depth of 1 to 3, a storm to the policy, whose moderation is released
	# when its first period's rate falls (it often does, before the move).
	# Any depth is deep here: released only once idle, or parked.
	echo 0 > "$DBG/avg_qd_threshold"
	echo 0 > "$DBG/total_inflight_io_threshold"
	for n in 1 2 3; do
		ktap_print_msg "$ns: QD32 on queue $q (CPU 1), moved to CPU 0 and back (run $n)"
		park_once "$ns" "$c" "$q"
		[ "$park_fio" = 0 ] || break
		park_ended_by_load && break
		if ! why=$(park_retry_why); then
			ktap_print_msg "run $n: no park ended by the load; no stall seen"
			break
		fi
		ktap_print_msg "run $n: $why: run again"
	done
	echo 1 > "$DBG/avg_qd_threshold"
	echo 2 > "$DBG/total_inflight_io_threshold"
	rmdir "$PARK"
}

park_traced() {
	local msg="load moved to another CPU: the moderated queue parked" ok=1

	once park park_run
	if [ -n "$park_why" ]; then
		ktap_test_skip "$park_why"
		return
	fi
	[ "$park_fio" = 0 ] && parked_after_move && ok=0
	ktap_test_result "$msg (traced), no fio error" [ $ok = 0 ]
}

unpark_traced() {
	local ok=1

	once park park_run
	if [ -n "$park_why" ]; then
		ktap_test_skip "$park_why"
		return
	fi
	# the load came back, rather than the window ran out
	park_ended_by_load && ok=0
	ktap_test_result "load back: the parked queue left parked (traced)" [ $ok = 0 ]
}

# A controller that takes Feature 08h carries the moderated queues: what
# it reads back is what the driver set, and 0 once released.  One that
# refuses it (stock QEMU) logs one info line, genirq moderates instead, no
# error.
# At rest 08h is 0; exemptions may stay (a later engage needs no command
# for them): every vector's CD reads back as the driver recorded it.
device_at_rest() {
	local c q v cd

	for c in $(nvme_ctrls); do
		[ "$(feat "$c" -f 8)" = 0 ] || return 1
		while read -r q v; do
			cd=$(feat "$c" -f 9 --cdw11="$v") || return 1
			[ $(((cd >> 16) & 1)) = "$(nvme_pci_key "$c" coalescing "q$q.exempt")" ] ||
				return 1
		done <<< "$(queue_vectors "$c")"
	done
}

device_used() {
	all_say feature_08h accepted && all_say actuator device &&
		! dmesg_since | grep -qiE 'nvme.*(error|timeout)' &&
		! dmesg_since | grep -qE 'nvme[0-9]+: interrupt coalescing: .* refused'
}

# the first command refused: an exemption (09h) where a queue is not
# moderated, else the probe (08h)
feat_refused_once() {
	once_per_ctrl "interrupt coalescing: Set Features 0[89]h refused (status 0x410e)" &&
		all_say feature_08h refused && all_say actuator genirq &&
		! dmesg_since | grep -qiE 'nvme.*(error|timeout)'
}

device_feature_08h() {
	once probe probe_device
	once on on_run
	if $device_coalesces; then
		msg="Feature 08h accepted: the device carries the moderated queues,"
		ktap_test_result "$msg no error" device_used
	else
		msg="Features 08h/09h refused: one info line per controller, genirq,"
		ktap_test_result "$msg no error" feat_refused_once
	fi
}

# every named controller has a moderated queue
all_moderated() {
	local c

	for c in $(nvme_ctrls); do
		grep -q 'state: moderated' "$DBG/$c/coalescing" || return 1
	done
}

# Under load, once a queue of every controller is moderated: what each
# controller reads back agrees with the driver, coalescing on.  A Set
# Features the work item sent may be answered but not yet recorded, and
# nvme-cli takes about a second a call on a busy TCG guest: a few tries.
readback() {
	local c rc try out

	wait_until 100 all_moderated
	for c in $(nvme_ctrls); do
		for try in $(seq 8); do
			out=$(device_agrees "$c")
			rc=$?
			ktap_print_msg "try $try: $out (rc $rc)"
			[ $rc = 0 ] && break
			[ $rc = 1 ] && sleep 0.2
		done
		[ $rc = 0 ] || return 1
	done
}

# One-second periods while the device is read: the driver's 08h/09h then
# change at most once a second, not twenty times, while three nvme-cli
# calls take seconds.
readback_run() {
	local pid

	once low low_thresholds
	echo 1000 > "$DBG/coalescing_period_ms"
	fio --rw=randread --iodepth=32 --time_based --runtime=60 \
		$fio_opts_noverify $pin $(fio_all_drives) > /dev/null 2>&1 &
	pid=$!
	readback
	readback_ok=$?
	kill $pid 2> /dev/null
	wait $pid 2> /dev/null
	echo 50 > "$DBG/coalescing_period_ms"
	wait_until 50 all_queues off
	sleep 0.5
	device_at_rest
	rest_ok=$?
}

device_readback_loaded() {
	once probe probe_device
	if ! $device_coalesces; then
		ktap_test_skip "the controllers refuse Feature 08h: nothing to read back under load"
		return
	fi
	once readback readback_run
	ktap_test_result "under load the device reads back the driver's 08h (on) and 09h (CD)" \
		[ "$readback_ok" = 0 ]
}

device_readback_released() {
	once probe probe_device
	if ! $device_coalesces; then
		ktap_test_skip "the controllers refuse Feature 08h: nothing to read back at rest"
		return
	fi
	once readback readback_run
	ktap_test_result "released: 08h reads back 0, every vector's CD as the driver set it" \
		[ "$rest_ok" = 0 ]
}

# Feature 08h coalesces every vector not exempted: no non-zero 08h may go
# out while a queue that is not moderated has its vector unexempted (its
# completions would wait for the aggregation time), the first one, the
# probe, included.  A trace instance of its own records, from the start of
# this script, the Set Features commands (nvme:nvme_setup_cmd) and the
# decisions that moderate or release a queue; the check replays them in
# order.  Its own load: a QD1 job on CPU 0's queue while a QD32 job on
# another queue engages.
INST=/sys/kernel/tracing/instances/nvme_irq_coalescing

exempt_trace_start() {
	rmdir "$INST" 2> /dev/null
	mkdir "$INST" || return
	# the work items run on both CPUs: one clock for the order of events
	echo global > "$INST/trace_clock"
	echo "qid == 0 && opcode == 9" > "$INST/events/nvme/nvme_setup_cmd/filter"
	echo 1 > "$INST/events/nvme/nvme_setup_cmd/enable"
	echo 1 > "$INST/events/nvme_pci/nvme_coalesce_decision/enable"
	feat_at_start=$(coal_key feature_08h | tr '\n' ' ')
	# exemptions stay until a reset: what the controllers have now
	exempt_at_start=$(for c in $(nvme_ctrls); do
		queue_vectors "$c" | while read -r q v; do
			echo "$c $v $(nvme_pci_key "$c" coalescing "q$q.exempt")"
		done
	done)
}

# "CTRL QID VECTOR" of every I/O queue of the named controllers
all_queue_vectors() {
	local c

	for c in $(nvme_ctrls); do
		queue_vectors "$c" | sed "s/^/$c /"
	done
}

# Replay the trace: prints "NONZERO_08H VIOLATIONS", each violation in
# $WORK/exempt.bad
exempt_replay() {
	local -A vec mod cd
	local c q v line fid dw on=0 bad=0

	while read -r c q v; do
		vec[$c.$q]=$v
	done < <(all_queue_vectors)
	while read -r c v q; do
		[ -n "$c" ] && cd[$c.$v]=${q:-0}
	done <<< "$exempt_at_start"
	while read -r line; do
		case "$line" in
		*nvme_coalesce_decision:*)
			c=${line#*nvme_coalesce_decision: }
			c=${c%% *}
			q=${line#* qid=}
			q=${q%% *}
			case "$line" in
			*" -> on/"*) mod[$c.$q]=1 ;;
			*) mod[$c.$q]=0 ;;
			esac ;;
		*nvme_admin_set_features*)
			c=${line#*nvme_setup_cmd: }
			c=${c%%:*}
			fid=${line#*fid=}
			fid=${fid%%,*}
			dw=${line#*cdw11=}
			dw=${dw%%)*}
			if [ "$fid" = 0x9 ]; then
				cd[$c.$((dw & 0xffff))]=$(((dw >> 16) & 1))
			elif [ "$fid" = 0x8 ] && [ $((dw)) != 0 ]; then
				on=$((on + 1))
				for q in "${!vec[@]}"; do
					[ "${q%%.*}" = "$c" ] || continue
					[ "${mod[$q]:-0}" = 1 ] && continue
					[ "${cd[$c.${vec[$q]}]:-0}" = 1 ] && continue
					bad=$((bad + 1))
					echo "08h $dw on $c:" \
					     "queue ${q#*.} (vector ${vec[$q]}) not exempt"
				done
			fi ;;
		esac
	done < "$WORK/exempt.trace" > "$WORK/exempt.bad"
	echo "$on $bad"
}

exempt_run() {
	local ns h q=""

	ns=$(first_ns)
	ns=${ns##*/}
	for h in /sys/block/"$ns"/mq/*; do
		[ "$(cat "$h/cpu_list")" = 0 ] && q=$((${h##*/} + 1))
	done
	exempt_fio=0
	if [ "$(nproc)" -ge 2 ] && [ -n "$q" ]; then
		ktap_print_msg "$ns: queue $q (CPU 0) at QD1, QD32 on CPU 1"
		fio_json exempt --rw=randread --time_based --runtime=4 $fio_opts \
			--filename="/dev/$ns" \
			--name=qd1 --iodepth=1 --cpus_allowed=0 \
			--name=qd32 --iodepth=32 --cpus_allowed=1
		exempt_fio=$?
	fi
	echo 0 > "$INST/tracing_on"
	grep -v '^#' "$INST/trace" > "$WORK/exempt.trace"
	exempt=$(exempt_replay)
	ktap_print_msg "Feature 08h at the start: $feat_at_start;" \
		"non-zero 08h sent, violations: $exempt"
	head -n 3 "$WORK/exempt.bad" | while read -r line; do ktap_print_msg "$line"; done
}

device_exempt_before_08h() {
	local ok=false

	once probe probe_device
	if ! $device_coalesces; then
		ktap_test_skip "the controllers refuse Feature 08h: nothing to order"
		return
	fi
	if [ ! -d "$INST" ]; then
		ktap_test_skip "no trace instance"
		return
	fi
	once low low_thresholds
	once exempt exempt_run
	[ "$exempt_fio" = 0 ] && [ "${exempt% *}" -gt 0 ] 2> /dev/null &&
		[ "${exempt#* }" = 0 ] && ok=true
	ktap_test_result "no non-zero 08h while an unmoderated queue's vector was not exempt" $ok
}

# Vectors somebody else moderates are left alone until given back
external_run() {
	local io_irqs

	once low low_thresholds
	io_irqs=$(nvme_io_irqs)
	set_moderation 700 $io_irqs
	all_queues external
	ext_idle=$?
	fio_json ext --rw=randread --iodepth=32 --time_based --runtime=3 \
		$fio_opts $(fio_all_drives) > /dev/null
	ext_fio=$?
	all_queues external
	ext_loaded=$?
	moderation_is 700 $io_irqs
	ext_kept=$?
	set_moderation 0 $io_irqs
	sleep 0.5
	all_queues off
	ext_back=$?
}

external_left_alone() {
	once external external_run
	local msg="vectors moderated through /proc: external at once,"

	ktap_test_result "$msg left at 700 us under load" \
		[ "$ext_idle:$ext_fio:$ext_loaded:$ext_kept" = 0:0:0:0 ]
}

external_given_back() {
	once external external_run
	ktap_test_result "given back with 0: no queue external" [ "$ext_back" = 0 ]
}

# Switched off under load, once every controller has a moderated queue:
# released at the next period, and a controller that coalesced is told
# to stop
disabled_under_load() {
	local pid released

	once low low_thresholds
	once probe probe_device
	# no verify: a verifying read job ends after one pass over its size
	fio_json late --rw=randread --iodepth=32 --time_based --runtime=8 \
		$fio_opts_noverify $(fio_all_drives) > /dev/null &
	pid=$!
	# switched off only once something is moderated: else nothing to release
	if ! wait_until 40 all_moderated; then
		ktap_print_msg "not every controller moderated after 40 polls of load"
		released=1
	else
		echo 0 > "$SWITCH"
		pause 0.3
		all_queues off
		released=$?
		# released by the switch, not by the load's end
		if ! pgrep -x -P "$pid" fio > /dev/null; then
			ktap_print_msg "the load ended before the queues were read"
			released=1
		fi
	fi
	wait $pid
	if [ $released = 0 ] && $device_coalesces; then
		device_at_rest
		released=$?
	fi
	echo 1 > "$SWITCH"
	ktap_test_result "disabled under load: every queue released" [ $released = 0 ]
}

ktap_print_header
mark_dmesg
require_root
require_test_devs
if [ ! -e "$SWITCH" ] || [ ! -e "$DBG/high_io_delta" ]; then
	ktap_skip_all "needs debugfs and adaptive coalescing in nvme-pci"
	exit "$KSFT_SKIP"
fi
mkdir -p "$WORK" || exit 1
at_exit 'echo 0 > "$EV/enable"'
exempt_trace_start
at_exit 'rmdir "$INST" 2> /dev/null'
if [ "$(cmdline_value nvme.adaptive_coalescing 1)" = 0 ]; then
	ALL_TESTS=$BOOT_OFF_TESTS
elif grep -qw noirqmoderation /proc/cmdline; then
	ALL_TESTS=$NOIRQ_TESTS
fi
run_tests

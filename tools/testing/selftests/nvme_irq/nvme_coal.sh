#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# nvme-coal (tools/nvme): nvme-pci's adaptive coalescing policy run from
# user space.  It rejects bad options and exits 2, refuses to run while
# nvme-pci's own policy is on and refuses a controller it cannot drive
# (exit 1), changing nothing.  With the kernel's policy off and the
# thresholds lowered to what QEMU under TCG reaches (as coalescing.sh
# does), a QD32 read load on the first named drive gets its queues
# moderated: by the controller (a non-zero Feature 08h taken during the
# load, as nvme-pci saw it answered; read back 0 before and after) or by
# genirq (/proc/irq/N/moderation_us non-zero when read, or interrupts
# held on its vectors, traced); a QD1 load gets
# no decision.  On SIGTERM, sent while the load runs and a value it set is
# on, it writes back every value it changed: 08h, each vector's 09h and
# each moderation_us read back as they were before.  nvme-pci sees its
# Set Features on the admin queue and allows for the aggregation time it
# set (debugfs hold_us) while it is set, none before or after, also for an
# 08h set with nvme-cli and read back from the controller.
# nvme-coal is taken from $NVME_COAL, the PATH, or tools/nvme of this tree
# (make -C tools/nvme).  Left running after a deep load, it releases
# everything it set within 30 periods, and still exits 0 on SIGTERM.

DIR=$(dirname "$0")
. "$DIR/../kselftest/ktap_helpers.sh"
. "$DIR/lib.sh"

WORK=${TMPDIR:-/tmp}/nvme_irq_nvme_coal
SWITCH=/sys/module/nvme/parameters/adaptive_coalescing
# the kernel's lowered thresholds (coalescing.sh)
LOW="-p 50 -H 1 -q 1 -i 2 -d 1000"

ALL_TESTS="
	options_rejected
	kernel_policy_refused
	controller_refused
	device_fio_clean
	device_moderated
	device_restored
	device_hold_known
	device_hold_read_back
	genirq_fio_clean
	genirq_moderated
	genirq_restored
	qd1_no_decision
	released_after_load
"

# what nvme-coal may change on $CTRL: 08h, each vector's 09h, each
# vector's genirq delay; one line (a value that could not be read is -1 or
# empty, which no comparison takes as unchanged: see same_state)
state() {
	local irq v

	echo -n "08h=$(feat "$CTRL" -f 8)"
	for v in $VECTORS; do
		echo -n " 09h[$v]=$(feat "$CTRL" -f 9 --cdw11="$v")"
	done
	for irq in $IRQS; do
		echo -n " irq$irq=$(cat "/proc/irq/$irq/moderation_us" 2> /dev/null)"
	done
	echo
}

# same_state A B: two states equal, every value read
same_state() {
	[ "$1" = "$2" ] && [[ "$1" != *=-1* ]] && [[ "$1" != *"= "* ]] && [[ "$1" != *= ]]
}

options_rejected() {
	local args bad="" before

	before=$(state)
	for args in "-p 5" "-p 1001" "-p x" "-p ''" "-s 0" "-H 0" "-q 65537" \
		    "-i -1" "-d 10001" "-a foo" "-t 86401" "-t 1.5"; do
		eval "timeout 5 $NVME_COAL -t 1 $args $CTRL" > /dev/null 2> "$WORK/opt.err"
		[ $? = 2 ] && [ -s "$WORK/opt.err" ] || bad+=" [$args]"
	done
	[ -n "$bad" ] && ktap_print_msg "accepted, or no message:$bad"
	ok=false
	[ -z "$bad" ] && same_state "$(state)" "$before" && ok=true
	ktap_test_result "bad options: exit 2 with a message, nothing changed" $ok
}

kernel_policy_refused() {
	local before rc

	before=$(state)
	echo 1 > "$SWITCH"
	timeout 10 "$NVME_COAL" $LOW -t 1 "$CTRL" > /dev/null 2> "$WORK/kernel.err"
	rc=$?
	echo 0 > "$SWITCH"
	ktap_print_msg "exit $rc: $(head -n 1 "$WORK/kernel.err")"
	ok=false
	[ "$rc" = 1 ] && grep -q "own adaptive coalescing is on" "$WORK/kernel.err" &&
		same_state "$(state)" "$before" && ok=true
	ktap_test_result "refused while nvme-pci's own policy is on, nothing changed" $ok
}

controller_refused() {
	local rc

	timeout 10 "$NVME_COAL" $LOW -t 1 nvme999 > /dev/null 2> "$WORK/ctrl.err"
	rc=$?
	ktap_print_msg "exit $rc: $(head -n 1 "$WORK/ctrl.err")"
	ok=false
	[ "$rc" = 1 ] && [ "$(grep -c "nvme999: cannot drive it" "$WORK/ctrl.err")" = 1 ] &&
		ok=true
	ktap_test_result "a controller it cannot drive: refused with one message" $ok
}

feat_08h() { feat "$CTRL" -f 8; }
# the 08h value the controller last took from user space, as nvme-pci
# recorded it (watch_hold's last reading): nvme-coal engages for a period
# or two at a time under TCG, shorter than a Get Features takes here
taken_08h() {
	local u h v=0

	while read -r u h; do
		[ -n "$u" ] && v=$((u))
	done < "$WORK/$name.hold"
	echo "$v"
}
max_moderation() {
	local irq m=0 v

	for irq in $IRQS; do
		v=$(cat "/proc/irq/$irq/moderation_us" 2> /dev/null || echo 0)
		[ "$v" -gt "$m" ] && m=$v
	done
	echo "$m"
}

# stop PID: SIGTERM, then at most 10 s for it to exit (SIGKILL after);
# its exit status.  PID is reaped: its kill at exit goes.
stop_coal() {
	local i rc

	kill -TERM "$1"
	for i in $(seq 40); do
		kill -0 "$1" 2> /dev/null || break
		pause 0.25
	done
	kill -KILL "$1" 2> /dev/null
	wait "$1"
	rc=$?
	at_exit_cancel "kill -KILL $1 2> /dev/null"
	return $rc
}

# run NAME ACTUATOR PROBE FIO-OPTIONS...: nvme-coal on $CTRL under a 5 s
# fio load; PROBE is read every 0.1 s, and as soon as it shows a value set
# (a queue the policy moderates now), or once fio is over, nvme-coal is
# stopped with SIGTERM.  Sets FIO_RC[NAME], SEEN[NAME] (the largest PROBE
# read), COAL_RC[NAME], DECISIONS[NAME], BEFORE[NAME], AFTER[NAME] and
# RECOVERED[NAME] (the series' lost and early interrupt recoveries meanwhile)
# coal_key KEY: $CTRL's KEY in nvme-pci's coalescing file
coal_key() {
	nvme_pci_key "$CTRL" coalescing "$1" 2> /dev/null
}

# aggregation time of an 08h value, in us
agg_us() {
	echo $(((${1:-0} >> 8 & 0xff) * 100))
}

# watch_hold: "08h allowance" as nvme-pci has them, the last 08h value
# user space had taken and hold_us, from one read of its coalescing file
# every 0.1 s (bash alone: no program started per line)
watch_hold() {
	local k v u h

	while :; do
		u="" h=""
		while read -r k v; do
			case $k in
			user_08h_dw11:) u=$v ;;
			hold_us:) h=$v ;;
			esac
		done < "/sys/kernel/debug/nvme_pci/$CTRL/coalescing"
		echo "$u $h"
		pause 0.1
	done
}

# hold_seen NAME < lines of watch_hold: HOLD_SET[NAME], the readings with
# an 08h of user space's on, HOLD_SHORT[NAME], those of them whose
# allowance was shorter than its aggregation time
hold_seen() {
	local u h

	HOLD_SET[$1]=0 HOLD_SHORT[$1]=0
	while read -r u h; do
		[ -n "$h" ] && [ $((u)) -gt 0 ] || continue
		HOLD_SET[$1]=$((HOLD_SET[$1] + 1))
		[ "$h" -ge "$(agg_us "$u")" ] || HOLD_SHORT[$1]=$((HOLD_SHORT[$1] + 1))
	done
}

declare -A FIO_RC SEEN COAL_RC DECISIONS BEFORE AFTER RECOVERED
# the driver's allowance (hold_us) before and after, its readings while
# nvme-coal ran (hold_seen), user space's Set Features answered
declare -A HOLD_BEFORE HOLD_SET HOLD_SHORT HOLD_AFTER UCMDS
run() {
	local name=$1 act=$2 probe=$3 pid fpid wpid i v r0
	shift 3

	BEFORE[$name]=$(state)
	UCMDS[$name]=$(coal_key user_commands)
	HOLD_BEFORE[$name]=$(coal_key hold_us)
	r0=$(($(nvme_pci_sum lost_irq recoveries) + $(nvme_pci_sum lost_irq early_recoveries)))
	"$NVME_COAL" $LOW -a "$act" -v "$CTRL" > "$WORK/$name.out" 2>&1 &
	pid=$!
	at_exit "kill -KILL $pid 2> /dev/null"
	pause 0.5
	# on one CPU: its load stays on one queue (a job the scheduler moves
	# moves its load from queue to queue, and the policy follows it)
	fio_json "$name" --name="$name" --rw=randread --bs=4k --ioengine=libaio \
		--direct=1 --size=16m --time_based --runtime=5 --cpus_allowed=0 \
		--filename="$NS" "$@" &
	fpid=$!
	# the driver's view of what nvme-coal sets, every 0.1 s meanwhile
	watch_hold > "$WORK/$name.hold" &
	wpid=$!
	at_exit "kill $wpid 2> /dev/null"
	# until a value is seen, or fio (5 s) is over
	SEEN[$name]=0
	for i in $(seq 100); do
		pause 0.1
		v=$($probe)
		[ "$v" -gt "${SEEN[$name]}" ] 2> /dev/null && SEEN[$name]=$v
		[ "$v" -gt 0 ] 2> /dev/null && break
		kill -0 "$fpid" 2> /dev/null || break
	done
	stop_coal "$pid"
	COAL_RC[$name]=$?
	kill "$wpid"
	wait "$wpid" 2> /dev/null
	at_exit_cancel "kill $wpid 2> /dev/null"
	hold_seen "$name" < "$WORK/$name.hold"
	AFTER[$name]=$(state)
	HOLD_AFTER[$name]=$(coal_key hold_us)
	UCMDS[$name]=$(($(coal_key user_commands) - ${UCMDS[$name]:-0}))
	wait "$fpid"
	FIO_RC[$name]=$?
	[ "${FIO_RC[$name]}" = 0 ] ||
		ktap_print_msg "$name: fio: $(head -n 3 "$WORK/$name.err" | tr '\n' ' ')"
	RECOVERED[$name]=$(($(nvme_pci_sum lost_irq recoveries) +
			    $(nvme_pci_sum lost_irq early_recoveries) - r0))
	DECISIONS[$name]=$(sed -n "s/.* \([0-9]*\) decisions,.*/\1/p" "$WORK/$name.out")
	ktap_print_msg "$name: $(grep -m1 'nvme-coal: nvme' "$WORK/$name.out")"
	ktap_print_msg "$name: largest value seen ${SEEN[$name]} (the last $v), nvme-coal exit" \
		"${COAL_RC[$name]}, ${DECISIONS[$name]:-no} decisions," \
		"${RECOVERED[$name]} lost or early interrupt recoveries"
	# its first decisions, and every other message but the one above
	# (a vector no longer its own, a command refused)
	awk '/^nvme-coal: nvme/ && !b { b = 1; next }
	     / -> / { if (++d > 8) next } { print }' "$WORK/$name.out" |
	while read -r line; do
		ktap_print_msg "$name: nvme-coal: $line"
	done
	ktap_print_msg "$name: Set Features from user space ${UCMDS[$name]}; driver's" \
		"allowance ${HOLD_BEFORE[$name]:-?} us before, ${HOLD_AFTER[$name]:-?} us" \
		"after; ${HOLD_SET[$name]:-?} readings with its 08h on, ${HOLD_SHORT[$name]:-?}" \
		"of them short of its aggregation time"
	ktap_print_msg "$name: before ${BEFORE[$name]}"
	ktap_print_msg "$name: after  ${AFTER[$name]}"
}

device_run() {
	local cap

	DEVICE=false
	if cap=$(feat "$CTRL" -f 8 -s 3) && [ $((cap & 4)) -ne 0 ]; then
		DEVICE=true
		run dev device taken_08h --iodepth=32
	fi
}
device_skip() {
	once device device_run
	$DEVICE && return 1
	ktap_test_skip "$CTRL does not let Feature 08h be changed"
}

device_fio_clean() {
	device_skip && return
	ktap_test_result "device: QD32 reads clean under nvme-coal" [ "${FIO_RC[dev]}" = 0 ]
}

device_moderated() {
	device_skip && return
	ok=false
	# (or one watch_hold read between two probes: nvme-coal may engage
	# and release within 0.1 s under TCG)
	[[ "${BEFORE[dev]}" == "08h=0 "* ]] &&
		{ [ "${SEEN[dev]}" -gt 0 ] || [ "${HOLD_SET[dev]:-0}" -gt 0 ]; } &&
		[ "${DECISIONS[dev]:-0}" -gt 0 ] && ok=true
	ktap_test_result "device: Feature 08h 0 before, a non-zero one taken during the load" $ok
}

device_restored() {
	device_skip && return
	ok=false
	[ "${COAL_RC[dev]}" = 0 ] && same_state "${AFTER[dev]}" "${BEFORE[dev]}" && ok=true
	ktap_test_result "device: exit 0 on SIGTERM under load, 08h and 09h as before" $ok
}

# nvme-pci sees the Set Features 08h nvme-coal sends on the admin queue:
# whenever one of them is on, the lost-interrupt poller allows for its
# aggregation time at least (e.g. 08h 0x601: 600 us; more while a retune
# is on its way), for none before and once 0 is restored; the set and the
# restore, at least, were counted
device_hold_known() {
	device_skip && return
	ok=false
	[ "${HOLD_BEFORE[dev]}" = 0 ] && [ "${HOLD_SET[dev]:-0}" -gt 0 ] &&
		[ "${HOLD_SHORT[dev]}" = 0 ] && [ "${HOLD_AFTER[dev]}" = 0 ] &&
		[ "${UCMDS[dev]:-0}" -ge 2 ] && ok=true
	ktap_test_result "device: the driver allows for the 08h user space set, none without" $ok
}

# The same against the controller's own value: an 08h set from user space
# with nvme-cli (0xa02, 1000 us; the kernel's policy is off), read back
# with Get Features, is allowed for, and once 0 is read back, nothing is
# (one command at a time: no Set Features crosses a reading)
HOLD_V0=""
hold_restore() {
	[ -n "$HOLD_V0" ] || return 0
	nvme set-feature "/dev/$CTRL" -f 8 -v "$HOLD_V0" > /dev/null 2>&1
	HOLD_V0=""
}

device_hold_read_back() {
	local v0 v1 h1 v2 h2 ok=1

	device_skip && return
	v0=$(feat "$CTRL" -f 8)
	# what it found goes back at the end, or at exit if the end is not
	# reached
	HOLD_V0=$((v0 > 0 ? v0 : 0))
	at_exit hold_restore
	nvme set-feature "/dev/$CTRL" -f 8 -v 0xa02 > /dev/null 2>&1
	v1=$(feat "$CTRL" -f 8)
	h1=$(coal_key hold_us)
	nvme set-feature "/dev/$CTRL" -f 8 -v 0 > /dev/null 2>&1
	v2=$(feat "$CTRL" -f 8)
	h2=$(coal_key hold_us)
	[ "$v2" = "$HOLD_V0" ] && HOLD_V0=""
	hold_restore
	ktap_print_msg "08h $v0 before; set 0xa02: read back $v1, hold_us $h1;" \
		"set 0: read back $v2, hold_us $h2"
	[ "$v1" = $((0xa02)) ] && [ "$h1" -ge "$(agg_us "$v1")" ] 2> /dev/null &&
		[ "$v2" = 0 ] && [ "$h2" = 0 ] && ok=0
	ktap_test_result "device: the 08h the controller reads back is allowed for, 0 is not" \
		[ $ok = 0 ]
}

# Interrupts genirq held on the I/O vectors while nvme-coal ran, traced in
# an instance of their own: a moderation too short-lived for the reads of
# moderation_us every 0.1 s (nvme-coal releases a queue whose rate fell)
# still shows
HOLDS=/sys/kernel/tracing/instances/nvme_irq_coal_holds
IRQ_HELD=0

genirq_run() {
	local irq

	rmdir "$HOLDS" 2> /dev/null
	mkdir "$HOLDS" 2> /dev/null && at_exit 'rmdir "$HOLDS" 2> /dev/null' &&
		echo 1 > "$HOLDS/events/irq/irq_moderation_hold/enable"
	run irq genirq max_moderation --iodepth=32
	[ -f "$HOLDS/trace" ] || return
	echo 0 > "$HOLDS/tracing_on"
	for irq in $IRQS; do
		IRQ_HELD=$((IRQ_HELD + $(grep -c "irq_moderation_hold: irq=$irq " "$HOLDS/trace")))
	done
	ktap_print_msg "irq: $IRQ_HELD interrupts held on the I/O vectors (traced)"
	rmdir "$HOLDS"
}

genirq_fio_clean() {
	once genirq genirq_run
	ktap_test_result "genirq: QD32 reads clean under nvme-coal" [ "${FIO_RC[irq]}" = 0 ]
}

genirq_moderated() {
	once genirq genirq_run
	ok=false
	[[ "${BEFORE[irq]}" != *" irq"*"="[1-9]* ]] &&
		{ [ "${SEEN[irq]}" -gt 0 ] || [ "$IRQ_HELD" -gt 0 ]; } &&
		[ "${DECISIONS[irq]:-0}" -gt 0 ] && ok=true
	ktap_test_result "genirq: moderation_us 0 before, then non-zero or interrupts held" $ok
}

genirq_restored() {
	once genirq genirq_run
	ok=false
	[ "${COAL_RC[irq]}" = 0 ] && same_state "${AFTER[irq]}" "${BEFORE[irq]}" && ok=true
	ktap_test_result "genirq: exit 0 on SIGTERM under load, every moderation_us as before" $ok
}

qd1_no_decision() {
	run qd1 auto max_moderation --iodepth=1
	ok=false
	[ "${FIO_RC[qd1]}" = 0 ] && [ "${DECISIONS[qd1]}" = 0 ] &&
		same_state "${AFTER[qd1]}" "${BEFORE[qd1]}" && ok=true
	ktap_test_result "QD1: no decision, nothing changed" $ok
}

# Left running after a deep load: within 30 periods of the load's end
# nothing it set is on (the 08h nvme-pci saw it set last is 0, every
# moderation_us 0) and it still runs; SIGTERM then ends it with 0 and
# every value as before
released_after_load() {
	local before after pid t0 t u m engaged rest=1 alive=1 rc ok=1

	before=$(state)
	"$NVME_COAL" $LOW -a auto -v "$CTRL" > "$WORK/rel.out" 2>&1 &
	pid=$!
	at_exit "kill -KILL $pid 2> /dev/null"
	pause 0.5
	fio_json rel --name=rel --rw=randread --bs=4k --ioengine=libaio \
		--direct=1 --size=16m --time_based --runtime=5 --cpus_allowed=0 \
		--iodepth=32 --filename="$NS" > /dev/null
	# 30 periods of 50 ms, timed in us
	t0=${EPOCHREALTIME/./}
	while :; do
		u=$(coal_key user_08h_dw11)
		m=$(max_moderation)
		t=$(((${EPOCHREALTIME/./} - t0) / 1000))
		[ $((${u:-1})) = 0 ] && [ "$m" = 0 ] && rest=0 && break
		[ "$t" -lt 1500 ] || break
		pause 0.05
	done
	kill -0 "$pid" 2> /dev/null && alive=0
	stop_coal "$pid"
	rc=$?
	after=$(state)
	engaged=$(grep -c -- '-> on' "$WORK/rel.out")
	ktap_print_msg "rel: $engaged engagements under the load; at rest after" \
		"$t ms: 08h ${u:-?} (as nvme-pci saw it set), largest" \
		"moderation_us ${m:-?}; still running: $((!alive)), exit $rc"
	[ "$engaged" -gt 0 ] && [ $rest = 0 ] && [ $alive = 0 ] && [ "$rc" = 0 ] &&
		same_state "$after" "$before" && ok=0
	ktap_test_result "released after the load while still running, then exit 0, all as before" \
		[ $ok = 0 ]
}

ktap_print_header
require_root
require_test_devs
NVME_COAL=${NVME_COAL:-$(command -v nvme-coal || echo "$DIR/../../../nvme/nvme-coal")}
NS=$(first_ns)
CTRL=$(ns_ctrl "${NS#/dev/}")
if [ ! -x "$NVME_COAL" ]; then
	ktap_skip_all "nvme-coal is not built (make -C tools/nvme, or NVME_COAL=)"
	exit "$KSFT_SKIP"
fi
if [ ! -w "$SWITCH" ] || ! command -v nvme > /dev/null || [ ! -d /sys/kernel/debug/block ]; then
	ktap_skip_all "needs nvme-pci's adaptive coalescing switch, nvme-cli and debugfs"
	exit "$KSFT_SKIP"
fi
IRQS=$(awk -v c="$CTRL" '$NF ~ "^" c "q[1-9][0-9]*$" { sub(":", "", $1); print $1 }' \
	/proc/interrupts)
VECTORS=$(awk -v c="$CTRL" '$NF ~ "^" c "q[1-9][0-9]*$" { sub("^" c "q", "", $NF); print $NF }' \
	/proc/interrupts)
mkdir -p "$WORK"
check_tests
save_knobs
echo 0 > "$SWITCH"
# nvme-pci releases what its policy set within a period
pause 1
ktap_print_msg "$NVME_COAL on $CTRL: I/O vectors $(echo $VECTORS), irqs $(echo $IRQS)"
run_tests

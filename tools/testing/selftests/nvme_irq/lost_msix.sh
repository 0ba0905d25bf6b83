#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Lost MSI-X messages made by the device, as behind Intel VMD in the field:
# the controller posts the completion but its message never arrives.  The
# driver's own injector stays off; an emulated controller drops 1 %, 50 %
# and 100 % of queue 1's messages ($NVME_IRQ_QMP reaches it).  With the
# poller watching from the start (nvme.lost_irq_poll_always=1), at QD1
# every dropped message is a stall only the poller can end: fio verify is
# clean, the poller recovers at least as many stalls as the device dropped
# messages, nothing times out, and the worst I/O waits at most three poll
# intervals, far from io_timeout.  At the defaults a healthy controller is
# not watched at all; once it drops every message, the first stall ends at
# its command's early deadline, which arms the poller for the controller
# with one warning, and the poller ends the later ones.  With the deadline
# and the poller off, a read whose message is dropped ends in
# nvme_timeout()'s "completion polled".

DIR=$(dirname "$0")
. "$DIR/../kselftest/ktap_helpers.sh"
. "$DIR/lib.sh"

DBG=/sys/kernel/debug/nvme_pci
PARAM=/sys/module/nvme/parameters/lost_irq_poll_ms
DEADLINE=/sys/module/nvme/parameters/lost_irq_deadline_ms
ALWAYS=/sys/module/nvme/parameters/lost_irq_poll_always
WORK=${TMPDIR:-/tmp}/nvme_irq_lost_msix
# besides three poll intervals (two checks, each up to half an interval
# late to share a timer interrupt): a non-operational power state's exit
# latency, a vCPU the host did not run for a while (a busy 2-core host
# gave 67.5 ms against 65).  Still two orders of magnitude below
# io_timeout: the latency itself is the benchmark's (lost scenario).
SLACK_MS=200

ALL_TESTS="
	lost1_fio_clean lost1_dropped lost1_recovered lost1_no_timeout lost1_within
	lost50_fio_clean lost50_dropped lost50_recovered lost50_no_timeout lost50_within
	lost100_fio_clean lost100_dropped lost100_recovered lost100_no_timeout lost100_within
	lost100_not_blamed_on_cpu
	healthy_fio_clean healthy_not_watched
	deadline_fio_clean deadline_first_stall deadline_arms_poller
	deadline_no_timeout deadline_warning
	poller_off_after_timeout
	poller_off_completion_polled
"
declare -A LOST_OK LOST_DROPPED LOST_RECOVERED LOST_TIMEOUTS LOST_WORST LOST_BLOCKED

lose() {	# lose PPM: that fraction of queue 1's messages, 0 for none
	qmp_lose_msix "$dev" "$vec" "$1"
}
cleanup() {
	lose 0 > /dev/null 2>&1
	echo "$poll_ms" > "$PARAM"
	echo "$deadline_ms" > "$DEADLINE"
	echo "$io_timeout" > "/sys/block/${NS#/dev/}/queue/io_timeout"
}

key() {		# key NAME: a counter of $CTRL's lost_irq file
	awk -F': ' -v k="$1" '$1 == k { print $2 }' "$DBG/$CTRL/lost_irq"
}

# at the defaults: the poller watches a controller only once it has had a
# completion recovered; forget that $CTRL had one (earlier tests)
defaults() {
	echo 0 > "$ALWAYS"
	echo 0 > "$DBG/$CTRL/lost_irq_armed"
}

dropped() {
	local d

	read -ra d <<< "$("$NVME_IRQ_QMP" get "$dev" x-msix-dropped)"
	echo "${d[vec]}"
}
recoveries() {
	awk -F': ' '$1 == "q1.recoveries" { print $2 }' "$DBG/$CTRL/lost_irq"
}
cpu_blocked() {
	awk -F': ' '$1 == "q1.cpu_blocked" { print $2 }' "$DBG/$CTRL/lost_irq"
}
timeouts() {
	dmesg_since | grep -c "$CTRL: I/O tag .* timeout"
}

# fio_qd1 NAME [SIZE]: QD1 writes then reads back with crc32c on queue 1's
# CPU (1m: 256 of each); prints the worst completion latency in ms; true if
# fio reports no error
fio_qd1() {
	local out=$WORK/$1.json s worst ios errs

	fio --output-format=json --output="$out" --name=q1 --filename="$NS" \
		--rw=randwrite --bs=4k --size="${2:-1m}" --ioengine=libaio --direct=1 \
		--iodepth=1 --verify=crc32c --verify_fatal=1 \
		--cpus_allowed="$cpu" > /dev/null 2> "$WORK/$1.err" || return 1
	s=$(jq -r '.jobs[0] | [([.read.clat_ns.max, .write.clat_ns.max] | max / 1e6),
		.read.total_ios + .write.total_ios, .error] | @tsv' "$out") || return 1
	read -r worst ios errs <<< "$s"
	LC_ALL=C printf '%.1f %s %s\n' "$worst" "$ios" "$errs"
	[ "$errs" = 0 ] && [ "$ios" -gt 0 ]
}

# PCT % of queue 1's messages lost at the device.  At QD1 on queue 1's CPU
# nothing else can reap a stalled completion (this test is the only I/O on
# the drive), so every dropped message is a stall the poller must end.
# 512 I/Os at 1 % (five drops expected, none in 0.6 % of runs), 256 where
# every other message or more is lost (each drop costs a stall).
lose_run() {
	local pct=$1 ppm=$(($1 * 10000)) d0 r0 t0 b0 res worst ios errs size=512k

	[ "$pct" -ge 50 ] || size=1m
	d0=$(dropped) r0=$(recoveries) t0=$(timeouts) b0=$(cpu_blocked)
	lose "$ppm"
	res=$(fio_qd1 "p$pct" "$size")
	LOST_OK[$pct]=$?
	lose 0
	read -r worst ios errs <<< "$res"
	LOST_DROPPED[$pct]=$(($(dropped) - d0))
	LOST_RECOVERED[$pct]=$(($(recoveries) - r0))
	LOST_TIMEOUTS[$pct]=$(($(timeouts) - t0))
	LOST_WORST[$pct]=$worst
	LOST_BLOCKED[$pct]=$(($(cpu_blocked) - b0))
	ktap_print_msg "$pct %: $ios I/Os, ${LOST_DROPPED[$pct]} messages dropped," \
		"${LOST_RECOVERED[$pct]} stalls recovered, worst I/O ${worst:-?} ms," \
		"${LOST_TIMEOUTS[$pct]} timeouts, ${LOST_BLOCKED[$pct]} blamed on the CPU"
}

lost_fio_clean() {
	once "lost$1" lose_run "$1"
	ktap_test_result "$1 % of queue 1's messages lost: fio verify clean" \
		[ "${LOST_OK[$1]}" -eq 0 ]
}

lost_dropped() {
	once "lost$1" lose_run "$1"
	ktap_test_result "$1 %: the device dropped messages" [ "${LOST_DROPPED[$1]}" -gt 0 ]
}

lost_recovered() {
	once "lost$1" lose_run "$1"
	ktap_test_result "$1 %: every stall recovered by the poller" \
		[ "${LOST_RECOVERED[$1]}" -ge "${LOST_DROPPED[$1]}" ]
}

lost_no_timeout() {
	once "lost$1" lose_run "$1"
	ktap_test_result "$1 %: nothing timed out" [ "${LOST_TIMEOUTS[$1]}" -eq 0 ]
}

within() {	# within WORST_MS
	local bound=$((3 * poll_ms + SLACK_MS))

	[ -n "$1" ] && awk -v w="$1" -v b=$bound 'BEGIN { exit !(w <= b) }'
}

lost_within() {
	once "lost$1" lose_run "$1"
	ktap_test_result "$1 %: worst I/O within three poll intervals + $SLACK_MS ms" \
		within "${LOST_WORST[$1]}"
}

# a message the device dropped is no CPU's fault: at most one recovery in
# ten may find the vector's vCPU slow to answer (the host did not run it)
few_blamed() {	# few_blamed BLAMED RECOVERED: some recovered, at most 1/10 blamed
	[ "$2" -gt 0 ] && [ $(($1 * 10)) -le "$2" ]
}

lost100_not_blamed_on_cpu() {
	once lost100 lose_run 100
	ktap_test_result "100 %: at most one recovery in ten blamed on the CPU" \
		few_blamed "${LOST_BLOCKED[100]}" "${LOST_RECOVERED[100]}"
}

lost1_fio_clean() { lost_fio_clean 1; }
lost1_dropped() { lost_dropped 1; }
lost1_recovered() { lost_recovered 1; }
lost1_no_timeout() { lost_no_timeout 1; }
lost1_within() { lost_within 1; }
lost50_fio_clean() { lost_fio_clean 50; }
lost50_dropped() { lost_dropped 50; }
lost50_recovered() { lost_recovered 50; }
lost50_no_timeout() { lost_no_timeout 50; }
lost50_within() { lost_within 50; }
lost100_fio_clean() { lost_fio_clean 100; }
lost100_dropped() { lost_dropped 100; }
lost100_recovered() { lost_recovered 100; }
lost100_no_timeout() { lost_no_timeout 100; }
lost100_within() { lost_within 100; }

# A healthy controller at the defaults: QD1 fio, no message lost.  The
# poller never checks it and no deadline passes.
healthy_run() {
	local c0 p0

	defaults
	c0=$(key q1.checks) p0=$(key deadline_polls)
	fio_qd1 healthy > /dev/null
	HEALTHY_OK=$?
	HEALTHY_CHECKS=$(($(key q1.checks) - c0))
	HEALTHY_POLLS=$(($(key deadline_polls) - p0))
	HEALTHY_ARMED=$(cat "$DBG/$CTRL/lost_irq_armed")
	echo 1 > "$ALWAYS"
	ktap_print_msg "healthy, defaults: $HEALTHY_CHECKS checks, $HEALTHY_POLLS" \
		"deadline polls, armed $HEALTHY_ARMED"
}

healthy_fio_clean() {
	once healthy healthy_run
	ktap_test_result "healthy at the defaults: fio verify clean" [ "$HEALTHY_OK" -eq 0 ]
}

healthy_not_watched() {
	once healthy healthy_run
	ktap_test_result "healthy at the defaults: no poller check, no deadline poll, not armed" \
		[ "$HEALTHY_CHECKS:$HEALTHY_POLLS:$HEALTHY_ARMED" = 0:0:0 ]
}

# At the defaults, every message of queue 1 lost: the first stall ends at
# its command's deadline (0.5 s, which blk-mq's timer rounds up by about a
# second), which arms the poller; the poller ends the later stalls
deadline_run() {
	local f0 r0 t0 res ios errs

	defaults
	mark_dmesg
	f0=$(key deadline_recoveries) r0=$(recoveries) t0=$(timeouts)
	lose 1000000
	res=$(fio_qd1 deadline 512k)
	DL_OK=$?
	lose 0
	read -r DL_WORST ios errs <<< "$res"
	DL_FOUND=$(($(key deadline_recoveries) - f0))
	DL_POLLED=$(($(recoveries) - r0))
	DL_TIMEOUTS=$(($(timeouts) - t0))
	DL_ARMED=$(cat "$DBG/$CTRL/lost_irq_armed")
	DL_ARMING=$(dmesg_since | grep -c "$CTRL: checking busy queues for lost")
	echo 1 > "$ALWAYS"
	ktap_print_msg "deadline: $ios I/Os, $DL_FOUND found at a deadline" \
		"(longest $(key deadline_max_ms) ms), then $DL_POLLED by the poller;" \
		"worst I/O ${DL_WORST:-?} ms, $DL_TIMEOUTS timeouts"
}

deadline_fio_clean() {
	once deadline deadline_run
	ktap_test_result "defaults, 100 % lost: fio verify clean" [ "$DL_OK" -eq 0 ]
}

# far from io_timeout: the figure against the 2 s target is the benchmark's
first_stall_ended() {
	[ "$DL_FOUND" -ge 1 ] && [ -n "$DL_WORST" ] &&
		awk -v w="$DL_WORST" 'BEGIN { exit !(w < 5000) }'
}

deadline_first_stall() {
	once deadline deadline_run
	ktap_test_result "defaults, 100 % lost: the first stall ended at its deadline, within 5 s" \
		first_stall_ended
}

armed_and_polled() {
	[ "$DL_ARMED" = 1 ] && [ "$DL_POLLED" -gt 0 ] && [ "$DL_ARMING" = 1 ]
}

deadline_arms_poller() {
	once deadline deadline_run
	ktap_test_result "defaults, 100 % lost: armed once, the poller ended the later stalls" \
		armed_and_polled
}

deadline_no_timeout() {
	once deadline deadline_run
	ktap_test_result "defaults, 100 % lost: nothing timed out" [ "$DL_TIMEOUTS" -eq 0 ]
}

# once per controller since boot: an earlier test may have had it first
deadline_warned() {
	dmesg | grep -q "$CTRL: no completion interrupt for I/O tag [0-9]* on queue 1, irq $irq "
}

deadline_warning() {
	once deadline deadline_run
	ktap_test_result "defaults: the warning says no interrupt came for a command on queue 1" \
		deadline_warned
}

# Deadline and poller off, every message of queue 1 lost, io_timeout 2 s:
# the read stalls until nvme_timeout() finds the completion, as in the field
poller_off_run() {
	local start

	echo 0 > "$PARAM"
	echo 0 > "$DEADLINE"
	echo 2000 > "/sys/block/${NS#/dev/}/queue/io_timeout"
	mark_dmesg
	lose 1000000
	start=$(date +%s%N)
	taskset -c "$cpu" dd if="$NS" of=/dev/null bs=4k count=1 iflag=direct 2> /dev/null
	off_rc=$?
	off_ms=$((($(date +%s%N) - start) / 1000000))
	lose 0
	echo "$poll_ms" > "$PARAM"
	echo "$deadline_ms" > "$DEADLINE"
	echo "$io_timeout" > "/sys/block/${NS#/dev/}/queue/io_timeout"
	ktap_print_msg "poller off: the read on CPU $cpu took $off_ms ms"
	off_polled=false
	dmesg_since | grep -q "$CTRL: I/O tag .* QID 1 timeout, completion polled" &&
		off_polled=true
}

poller_off_after_timeout() {
	once poller_off_run
	ktap_test_result "poller off: the read completes after io_timeout" \
		[ "$off_rc:$((off_ms >= 2000))" = 0:1 ]
}

poller_off_completion_polled() {
	once poller_off_run
	ktap_test_result "poller off: nvme_timeout() logs 'completion polled'" \
		$off_polled
}

ktap_print_header
require_root
require_test_devs
# the first named namespace and its controller
NS=$(first_ns)
CTRL=$(ns_ctrl "${NS#/dev/}")
if [ ! -w "$PARAM" ] || [ ! -w "$DEADLINE" ] || [ ! -r "$DBG/$CTRL/lost_irq" ]; then
	ktap_skip_all "needs nvme.lost_irq_poll_ms, nvme.lost_irq_deadline_ms, debugfs and $CTRL"
	exit "$KSFT_SKIP"
fi
if [ -z "${NVME_IRQ_QMP:-}" ] ||
   ! dev=$("$NVME_IRQ_QMP" dev "$CTRL" 2> /dev/null) ||
   ! "$NVME_IRQ_QMP" get "$dev" x-msix-dropped > /dev/null 2>&1; then
	ktap_skip_all "no emulated controller that can lose MSI-X messages (NVME_IRQ_QMP)"
	exit "$KSFT_SKIP"
fi
mkdir -p "$WORK"

# queue 1: its MSI-X vector and the CPU that submits to it
irq=$(awk -v q="${CTRL}q1" '$NF == q { sub(":", "", $1); print $1 }' /proc/interrupts)
vec=$(awk -v q="${CTRL}q1" '$NF == q { for (i = 1; i <= NF; i++)
	if ($i ~ /^[0-9]+-edge$/) { sub("-edge", "", $i); print $i } }' /proc/interrupts)
cpu=$(cut -d, -f1 "/sys/block/${NS#/dev/}/mq/0/cpu_list" | cut -d- -f1)
poll_ms=$(cat "$PARAM")
deadline_ms=$(cat "$DEADLINE")
io_timeout=$(cat "/sys/block/${NS#/dev/}/queue/io_timeout")
ktap_print_msg "queue 1 of $CTRL: irq $irq, MSI-X vector $vec, CPU $cpu; poll interval $poll_ms ms"

# the poller from the start, but where a test says otherwise
poll_always
at_exit cleanup
run_tests

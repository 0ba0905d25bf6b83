#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# genirq per-vector interrupt moderation on the NVMe I/O vectors: set
# through /proc/irq/<N>/moderation_us and nvme.irq_moderation_us=; with it
# on, fio randread at QD32 verifies clean and needs fewer handler runs per
# completed I/O than with it off in the same boot; held interrupts show in
# the statistics and the tracepoint.  Vectors genirq cannot moderate and
# bad values are refused with the documented error, the old value kept.
# A CPU going offline and back during moderated I/O loses nothing.

DIR=$(dirname "$0")
. "$DIR/../kselftest/ktap_helpers.sh"
. "$DIR/lib.sh"

WORK=${TMPDIR:-/tmp}/nvme_irq_moderation
TRACE=/sys/kernel/tracing
# the quiet time of the moderated runs; off_run sets it from the host's rate
DELAY=1000

ALL_TESTS="
	boot_param_applied
	off_fio_clean
	delay_written
	delay_reads_back
	on_fio_clean
	on_fewer_runs
	on_held_counted
	stats_root_only
	on_traced
	rejects_negative
	rejects_text
	rejects_too_big
	rejects_overflow
	rejects_empty
	too_big_is_erange
	admin_not_allowed
	hotplug_fio_clean
	hotplug_cpu1_serves
	off_written
	off_nothing_held
"
# with noirqmoderation there is no knob, and nvme.irq_moderation_us= is
# refused with one message per controller, the vectors signalling at once
NOIRQ_TESTS="
	noirq_no_knob
	noirq_param_refused
"
# with threadirqs every handler is a thread, which genirq does not moderate:
# nvme could not allow its vectors, so root's write is refused
THREADED_TESTS="
	threaded_refused
	threaded_fio_clean
"

set_all() {
	set_moderation "$1" $irqs
}
all_are() {
	moderation_is "$1" $irqs
}
stat_sum() {
	local i

	for i in $irqs; do
		cat "/proc/irq/$i/moderation_stats"
	done | awk -v k="$1:" '$1 == k { s += $2 } END { print s + 0 }'
}

# a function: ktap_test_result runs its command unquoted
no_moderation_knob() {
	[ -z "$(ls /proc/irq/*/moderation_us 2> /dev/null)" ]
}

noirq_no_knob() {
	ktap_test_result "noirqmoderation: no /proc/irq/*/moderation_us" \
		no_moderation_knob
}

refused_once() {
	once_per_ctrl "irq_moderation_us=$1 not applied"
}

noirq_param_refused() {
	local us

	us=$(cmdline_value nvme.irq_moderation_us 0)
	if [ "$us" = 0 ]; then
		ktap_test_skip "nvme.irq_moderation_us not on the command line"
	else
		ktap_test_result "nvme.irq_moderation_us=$us refused: one message per controller" \
			refused_once "$us"
	fi
}

boot_param_applied() {
	local boot

	boot=$(cmdline_value nvme.irq_moderation_us 0)
	ktap_test_result "nvme.irq_moderation_us=$boot applied to every I/O vector" \
		all_are "$boot"
}

# fio randread QD32 over every drive with moderation off, then on, in this
# boot; data written first so that every read verifies
fio_opts="--bs=4k --ioengine=libaio --direct=1 --size=16m --verify=crc32c"
fio_opts+=" --verify_fatal=1"

prep_run() {
	set_all 0
	fio_json prep --rw=write --iodepth=16 --do_verify=0 $fio_opts \
		$(fio_all_drives) > /dev/null
}

runs_per_io() {	# fio job name: handler runs per completion during it
	local r0 c0 r1 c1 rc

	r0=$(drain_sum irq_runs)
	c0=$(($(drain_sum irq_completions) + $(drain_sum poll_completions)))
	fio_json "$1" --rw=randread --iodepth=32 $fio_opts $(fio_all_drives)
	rc=$?
	r1=$(drain_sum irq_runs)
	c1=$(($(drain_sum irq_completions) + $(drain_sum poll_completions)))
	echo "$(((r1 - r0) * 10000 / (c1 - c0 + 1)))" > "$WORK/$1.ratio"
	ktap_print_msg "$1: $((r1 - r0)) handler runs for $((c1 - c0)) completions"
	return $rc
}

# quiet_time: about four completions of the slowest job of the off run
# (one job per drive, its load on one queue), between 1000 and 10000 us:
# moderation gathers nothing on a vector that completes less than one I/O
# per quiet time, and a guest's rate under TCG depends on the host and the
# kernel's debug options (2000 IOPS per queue here, a few hundred with KASAN)
quiet_time() {
	local iops min=0 us

	for iops in $(< "$WORK/off.iops"); do
		{ [ "$min" = 0 ] || [ "$iops" -lt "$min" ]; } && min=$iops
	done
	[ "$min" -gt 0 ] || { echo 1000; return; }
	us=$((4000000 / min))
	[ "$us" -lt 1000 ] && us=1000
	[ "$us" -gt 10000 ] && us=10000
	echo "$us"
}

off_run() {
	local rc

	once prep prep_run
	set_all 0
	runs_per_io off
	rc=$?
	DELAY=$(quiet_time)
	ktap_print_msg "quiet time $DELAY us (jobs' IOPS off: $(< "$WORK/off.iops"))"
	return $rc
}

off_fio_clean() {
	ktap_test_result "moderation off: fio randread QD32 verify clean" \
		once off off_run
}

delay_run() {
	once off off_run
	set_all $DELAY
	delay_set=$?
	all_are $DELAY
	delay_read=$?
}

delay_written() {
	once delay delay_run
	ktap_test_result "moderation_us: the quiet time written to every I/O vector" \
		[ "$delay_set" = 0 ]
}

delay_reads_back() {
	once delay delay_run
	ktap_test_result "every I/O vector reads back the quiet time" [ "$delay_read" = 0 ]
}

# the moderated run, with the tracepoint on
on_run() {
	local held0

	once off off_run
	set_all $DELAY
	held0=$(stat_sum held)
	echo 1 > "$TRACE/events/irq/irq_moderation_hold/enable" 2> /dev/null
	echo > "$TRACE/trace" 2> /dev/null
	runs_per_io on
	on_fio=$?
	echo 0 > "$TRACE/events/irq/irq_moderation_hold/enable" 2> /dev/null
	on_held=$(($(stat_sum held) - held0))
	ktap_print_msg "$on_held interrupts held, $(stat_sum delays) quiet times with a hold"
	on_events=$(grep -c 'irq_moderation_hold: irq=' "$TRACE/trace" 2> /dev/null)
	ktap_print_msg "${on_events:-0} irq_moderation_hold events traced"
	set_all 0
}

on_fio_clean() {
	once on on_run
	ktap_test_result "moderation on: fio randread QD32 verify clean" [ "$on_fio" = 0 ]
}

fewer_runs() {
	local off on

	off=$(cat "$WORK/off.ratio" 2> /dev/null)
	on=$(cat "$WORK/on.ratio" 2> /dev/null)
	ktap_print_msg "handler runs per 10000 completions: off $off, on $on"
	[ -n "$off" ] && [ -n "$on" ] && [ "$on" -lt "$off" ]
}

on_fewer_runs() {
	once off off_run
	once on on_run
	ktap_test_result "fewer handler runs per completed I/O with moderation on" \
		fewer_runs
}

on_held_counted() {
	once on on_run
	ktap_test_result "moderation_stats counted held interrupts" [ "$on_held" -gt 0 ]
}

# the hold times are another device's timing: for root only
stats_root_only() {
	ktap_test_result "moderation_stats is readable by root only (0400)" \
		[ "$(stat -c %a "/proc/irq/$first/moderation_stats")" = 400 ]
}

on_traced() {
	once on on_run
	ktap_test_result "tracepoint irq_moderation_hold fired" [ "${on_events:-0}" -gt 0 ]
}

# Bad values: -EINVAL or -ERANGE, the old value kept
rejects() {
	echo 100 > "/proc/irq/$first/moderation_us"
	ktap_test_result "moderation_us rejects '$1' and keeps 100" \
		rejects_keeps "/proc/irq/$first/moderation_us" "$1"
	echo 0 > "/proc/irq/$first/moderation_us"
}

rejects_negative() { rejects -1; }
rejects_text() { rejects abc; }
rejects_too_big() { rejects 10001; }
rejects_overflow() { rejects 99999999999999999999; }
# rejects_keeps with no value writes the empty string
rejects_empty() {
	echo 100 > "/proc/irq/$first/moderation_us"
	ktap_test_result "moderation_us rejects '' and keeps 100" \
		rejects_keeps "/proc/irq/$first/moderation_us"
	echo 0 > "/proc/irq/$first/moderation_us"
}

# for ktap_test_result, which runs its command unquoted
err_says() {
	grep -q "$1" <<< "$write_err"
}

too_big_is_erange() {
	write_err=$( (echo 10001 > "/proc/irq/$first/moderation_us") 2>&1)
	ktap_print_msg "10001: ${write_err##*: }"
	ktap_test_result "above the maximum: ERANGE" err_says range
}

# The admin queue's vector: nvme does not allow moderating it, so genirq
# refuses root with EPERM (the level-triggered and shared vectors genirq
# refuses itself are KUnit's: writing to another device's vector is not
# this suite's to do)
admin_is_refused() {
	err_says "not permitted" && [ "$(cat "/proc/irq/$admin/moderation_us")" = 0 ]
}

admin_not_allowed() {
	admin=$(awk -v c="$(echo $(nvme_ctrls) | cut -d' ' -f1)q0" \
		'$NF == c { sub(":", "", $1); print $1 }' /proc/interrupts)
	if [ -z "$admin" ]; then
		ktap_test_skip "the admin queue has no vector of its own"
		return
	fi
	write_err=$( (echo 100 > "/proc/irq/$admin/moderation_us") 2>&1)
	ktap_print_msg "admin irq $admin: ${write_err##*: }"
	ktap_test_result "admin queue vector $admin: EPERM, stays 0" admin_is_refused
}

# CPU 1 offline and back during moderated I/O
hotplug_run() {
	local pid

	[ -w /sys/devices/system/cpu/cpu1/online ] || return 1
	once prep prep_run
	set_all $DELAY
	fio_json hotplug --rw=randrw --iodepth=16 --time_based --runtime=6 \
		$fio_opts $(fio_all_drives) > "$WORK/hotplug.out" &
	pid=$!
	sleep 1.5
	echo 0 > /sys/devices/system/cpu/cpu1/online
	hp_was=$(cat /sys/devices/system/cpu/cpu1/online)
	sleep 2
	echo 1 > /sys/devices/system/cpu/cpu1/online
	wait $pid
	hp_fio=$?
	cat "$WORK/hotplug.out"
	# CPU1 really went away, and I/O submitted from it is served again
	taskset -c 1 dd if="$(first_ns)" of=/dev/null bs=4k count=256 \
		iflag=direct 2> /dev/null
	hp_dd=$?
	ktap_print_msg "CPU1 online while unplugged: $hp_was; dd from CPU1 after: status $hp_dd"
	set_all 0
	return 0
}

hotplug_fio_clean() {
	if ! once hotplug hotplug_run; then
		ktap_test_skip "CPU1 cannot go offline"
		return
	fi
	ktap_test_result "CPU1 offline and back during moderated I/O: verify clean" \
		[ "$hp_fio" -eq 0 ]
}

hotplug_cpu1_serves() {
	if ! once hotplug hotplug_run; then
		ktap_test_skip "CPU1 cannot go offline"
		return
	fi
	ktap_test_result "CPU1 was offline and serves I/O again once back" \
		[ "$hp_was:$hp_dd" = 0:0 ]
}

# Off again: nothing is held any more
off_again_run() {
	local held0

	once prep prep_run
	set_all $DELAY
	set_all 0
	off_set=$?
	held0=$(stat_sum held)
	fio_json after-off --rw=randread --iodepth=32 $fio_opts \
		$(fio_all_drives) > /dev/null
	off_held=$(($(stat_sum held) - held0))
	# since the script started: moderated runs and hotplug included
	off_timeouts=$(dmesg_since | grep -c timeout)
}

off_written() {
	once off_again off_again_run
	ktap_test_result "moderation_us=0 written to every I/O vector" [ "$off_set" = 0 ]
}

off_nothing_held() {
	once off_again off_again_run
	ktap_test_result "switched off: no interrupt held, nothing timed out" \
		[ "$off_held:$off_timeouts" = 0:0 ]
}

threaded_is_refused() {
	err_says "not permitted" && [ "$(< "/proc/irq/$first/moderation_us")" = 0 ]
}

threaded_refused() {
	write_err=$( (echo 100 > "/proc/irq/$first/moderation_us") 2>&1)
	ktap_print_msg "irq $first ($(cat "/sys/kernel/irq/$first/actions")): ${write_err##*: }"
	ktap_test_result "threadirqs: I/O vector $first refused with EPERM, stays 0" \
		threaded_is_refused
}

threaded_fio_clean() {
	fio_json threaded --rw=randwrite --iodepth=16 $fio_opts \
		$(fio_all_drives) > /dev/null
	ktap_test_result "threadirqs: verified writes on the threaded vectors, no error" \
		[ $? -eq 0 ]
}

ktap_print_header
mark_dmesg
require_root
require_test_devs
irqs=$(nvme_io_irqs)
first=$(echo "$irqs" | head -n 1)
if grep -qw noirqmoderation /proc/cmdline; then
	ALL_TESTS=$NOIRQ_TESTS
	run_tests
	exit
fi
if grep -qw threadirqs /proc/cmdline && [ -n "$first" ]; then
	mkdir -p "$WORK"
	ALL_TESTS=$THREADED_TESTS
	run_tests
	exit
fi
if [ -z "$first" ] || [ ! -e "/proc/irq/$first/moderation_us" ]; then
	ktap_skip_all "needs NVMe I/O vectors and CONFIG_IRQ_MODERATION"
	exit "$KSFT_SKIP"
fi
mkdir -p "$WORK"
at_exit set_all 0
run_tests

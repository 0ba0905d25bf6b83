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
DELAY=1000

ktap_print_header
mark_dmesg
require_root
require_test_devs
irqs=$(nvme_io_irqs)
first=$(echo "$irqs" | head -n 1)
if grep -qw noirqmoderation /proc/cmdline; then
	# switched off: no knob, and nvme.irq_moderation_us= is refused with
	# one message per controller, the vectors signalling at once
	ktap_set_plan 2
	ktap_test_result "noirqmoderation: no /proc/irq/*/moderation_us" \
		[ -z "$(ls /proc/irq/*/moderation_us 2> /dev/null)" ]
	us=$(cmdline_value nvme.irq_moderation_us 0)
	refused_once() {
		once_per_ctrl "irq_moderation_us=$us not applied"
	}
	if [ "$us" = 0 ]; then
		ktap_test_skip "nvme.irq_moderation_us not on the command line"
	else
		ktap_test_result "nvme.irq_moderation_us=$us refused: one message per controller" \
			refused_once
	fi
	ktap_finished
	exit
fi
if [ -z "$first" ] || [ ! -e "/proc/irq/$first/moderation_us" ]; then
	ktap_skip_all "needs NVMe I/O vectors and CONFIG_IRQ_MODERATION"
	exit "$KSFT_SKIP"
fi
mkdir -p "$WORK"
ktap_set_plan 20

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
at_exit set_all 0

# 1: the boot parameter
boot=$(cmdline_value nvme.irq_moderation_us 0)
ktap_test_result "nvme.irq_moderation_us=$boot applied to every I/O vector" \
	all_are "$boot"

# 2-3: fio randread QD32 over every drive with moderation off, then on, in
# this boot; data written first so that every read verifies
fio_opts="--bs=4k --ioengine=libaio --direct=1 --size=32m --verify=crc32c"
fio_opts+=" --verify_fatal=1 $(fio_all_drives)"
set_all 0
fio_json prep --rw=write --iodepth=16 --do_verify=0 $fio_opts > /dev/null
runs_per_io() {	# fio job name: handler runs per completion during it
	local r0 c0 r1 c1 rc

	r0=$(drain_sum irq_runs)
	c0=$(($(drain_sum irq_completions) + $(drain_sum poll_completions)))
	fio_json "$1" --rw=randread --iodepth=32 $fio_opts
	rc=$?
	r1=$(drain_sum irq_runs)
	c1=$(($(drain_sum irq_completions) + $(drain_sum poll_completions)))
	echo "$(((r1 - r0) * 10000 / (c1 - c0 + 1)))" > "$WORK/$1.ratio"
	ktap_print_msg "$1: $((r1 - r0)) handler runs for $((c1 - c0)) completions"
	return $rc
}
ktap_test_result "moderation off: fio randread QD32 verify clean" runs_per_io off
ktap_test_result "moderation_us=$DELAY written to every I/O vector" set_all $DELAY
ktap_test_result "every I/O vector reads back $DELAY" all_are $DELAY

# 4-8: moderated run, with the tracepoint on
held0=$(stat_sum held)
echo 1 > "$TRACE/events/irq_moderation/enable" 2> /dev/null
echo > "$TRACE/trace" 2> /dev/null
ktap_test_result "moderation on: fio randread QD32 verify clean" runs_per_io on
echo 0 > "$TRACE/events/irq_moderation/enable" 2> /dev/null
off=$(cat "$WORK/off.ratio")
on=$(cat "$WORK/on.ratio")
ktap_print_msg "handler runs per 10000 completions: off $off, on $on"
ktap_test_result "fewer handler runs per completed I/O with moderation on" \
	[ "$on" -lt "$off" ]
held=$(($(stat_sum held) - held0))
ktap_print_msg "$held interrupts held, $(stat_sum delays) quiet times with a hold"
ktap_test_result "moderation_stats counted held interrupts" [ "$held" -gt 0 ]
events=$(grep -c 'irq_moderation_hold: irq=' "$TRACE/trace" 2> /dev/null)
ktap_print_msg "${events:-0} irq_moderation_hold events traced"
ktap_test_result "tracepoint irq_moderation_hold fired" [ "${events:-0}" -gt 0 ]

# 9-14: bad values: -EINVAL or -ERANGE, the old value kept
echo 100 > "/proc/irq/$first/moderation_us"
for bad in -1 abc 10001 99999999999999999999 ''; do
	ktap_test_result "moderation_us rejects '$bad' and keeps 100" \
		rejects_keeps "/proc/irq/$first/moderation_us" "$bad"
done
err=$( (echo 10001 > "/proc/irq/$first/moderation_us") 2>&1)
ktap_print_msg "10001: ${err##*: }"
is_erange() {
	grep -q 'out of range' <<< "$err"
}
ktap_test_result "above the maximum: ERANGE" is_erange

# 15-16: a level-triggered vector of the guest, and a shared one if any
level=
shared=
for d in /sys/kernel/irq/*; do
	[ -e "/proc/irq/$(basename "$d")/moderation_us" ] || continue
	[ -n "$(cat "$d/actions")" ] || continue
	[ -z "$level" ] && [ "$(cat "$d/type")" = level ] && level=$(basename "$d")
	[ -z "$shared" ] && grep -q , "$d/actions" && shared=$(basename "$d")
done
if [ -z "$level" ]; then
	ktap_test_skip "no level-triggered interrupt with a handler"
else
	err=$( (echo 100 > "/proc/irq/$level/moderation_us") 2>&1)
	ktap_print_msg "irq $level ($(cat "/sys/kernel/irq/$level/actions"), level): ${err##*: }"
	level_refused() {
		grep -q "Invalid argument" <<< "$err" &&
			[ "$(cat "/proc/irq/$level/moderation_us")" = 0 ]
	}
	ktap_test_result "level-triggered irq $level refused with EINVAL, stays 0" \
		level_refused
fi
if [ -z "$shared" ]; then
	ktap_test_skip "no shared interrupt in this guest"
else
	ktap_test_result "shared irq $shared refused" \
		write_rejected "/proc/irq/$shared/moderation_us" 100
fi

# 17-18: CPU 1 offline and back during moderated I/O
set_all $DELAY
if [ -w /sys/devices/system/cpu/cpu1/online ]; then
	fio_json hotplug --rw=randrw --iodepth=16 --time_based --runtime=6 \
		$fio_opts > "$WORK/hotplug.out" &
	pid=$!
	sleep 1.5
	echo 0 > /sys/devices/system/cpu/cpu1/online
	was=$(cat /sys/devices/system/cpu/cpu1/online)
	sleep 2
	echo 1 > /sys/devices/system/cpu/cpu1/online
	wait $pid
	ok=$?
	cat "$WORK/hotplug.out"
	ktap_test_result "CPU1 offline and back during moderated I/O: verify clean" \
		[ $ok -eq 0 ]
	# CPU1 really went away, and I/O submitted from it is served again
	taskset -c 1 dd if="$(first_ns)" of=/dev/null bs=4k count=256 \
		iflag=direct 2> /dev/null
	rc=$?
	ktap_print_msg "CPU1 online while unplugged: $was; dd from CPU1 after: status $rc"
	ktap_test_result "CPU1 was offline and serves I/O again once back" \
		[ "$was:$rc" = 0:0 ]
else
	ktap_test_skip "CPU1 cannot go offline"
	ktap_test_skip "CPU1 cannot go offline"
fi

# 19-20: off again: nothing is held any more
ktap_test_result "moderation_us=0 written to every I/O vector" set_all 0
held0=$(stat_sum held)
fio_json after-off --rw=randread --iodepth=32 $fio_opts > /dev/null
nothing_held() {
	[ "$(stat_sum held)" = "$held0" ] && ! dmesg_since | grep -q timeout
}
ktap_test_result "switched off: no interrupt held, nothing timed out" \
	nothing_held

ktap_finished

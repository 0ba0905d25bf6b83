#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The block layer's fault injection next to the lost-interrupt poller, the
# bounded drain and moderation, all active on one controller:
# - fail_io_timeout drops the completion of requests whose CQE the driver
#   did consume: they must end in nvme_timeout()'s normal handling (abort,
#   then reset), not in a lost-interrupt recovery, a "completion polled" or a
#   double completion; the data written around them must verify;
# - fail_make_request fails bios before they reach the driver: the caller
#   gets the error, the controller and the poller see nothing.
# scripts/vm fails the boot on the WARN a double completion would print.

DIR=$(dirname "$0")
. "$DIR/../kselftest/ktap_helpers.sh"
. "$DIR/lib.sh"

DBG=/sys/kernel/debug
WORK=${TMPDIR:-/tmp}/nvme_irq_timeout_inject

ktap_print_header
require_root
require_test_devs
require_ctrls_and_fio
ctrls=$(nvme_ctrls)
if [ ! -d "$DBG/fail_io_timeout" ] || [ ! -d "$DBG/fail_make_request" ]; then
	ktap_skip_all "needs CONFIG_FAIL_IO_TIMEOUT and CONFIG_FAIL_MAKE_REQUEST"
	exit "$KSFT_SKIP"
fi
mkdir -p "$WORK"
ktap_set_plan 13

# the last named namespace, so that the others keep serving the system
ns=$(echo $NVME_IRQ_TEST_DEVS | awk '{ print $NF }')
ctrl=$(ns_ctrl "${ns#/dev/}")
disk=/sys/block/${ns#/dev/}
irqs=$(awk -v c="$ctrl" '$NF ~ "^" c "q[1-9][0-9]*$" { sub(":", "", $1); print $1 }' \
	/proc/interrupts)

counter() {	# counter KEY: the controller's lost-interrupt poller counter
	nvme_pci_key "$ctrl" lost_irq "$1"
}

# every knob the test changes, as it was
old_timeout=$(cat "$disk/queue/io_timeout")
saved=""
for a in fail_io_timeout fail_make_request; do
	for k in probability interval times verbose; do
		saved+=" $DBG/$a/$k=$(cat "$DBG/$a/$k")"
	done
done
for i in $irqs; do
	f=/proc/irq/$i/moderation_us
	saved+=" $f=$(cat "$f" 2> /dev/null || echo 0)"
done
restore() {
	local kv

	echo 0 > "$disk/io-timeout-fail"
	echo 0 > "$disk/make-it-fail"
	echo "$old_timeout" > "$disk/queue/io_timeout"
	for kv in $saved; do
		echo "${kv#*=}" > "${kv%=*}" 2> /dev/null
	done
}
at_exit restore

# What is active: the poller (nvme.lost_irq_poll_ms), the drain
# (nvme.irq_budget) and 50 us of moderation on every I/O vector of $ctrl
# (until the controller reset that ends the timeouts frees the handlers,
# and their moderation with them).
poll_ms=$(cat /sys/module/nvme/parameters/lost_irq_poll_ms)
budget=$(cat /sys/module/nvme/parameters/irq_budget)
moderated=0
for i in $irqs; do
	echo 50 > "/proc/irq/$i/moderation_us" 2> /dev/null && moderated=$((moderated + 1))
done
ktap_print_msg "$ctrl: poller ${poll_ms} ms, drain budget $budget, $moderated vector(s) moderated"
all_active() {
	[ "$poll_ms" -gt 0 ] && [ "$budget" -gt 0 ] && [ "$moderated" -gt 0 ]
}
ktap_test_result "poller, drain and moderation active on $ctrl" all_active

# 1. completions dropped by the block layer: three of them, 1 s io_timeout
echo 1000 > "$disk/queue/io_timeout"
recoveries=$(counter recoveries)
mark_dmesg
echo 100 > "$DBG/fail_io_timeout/probability"
echo 0 > "$DBG/fail_io_timeout/interval"
echo 3 > "$DBG/fail_io_timeout/times"
echo 0 > "$DBG/fail_io_timeout/verbose"
echo 1 > "$disk/io-timeout-fail"
fio --name=fake-timeout --filename="$ns" --rw=randwrite --bs=4k --size=4m \
	--ioengine=libaio --direct=1 --iodepth=8 --verify=crc32c \
	--verify_fatal=1 > "$WORK/fake-timeout.txt" 2>&1
rc=$?
echo 0 > "$disk/io-timeout-fail"
left=$(cat "$DBG/fail_io_timeout/times")
ktap_print_msg "fail_io_timeout: $((3 - left)) of 3 completions dropped"
ktap_test_result "the block layer dropped completions of $ctrl" [ "$left" -eq 0 ]
ktap_test_result "the writes around them verify (no lost or doubled completion)" \
	[ "$rc" -eq 0 ]

timed_out() {	# nvme_timeout() handled them: abort, then reset
	dmesg_since |
		grep -q "$ctrl: I/O tag [0-9]* .*QID [0-9]* timeout, \(aborting\|reset controller\)"
}
not_polled() {	# the CQE was consumed: nothing for nvme_timeout() to poll
	! dmesg_since | grep -q "timeout, completion polled"
}
no_lost_warning() {
	! dmesg_since | grep -q "completion interrupt lost"
}
dmesg_since | grep "$ctrl" | grep -m 4 "timeout\|Abort" |
	while read -r l; do ktap_print_msg "$l"; done
ktap_test_result "they ended in nvme_timeout(): abort or reset" timed_out
ktap_test_result "none was found by polling the CQ" not_polled
ktap_test_result "the poller recovered nothing (recoveries $recoveries -> $(counter recoveries))" \
	[ "$(counter recoveries)" -eq "$recoveries" ]
ktap_test_result "no lost-interrupt warning" no_lost_warning

live() {
	local t

	for t in $(seq 50); do
		[ "$(cat "/sys/class/nvme/$ctrl/state")" = live ] && return 0
		sleep 0.2
	done
	return 1
}
ktap_test_result "$ctrl is live again" live

# 2. bios failed before the driver: the reader gets EIO, nothing else happens
recoveries=$(counter recoveries)
mark_dmesg
echo 100 > "$DBG/fail_make_request/probability"
echo 0 > "$DBG/fail_make_request/interval"
echo 2 > "$DBG/fail_make_request/times"
echo 0 > "$DBG/fail_make_request/verbose"
echo 1 > "$disk/make-it-fail"
failed=0
for n in 1 2; do
	dd if="$ns" of=/dev/null bs=4k count=1 skip=$n iflag=direct 2> /dev/null ||
		failed=$((failed + 1))
done
echo 0 > "$disk/make-it-fail"
ktap_test_result "fail_make_request failed both reads with an error" [ "$failed" -eq 2 ]
read_ok() {
	dd if="$ns" of=/dev/null bs=4k count=1 skip=3 iflag=direct 2> /dev/null
}
ktap_test_result "a read after the injection succeeds" read_ok
no_timeout() {
	! dmesg_since | grep -q "timeout"
}
ktap_test_result "no timeout from the failed bios" no_timeout
ktap_test_result "no recovery from the failed bios" \
	[ "$(counter recoveries)" -eq "$recoveries" ]
ktap_test_result "$ctrl stayed live" live

ktap_finished

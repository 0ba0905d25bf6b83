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

ALL_TESTS="
	features_active
	dropped_completions_injected
	dropped_writes_verify
	dropped_end_in_timeout
	dropped_not_polled
	dropped_not_recovered
	dropped_no_warning
	dropped_ctrl_live
	failed_bios_fail
	failed_bios_read_after
	failed_bios_no_timeout
	failed_bios_not_recovered
	failed_bios_ctrl_live
"

counter() {	# counter KEY: the controller's lost-interrupt poller counter
	nvme_pci_key "$ctrl" lost_irq "$1"
}

restore() {
	local kv

	echo 0 > "$disk/io-timeout-fail"
	echo 0 > "$disk/make-it-fail"
	echo "$old_timeout" > "$disk/queue/io_timeout"
	for kv in $saved; do
		echo "${kv#*=}" > "${kv%=*}" 2> /dev/null
	done
}

# What is active: the poller (nvme.lost_irq_poll_ms), the drain
# (nvme.irq_budget) and 50 us of moderation on every I/O vector of $ctrl
# (until the controller reset that ends the timeouts frees the handlers,
# and their moderation with them).
activate() {
	local i

	poll_ms=$(cat /sys/module/nvme/parameters/lost_irq_poll_ms)
	budget=$(cat /sys/module/nvme/parameters/irq_budget)
	moderated=0
	for i in $irqs; do
		echo 50 > "/proc/irq/$i/moderation_us" 2> /dev/null &&
			moderated=$((moderated + 1))
	done
	ktap_print_msg "$ctrl: poller ${poll_ms} ms, drain budget $budget," \
		"$moderated vector(s) moderated"
}

all_active() {
	[ "$poll_ms" -gt 0 ] && [ "$budget" -gt 0 ] && [ "$moderated" -gt 0 ]
}

features_active() {
	once active activate
	ktap_test_result "poller, drain and moderation active on $ctrl" all_active
}

live() {
	wait_ctrl_live "$ctrl"
}

# Completions dropped by the block layer: three of them, 1 s io_timeout
dropped_run() {
	local recoveries left handled

	once active activate
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
	dropped_fio=$?
	echo 0 > "$disk/io-timeout-fail"
	echo 0 > "$DBG/fail_io_timeout/probability"
	echo "$old_timeout" > "$disk/queue/io_timeout"
	left=$(cat "$DBG/fail_io_timeout/times")
	dropped_n=$((3 - left))
	ktap_print_msg "fail_io_timeout: $dropped_n of 3 completions dropped"
	dmesg_since | grep "$ctrl" | grep -m 4 "timeout\|Abort" |
		while read -r l; do ktap_print_msg "$l"; done
	# nvme_timeout() handled them: abort, then reset
	dropped_timed_out=false
	handled="$ctrl: I/O tag [0-9]* .*QID [0-9]* timeout, \(aborting\|reset controller\)"
	dmesg_since | grep -q "$handled" && dropped_timed_out=true
	# the CQE was consumed: nothing for nvme_timeout() to poll
	dropped_polled=$(dmesg_since | grep -c "timeout, completion polled")
	dropped_warnings=$(dmesg_since | grep -c "no completion interrupt")
	dropped_recoveries=$(($(counter recoveries) - recoveries))
	live
	dropped_live=$?
}

dropped_completions_injected() {
	once dropped dropped_run
	ktap_test_result "the block layer dropped completions of $ctrl" \
		[ "$dropped_n" -eq 3 ]
}

dropped_writes_verify() {
	once dropped dropped_run
	ktap_test_result "the writes around them verify (no lost or doubled completion)" \
		[ "$dropped_fio" -eq 0 ]
}

dropped_end_in_timeout() {
	once dropped dropped_run
	ktap_test_result "they ended in nvme_timeout(): abort or reset" $dropped_timed_out
}

dropped_not_polled() {
	once dropped dropped_run
	ktap_test_result "none was found by polling the CQ" [ "$dropped_polled" = 0 ]
}

dropped_not_recovered() {
	once dropped dropped_run
	ktap_test_result "the poller recovered nothing (recoveries +$dropped_recoveries)" \
		[ "$dropped_recoveries" -eq 0 ]
}

dropped_no_warning() {
	once dropped dropped_run
	ktap_test_result "no lost-interrupt warning" [ "$dropped_warnings" = 0 ]
}

dropped_ctrl_live() {
	once dropped dropped_run
	ktap_test_result "$ctrl is live again" [ "$dropped_live" = 0 ]
}

# Bios failed before the driver: the reader gets EIO, nothing else happens
failed_run() {
	local recoveries n

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
	echo 0 > "$DBG/fail_make_request/probability"
	dd if="$ns" of=/dev/null bs=4k count=1 skip=3 iflag=direct 2> /dev/null
	failed_read_after=$?
	failed_timeouts=$(dmesg_since | grep -c "timeout")
	failed_recoveries=$(($(counter recoveries) - recoveries))
	live
	failed_live=$?
}

failed_bios_fail() {
	once failed failed_run
	ktap_test_result "fail_make_request failed both reads with an error" [ "$failed" -eq 2 ]
}

failed_bios_read_after() {
	once failed failed_run
	ktap_test_result "a read after the injection succeeds" [ "$failed_read_after" = 0 ]
}

failed_bios_no_timeout() {
	once failed failed_run
	ktap_test_result "no timeout from the failed bios" [ "$failed_timeouts" = 0 ]
}

failed_bios_not_recovered() {
	once failed failed_run
	ktap_test_result "no recovery from the failed bios" [ "$failed_recoveries" = 0 ]
}

failed_bios_ctrl_live() {
	once failed failed_run
	ktap_test_result "$ctrl stayed live" [ "$failed_live" = 0 ]
}

ktap_print_header
require_root
require_test_devs nojq
if [ ! -d "$DBG/fail_io_timeout" ] || [ ! -d "$DBG/fail_make_request" ]; then
	ktap_skip_all "needs CONFIG_FAIL_IO_TIMEOUT and CONFIG_FAIL_MAKE_REQUEST"
	exit "$KSFT_SKIP"
fi
mkdir -p "$WORK"

# the last named namespace, so that the others keep serving the system
ns=$(echo $NVME_IRQ_TEST_DEVS | awk '{ print $NF }')
ctrl=$(ns_ctrl "${ns#/dev/}")
disk=/sys/block/${ns#/dev/}
irqs=$(awk -v c="$ctrl" '$NF ~ "^" c "q[1-9][0-9]*$" { sub(":", "", $1); print $1 }' \
	/proc/interrupts)

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
# the poller from the start, so that it is active next to the timeouts
poll_always
at_exit restore
run_tests

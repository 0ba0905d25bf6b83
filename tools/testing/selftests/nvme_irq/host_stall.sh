#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host stalls are not lost interrupts: while fio verifies I/O on every
# drive, the host stops the whole QEMU process for 60 ms, twenty times
# ($NVME_IRQ_QMP stall), with the poller at its default period (5 ms: a
# stall spans twelve).  The guest's clock runs through each stall, so the
# poller's checks fire late and may find completions whose interrupts are
# merely late too.  No completion may be "recovered", no warning blame the
# interrupt chip and nothing time out; the checks that ran late must be
# seen (delayed_checks), or the stalls never reached the guest's clock and
# nothing was tested.  At a 1 ms period a completion is judged after 1 to
# 2.5 ms on time, about what TCG may take to deliver a message to the
# other vCPU after QEMU resumes: one run in three recovered one completion
# there, which says more of the emulator than of the stall handling.  A
# stall of the vector's CPU alone is cpu_stall.sh's.

DIR=$(dirname "$0")
. "$DIR/../kselftest/ktap_helpers.sh"
. "$DIR/lib.sh"

WORK=${TMPDIR:-/tmp}/nvme_irq_host_stall

ALL_TESTS="
	stalls_fio_clean
	stalls_delay_checks
	stalls_recover_nothing
	stalls_no_warning
	stalls_no_timeout
"
PARAM=/sys/module/nvme/parameters/lost_irq_poll_ms

key_sum() {	# key_sum KEY: summed over every controller's lost_irq file
	nvme_pci_sum lost_irq "$1"
}

# The fixture: fio verifying for 10 s while the host stalls the guest
# twenty times for 60 ms, the poller checking every ms (more checks fall
# right after a stall)
stall_run() {
	local recov0 late0 delayed0 pid i

	mark_dmesg
	echo 5 > "$PARAM"
	recov0=$(key_sum recoveries)
	late0=$(key_sum late_checks)
	delayed0=$(key_sum delayed_checks)
	fio_json stall --rw=randrw --bs=4k --ioengine=libaio --direct=1 \
		--iodepth=4 --size=16m --verify=crc32c --verify_fatal=1 \
		--time_based --runtime=10 $(fio_all_drives) > "$WORK/fio.out" &
	pid=$!
	sleep 1
	stalls=0
	for i in $(seq 20); do
		"$NVME_IRQ_QMP" stall 60 && stalls=$((stalls + 1))
		pause 0.3
	done
	wait $pid
	fio_rc=$?
	echo "$default_ms" > "$PARAM"
	cat "$WORK/fio.out"
	recov=$(($(key_sum recoveries) - recov0))
	late=$(($(key_sum late_checks) - late0))
	delayed=$(($(key_sum delayed_checks) - delayed0))
	ktap_print_msg "$stalls host stalls of 60 ms; recoveries $recov," \
		"delayed checks $delayed, late checks $late"
}

stalls_fio_clean() {
	once stall_run
	ktap_test_result "host stalls: all 20 happened, fio verify clean" \
		[ "$fio_rc:$stalls" = 0:20 ]
}

stalls_delay_checks() {
	once stall_run
	ktap_test_result "host stalls: the poller saw checks delayed by them" \
		[ "$delayed" -gt 0 ]
}

stalls_recover_nothing() {
	once stall_run
	ktap_test_result "host stalls: no completion recovered as lost" \
		[ "$recov" -eq 0 ]
}

# the warning (once per controller: an earlier test may have had it
# printed) and the rate-limited count of recoveries that follows it
no_warning() {
	! dmesg_since | grep -qE "no completion interrupt|lost completion interrupts:"
}

stalls_no_warning() {
	once stall_run
	ktap_test_result "host stalls: no lost-interrupt warning" no_warning
}

stalls_no_timeout() {
	once stall_run
	ktap_test_result "host stalls: nothing timed out" no_timeouts
}

ktap_print_header
require_root
require_test_devs
if [ -z "$(nvme_ctrls)" ] || [ -z "${NVME_IRQ_QMP:-}" ] ||
   ! "$NVME_IRQ_QMP" stall 1 2> /dev/null; then
	ktap_skip_all "needs NVMe controllers and a host that can stall the guest (NVME_IRQ_QMP)"
	exit "$KSFT_SKIP"
fi
mkdir -p "$WORK"
default_ms=$(cat "$PARAM")
# the poller from the start, on every controller: its late checks are what
# this tests
poll_always
run_tests

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The PCI function stops decoding memory under I/O (as blktests block/011
# does with setpci): the controller reads all ones, nvme_timeout() starts a
# freeze and the reset work ends it.  Then decoding is turned back on and the
# controller reset (or, if the driver gave it up, rebound): it must come back
# live and serve verified I/O.  scripts/vm fails the boot on any lockdep or
# workqueue report, which is what this used to produce.
#
# Then, as blktests nvme/032 does, the function is rescanned, reset and
# removed under fio, and the bus rescanned: on the lockdep kernel this gave
# "lock held when returning to user space" (q_usage_counter(io) taken in
# nvme_start_freeze()) before the same backport.  The controller must come
# back live and serve verified I/O, with no report in the log.

DIR=$(dirname "$0")
. "$DIR/../kselftest/ktap_helpers.sh"
. "$DIR/lib.sh"

WORK=${TMPDIR:-/tmp}/nvme_irq_pci_disable

ALL_TESTS="
	decode_ctrl_back
	decode_ns_back
	decode_verified_io
	decode_others_live
	decode_no_report
	remove_sequence
	remove_ctrl_back
	remove_verified_io
	remove_no_report
"

# memory_decode on|off: bit 1 of the PCI Command register
memory_decode() {
	python3 - "$cfg" "$1" <<'PY'
import sys
with open(sys.argv[1], 'r+b') as f:
    f.seek(4)
    cmd = int.from_bytes(f.read(2), 'little')
    cmd = cmd | 2 if sys.argv[2] == 'on' else cmd & ~2
    f.seek(4)
    f.write(cmd.to_bytes(2, 'little'))
PY
}

# wait_live: the controller of $pcidev is bound and live; prints its name
wait_live() {
	local t c

	for t in $(seq 100); do
		for c in /sys/bus/pci/devices/$pcidev/nvme/nvme*; do
			[ -e "$c/state" ] && [ "$(cat "$c/state")" = live ] &&
				{ basename "$c"; return 0; }
		done
		sleep 0.2
	done
	return 1
}

# wait_ns NS: wait up to 10 s for the block device node NS
wait_ns() {
	local t

	for t in $(seq 50); do
		[ -b "$1" ] && return 0
		sleep 0.2
	done
	return 1
}

# verify_io NAME NS: crc32c-verified writes on NS; a missing device node
# fails at once (fio would write a regular file in /dev)
verify_io() {
	[ -b "$2" ] && fio --name="$1" --filename="$2" --rw=randwrite --bs=4k \
		--size=8m --ioengine=libaio --direct=1 --iodepth=16 \
		--verify=crc32c --verify_fatal=1 > "$WORK/$1.txt" 2>&1
}

restore_timeout() {	# on whatever name the namespace has now
	local c

	for c in /sys/bus/pci/devices/$pcidev/nvme/nvme*; do
		[ -e "/sys/block/$(basename "$c")n$nsid" ] &&
			echo "$old_timeout" > "/sys/block/$(basename "$c")n$nsid/queue/io_timeout"
	done
}

report_since_mark() {	# lockdep, workqueue and WARN reports since the mark
	dmesg_since | grep -cE 'WARNING:|BUG:|INFO:|lock held|blocked for more than'
}

others_live() {
	local c

	for c in $ctrls; do
		[ "$c" = "$ctrl" ] && continue
		[ "$(cat "/sys/class/nvme/$c/state")" = live ] || return 1
	done
}

# Memory decode off under fio, then back on; the controller reset (or
# bound again if the driver gave it up)
decode_run() {
	local fio_pid

	echo 2000 > "/sys/block/${ns#/dev/}/queue/io_timeout"
	mark_dmesg
	fio --name=decode --filename="$ns" --rw=randread --bs=4k --ioengine=libaio \
		--direct=1 --iodepth=32 --runtime=8 --time_based > /dev/null 2>&1 &
	fio_pid=$!
	sleep 2
	memory_decode off
	ktap_print_msg "memory decode of $pcidev ($ctrl) off under fio"
	sleep 4
	memory_decode on
	wait $fio_pid
	ktap_print_msg "fio ended with status $? (errors expected)"
	if [ -e "/sys/class/nvme/$ctrl/reset_controller" ]; then
		echo 1 > "/sys/class/nvme/$ctrl/reset_controller" 2> /dev/null
		ktap_print_msg "$ctrl reset"
	else
		# the driver removed the dead controller: bind the function again
		echo "$pcidev" > /sys/bus/pci/drivers/nvme/bind 2> /dev/null
		ktap_print_msg "$ctrl was given up; $pcidev bound again"
	fi
	decode_now=$(wait_live)
	decode_ns=/dev/${decode_now:-$ctrl}n$nsid
	wait_ns "$decode_ns"
	decode_ns_ok=$?
	verify_io verify "$decode_ns"
	decode_io=$?
	others_live
	decode_others=$?
	decode_reports=$(report_since_mark)
	[ -n "$decode_now" ] && ctrl=$decode_now
}

# for ktap_test_result, which runs its command unquoted: an empty
# variable would vanish from [ -n ... ]
decode_back() {
	[ -n "$decode_now" ]
}

decode_ctrl_back() {
	once decode decode_run
	ktap_test_result "the controller of $pcidev is back and live" decode_back
}

decode_ns_back() {
	once decode decode_run
	ktap_test_result "its namespace $decode_ns is back" [ "$decode_ns_ok" = 0 ]
}

decode_verified_io() {
	once decode decode_run
	ktap_test_result "verified I/O on $decode_ns after the recovery" [ "$decode_io" = 0 ]
}

decode_others_live() {
	once decode decode_run
	ktap_test_result "the other controllers stayed live" [ "$decode_others" = 0 ]
}

decode_no_report() {
	once decode decode_run
	ktap_test_result "no lockdep, workqueue or WARN report since decode went off" \
		[ "$decode_reports" = 0 ]
}

# blktests nvme/032's sequence, on the controller bound now: rescan, reset
# and remove the function under fio, then rescan the bus
remove_run() {
	local fio_pid op seq_ok=1 c subsys=

	for c in /sys/bus/pci/devices/$pcidev/nvme/nvme*; do
		[ -e "$c" ] && subsys=$(ctrl_subsys "${c##*/}")
	done
	mark_dmesg
	# fio itself in the background (not a list of commands: killing its
	# subshell would leave fio holding the namespace, and with it the
	# subsystem, whose instance the rescanned controller then cannot take)
	fio_pid=
	if [ -b "/dev/${ctrl}n$nsid" ]; then
		fio --name=remove --filename="/dev/${ctrl}n$nsid" \
			--rw=randread --bs=4k --ioengine=libaio --direct=1 --iodepth=32 \
			--runtime=30 --time_based > /dev/null 2>&1 &
		fio_pid=$!
	fi
	sleep 2
	for op in rescan reset remove; do
		echo 1 > "/sys/bus/pci/devices/$pcidev/$op" ||
			{ ktap_print_msg "writing $op failed"; seq_ok=0; }
	done
	if [ -n "$fio_pid" ]; then
		kill "$fio_pid" 2> /dev/null
		wait "$fio_pid"
	fi
	ktap_print_msg "$pcidev ($ctrl) rescanned, reset and removed under fio"
	remove_gone=$seq_ok
	[ -e "/sys/bus/pci/devices/$pcidev" ] && remove_gone=0
	wait_subsys_gone "$subsys"
	echo 1 > /sys/bus/pci/rescan
	remove_now=$(wait_live)
	remove_ns=/dev/${remove_now:-$ctrl}n$nsid
	wait_ns "$remove_ns"
	verify_io verify2 "$remove_ns"
	remove_io=$?
	remove_reports=$(report_since_mark)
}

remove_sequence() {
	once remove remove_run
	ktap_test_result "$pcidev was rescanned, reset and removed" [ "$remove_gone" = 1 ]
}

remove_back() {
	[ -n "$remove_now" ]
}

remove_ctrl_back() {
	once remove remove_run
	ktap_test_result "after a bus rescan the controller of $pcidev is back and live" \
		remove_back
}

remove_verified_io() {
	once remove remove_run
	ktap_test_result "verified I/O on $remove_ns after the removal" [ "$remove_io" = 0 ]
}

remove_no_report() {
	once remove remove_run
	ktap_test_result "no lockdep, workqueue or WARN report since the removal" \
		[ "$remove_reports" = 0 ]
}

ktap_print_header
require_root
require_test_devs nojq
ctrls=$(nvme_ctrls)
mkdir -p "$WORK"

# the last named namespace's controller, so that the others keep serving
# the system
ns=$(echo $NVME_IRQ_TEST_DEVS | awk '{ print $NF }')
ctrl=$(ns_ctrl "${ns#/dev/}")
pcidev=$(basename "$(readlink -f "/sys/class/nvme/$ctrl/device")")
cfg=/sys/bus/pci/devices/$pcidev/config
# the named namespace is nsid $nsid of the function's controller, whatever
# name the controller has after a recovery
nsid=${ns#/dev/nvme*n}
old_timeout=$(cat "/sys/block/${ns#/dev/}/queue/io_timeout")
at_exit restore_timeout
run_tests

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

ktap_print_header
require_root
require_test_devs
require_ctrls_and_fio
ctrls=$(nvme_ctrls)
mkdir -p "$WORK"
ktap_set_plan 9

# the last named namespace's controller, so that the others keep serving
# the system
ns=$(echo $NVME_IRQ_TEST_DEVS | awk '{ print $NF }')
ctrl=$(ns_ctrl "${ns#/dev/}")
pcidev=$(basename "$(readlink -f "/sys/class/nvme/$ctrl/device")")
cfg=/sys/bus/pci/devices/$pcidev/config

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

# the named namespace is nsid $nsid of the function's controller, whatever
# name the controller has after a recovery
nsid=${ns#/dev/nvme*n}
old_timeout=$(cat "/sys/block/${ns#/dev/}/queue/io_timeout")
restore_timeout() {	# on whatever name the namespace has now
	local c

	for c in /sys/bus/pci/devices/$pcidev/nvme/nvme*; do
		[ -e "/sys/block/$(basename "$c")n$nsid" ] &&
			echo "$old_timeout" > "/sys/block/$(basename "$c")n$nsid/queue/io_timeout"
	done
}
at_exit restore_timeout
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
now=$(wait_live)
is_back() {	# for ktap_test_result, which runs its command unquoted
	[ -n "$now" ]
}
ktap_test_result "the controller of $pcidev is back and live" is_back
ns=/dev/${now:-$ctrl}n$nsid
ktap_test_result "its namespace $ns is back" wait_ns "$ns"
ktap_test_result "verified I/O on $ns after the recovery" verify_io verify "$ns"
others_live() {
	local c

	for c in $ctrls; do
		[ "$c" = "$ctrl" ] && continue
		[ "$(cat "/sys/class/nvme/$c/state")" = live ] || return 1
	done
}
ktap_test_result "the other controllers stayed live" others_live
no_report() {	# lockdep, workqueue and WARN reports since the mark
	! dmesg_since | grep -qE 'WARNING:|BUG:|INFO:|lock held|blocked for more than'
}
ktap_test_result "no lockdep, workqueue or WARN report since decode went off" no_report

# 6-9: blktests nvme/032's sequence, on the controller now bound
ctrl=${now:-$ctrl}
mark_dmesg
[ -b "/dev/${ctrl}n$nsid" ] && fio --name=remove --filename="/dev/${ctrl}n$nsid" \
	--rw=randread --bs=4k --ioengine=libaio --direct=1 --iodepth=32 \
	--runtime=30 --time_based > /dev/null 2>&1 &
fio_pid=$!
sleep 2
seq_ok=1
for op in rescan reset remove; do
	echo 1 > "/sys/bus/pci/devices/$pcidev/$op" ||
		{ ktap_print_msg "writing $op failed"; seq_ok=0; }
done
kill "$fio_pid" 2> /dev/null
wait "$fio_pid"
ktap_print_msg "$pcidev ($ctrl) rescanned, reset and removed under fio"
gone() {
	[ "$seq_ok" -eq 1 ] && [ ! -e "/sys/bus/pci/devices/$pcidev" ]
}
ktap_test_result "$pcidev was rescanned, reset and removed" gone
echo 1 > /sys/bus/pci/rescan
now=$(wait_live)
ktap_test_result "after a bus rescan the controller of $pcidev is back and live" is_back
ns=/dev/${now:-$ctrl}n$nsid
wait_ns "$ns"
ktap_test_result "verified I/O on $ns after the removal" verify_io verify2 "$ns"
ktap_test_result "no lockdep, workqueue or WARN report since the removal" no_report

ktap_finished

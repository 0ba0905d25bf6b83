#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Lost and early completion interrupts on the INTx pin: the guest booted
# with pci=nomsi, so that every queue of a controller signals its one
# level-triggered line (vector 0 of the project's QEMU).  A quarter of
# the I/O queue's assertions that would raise the line are lost, as when a
# bridge loses an Assert_INTx message: QD1 fio verify is clean, nothing
# times out, the early deadline and the poller recovered the stalls, and
# the warning names the line.  Every second assertion comes before its
# entry is written: verify is clean, nothing times out and the line is
# never disabled as unhandled.  A level-triggered line stays up until the
# host has reaped the entry, so it is serviced again until the entry is
# found: these cases pass with nvme.early_irq_recheck_us=0 too.  They test
# that the empty runs of an early assertion are harmless on INTx, not the
# re-check (early_msix.sh tests that).

DIR=$(dirname "$0")
. "$DIR/../kselftest/ktap_helpers.sh"
. "$DIR/lib.sh"

DBG=/sys/kernel/debug/nvme_pci
WORK=${TMPDIR:-/tmp}/nvme_irq_intx

ALL_TESTS="
	lost_fio_clean lost_dropped lost_recovered lost_no_timeout lost_warned
	early_fio_clean early_sent early_no_timeout early_line_kept
"

inject() {	# inject KIND EVERY: every Nth assertion of the line, 0: none
	local mask=1

	[ "$2" = 0 ] && mask=0
	"$NVME_IRQ_QMP" set "$dev" "x-$1-msix-every" "$2" &&
	"$NVME_IRQ_QMP" set "$dev" "x-$1-msix-vectors" "$mask"
}
cleanup() {
	inject lost 0 > /dev/null 2>&1
	inject early 0 > /dev/null 2>&1
}

vector0() {	# vector0 PROPERTY: its count for vector 0, the line
	local d

	read -ra d <<< "$("$NVME_IRQ_QMP" get "$dev" "$1")"
	echo "${d[0]}"
}
key() {		# key KEY: the controller's KEY in its lost_irq file
	awk -F': ' -v k="$1" '$1 == k { print $2 }' "$DBG/$CTRL/lost_irq"
}
timeouts() {
	dmesg_since | grep -c "$CTRL: I/O tag .* timeout"
}

# QD1 writes then reads back with crc32c
fio_qd1() {
	fio --output-format=json --output="$WORK/$1.json" --name="$1" \
		--filename="$NS" --rw=randwrite --bs=4k --size=1m \
		--ioengine=libaio --direct=1 --iodepth=1 --verify=crc32c \
		--verify_fatal=1 > /dev/null 2> "$WORK/$1.err"
}

declare -A OK COUNT RECOVERED DEADLINE TIMEOUTS

# run KIND EVERY PROPERTY: fio with that injection, and what it did
run() {
	local c0 r0 d0 t0

	c0=$(vector0 "$3") r0=$(key recoveries) d0=$(key deadline_recoveries)
	t0=$(timeouts)
	inject "$1" "$2"
	fio_qd1 "$1"
	OK[$1]=$?
	inject "$1" 0
	COUNT[$1]=$(($(vector0 "$3") - c0))
	DEADLINE[$1]=$(($(key deadline_recoveries) - d0))
	RECOVERED[$1]=$(($(key recoveries) - r0 + DEADLINE[$1]))
	TIMEOUTS[$1]=$(($(timeouts) - t0))
	ktap_print_msg "$1, every $2: fio exit ${OK[$1]}, ${COUNT[$1]} counted by" \
		"the device, ${RECOVERED[$1]} recovered by the deadline or" \
		"the poller, ${TIMEOUTS[$1]} timeouts"
}

lost_fio_clean() {
	once lost run lost 4 x-msix-dropped
	ktap_test_result "INTx, a quarter of the assertions lost: fio verify clean" \
		[ "${OK[lost]}" -eq 0 ]
}
lost_dropped() {
	once lost run lost 4 x-msix-dropped
	ktap_test_result "INTx lost: the device dropped assertions" [ "${COUNT[lost]}" -gt 0 ]
}
lost_recovered() {
	once lost run lost 4 x-msix-dropped
	ktap_test_result "INTx lost: the deadline and the poller recovered the stalls" \
		[ "${RECOVERED[lost]}" -gt 0 ]
}
lost_no_timeout() {
	once lost run lost 4 x-msix-dropped
	ktap_test_result "INTx lost: nothing timed out" [ "${TIMEOUTS[lost]}" -eq 0 ]
}
names_ioapic() {	# the first warning names the INTx chip
	[[ "$WARNING" == *"(chip IO-APIC"* ]]
}
lost_warned() {
	once lost run lost 4 x-msix-dropped
	WARNING=$(dmesg_since | grep -m1 "$CTRL: no completion interrupt")
	ktap_print_msg "${WARNING:-no warning}"
	ktap_test_result "INTx lost: the warning names the line's chip" names_ioapic
}
early_fio_clean() {
	once early run early 2 x-msix-early
	ktap_test_result "INTx, every second assertion early: fio verify clean" \
		[ "${OK[early]}" -eq 0 ]
}
early_sent() {
	once early run early 2 x-msix-early
	ktap_test_result "INTx early: the device raised the line before entries" \
		[ "${COUNT[early]}" -gt 0 ]
}
early_no_timeout() {
	once early run early 2 x-msix-early
	ktap_test_result "INTx early: nothing timed out, nothing waited for its deadline" \
		[ "${TIMEOUTS[early]}:${DEADLINE[early]}" = 0:0 ]
}

early_line_kept() {
	local n

	once early run early 2 x-msix-early
	n=$(dmesg_since | grep -c "nobody cared")
	ktap_test_result "INTx early: the line was not disabled as unhandled" [ "$n" -eq 0 ]
}

ktap_print_header
require_root
require_test_devs nojq
NS=$(first_ns)
CTRL=$(ns_ctrl "${NS#/dev/}")
if [ ! -r "$DBG/$CTRL/lost_irq" ]; then
	ktap_skip_all "needs debugfs and $CTRL's lost_irq file"
	exit "$KSFT_SKIP"
fi
if ! grep -q "IO-APIC.* ${CTRL}q1\b" /proc/interrupts; then
	ktap_skip_all "$CTRL does not use INTx: boot with pci=nomsi"
	exit "$KSFT_SKIP"
fi
if [ -z "${NVME_IRQ_QMP:-}" ] ||
   ! dev=$("$NVME_IRQ_QMP" dev "$CTRL" 2> /dev/null) ||
   ! "$NVME_IRQ_QMP" get "$dev" x-msix-early > /dev/null 2>&1; then
	ktap_skip_all "no emulated controller that can lose or advance interrupts (NVME_IRQ_QMP)"
	exit "$KSFT_SKIP"
fi
mkdir -p "$WORK"
ktap_print_msg "$CTRL on INTx: $(grep "${CTRL}q1" /proc/interrupts | tr -s ' ')"
mark_dmesg
at_exit cleanup
run_tests

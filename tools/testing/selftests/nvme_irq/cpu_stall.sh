#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A CPU that takes no interrupts is not a lost interrupt.  The host stops
# only the vCPU that queue 1's vector targets ($NVME_IRQ_QMP stall-vcpu),
# 40 ms at a time, while fio submits to that queue from another CPU, whose
# poller checks on time: completions wait, the recovery asks the stopped
# CPU, gets no answer in time, reaps them, counts every such recovery in
# cpu_blocked and logs no lost-interrupt warning; a stall that ends while
# the CPU is asked lets its held-back interrupt reap the queue first.  Then the device drops
# every message of the queue, a real loss: its recoveries are not blamed
# on the CPU (at most one in ten, a vCPU the host was slow to run), and the
# warning names the queue.  Needs a queue that serves a CPU other than its
# vector's (scripts/vm --queues 1 on two vCPUs).

DIR=$(dirname "$0")
. "$DIR/../kselftest/ktap_helpers.sh"
. "$DIR/lib.sh"

DBG=/sys/kernel/debug/nvme_pci
WORK=${TMPDIR:-/tmp}/nvme_irq_cpu_stall
STALL_MS=40
# stalls until this many recoveries were seen (each stall's end is a
# chance to blame the interrupt wrongly), at most MAX_STALLS
RECOVERIES=6
MAX_STALLS=24

ALL_TESTS="
	stall_fio_clean
	stall_recovered
	stall_all_cpu_blocked
	stall_no_warning
	dropped_fio_clean
	dropped_recovered
	dropped_not_blamed_on_cpu
	dropped_warned
"

key() {		# key KEY: queue 1's KEY in the controller's lost_irq file
	awk -F': ' -v k="q1.$1" '$1 == k { print $2 }' "$DBG/$CTRL/lost_irq"
}

lose() {	# lose PPM: that fraction of queue 1's messages, 0 for none
	qmp_lose_msix "$dev" "$vec" "$1"
}

fio_sub() {	# fio_sub NAME SECONDS: QD4 verified I/O on queue 1 from $sub
	fio_json "$1" --name=q1 --filename="$NS" --rw=randrw --bs=4k \
		--size=4m --ioengine=libaio --direct=1 --iodepth=4 \
		--verify=crc32c --verify_fatal=1 --time_based --runtime="$2" \
		--cpus_allowed="$sub" > "$WORK/$1.out"
}

# Stop the vector's CPU until $RECOVERIES recoveries were seen
stall_run() {
	local r0 b0 pid

	mark_dmesg
	r0=$(key recoveries) b0=$(key cpu_blocked)
	fio_sub stall 12 &
	pid=$!
	pause 1
	stalls=0
	while [ "$stalls" -lt "$MAX_STALLS" ] &&
	      [ $(($(key recoveries) - r0)) -lt "$RECOVERIES" ]; do
		"$NVME_IRQ_QMP" stall-vcpu "$vcpu" "$STALL_MS" && stalls=$((stalls + 1))
		pause 0.3
	done
	wait $pid
	stall_fio=$?
	stall_recov=$(($(key recoveries) - r0))
	stall_blocked=$(($(key cpu_blocked) - b0))
	ktap_print_msg "$stalls stalls of CPU $vcpu ($STALL_MS ms): $stall_recov recoveries," \
		"$stall_blocked blamed on the CPU"
	dmesg_since | grep -E "took no interrupt|interrupt lost" | head -n 3 |
		sed 's/^/# /'
}

stall_fio_clean() {
	once stall_run
	ktap_test_result "CPU $vcpu stopped: fio verify clean" [ "$stall_fio" = 0 ]
}

stall_recovered() {
	once stall_run
	ktap_test_result "CPU $vcpu stopped: completions waiting for it recovered" \
		[ "$stall_recov" -gt 0 ]
}

all_blamed() {
	[ "$stall_recov" -gt 0 ] && [ "$stall_blocked" -eq "$stall_recov" ]
}

stall_all_cpu_blocked() {
	once stall_run
	ktap_test_result "CPU $vcpu stopped: every recovery counted as cpu_blocked" \
		all_blamed
}

no_lost_warning() {
	! dmesg_since | grep -qE "no completion interrupt|lost completion interrupts:"
}

stall_no_warning() {
	once stall_run
	ktap_test_result "CPU $vcpu stopped: no lost-interrupt warning" no_lost_warning
}

# Every message of queue 1 dropped at the device while fio runs from $sub
dropped_run() {
	local r0 b0

	mark_dmesg
	was_warned=$(awk -F': ' '$1 == "warned" { print $2 }' "$DBG/$CTRL/lost_irq")
	r0=$(key recoveries) b0=$(key cpu_blocked)
	lose 1000000
	fio_sub dropped 3
	dropped_fio=$?
	lose 0
	dropped_recov=$(($(key recoveries) - r0))
	dropped_blocked=$(($(key cpu_blocked) - b0))
	ktap_print_msg "every message dropped: $dropped_recov recoveries," \
		"$dropped_blocked blamed on the CPU"
}

dropped_fio_clean() {
	once dropped_run
	ktap_test_result "messages dropped: fio verify clean" [ "$dropped_fio" = 0 ]
}

dropped_recovered() {
	once dropped_run
	ktap_test_result "messages dropped: recovered by the poller" \
		[ "$dropped_recov" -gt 0 ]
}

few_blamed() {	# few_blamed BLAMED RECOVERED: some recovered, at most 1/10 blamed
	[ "$2" -gt 0 ] && [ $(($1 * 10)) -le "$2" ]
}

dropped_not_blamed_on_cpu() {
	once dropped_run
	ktap_test_result "messages dropped: at most one recovery in ten blamed on the CPU" \
		few_blamed "$dropped_blocked" "$dropped_recov"
}

warned_now() {
	dmesg_since | grep -q "$CTRL: no completion interrupt arrived on queue 1,"
}

dropped_warned() {
	once dropped_run
	if [ "$was_warned" = 1 ]; then
		ktap_test_skip "$CTRL warned of a lost interrupt before this test"
		return
	fi
	ktap_test_result "messages dropped: the lost-interrupt warning names queue 1" \
		warned_now
}

cleanup() {
	lose 0 > /dev/null 2>&1
}

ktap_print_header
require_root
require_test_devs
NS=$(first_ns)
CTRL=$(ns_ctrl "${NS#/dev/}")
if [ ! -r "$DBG/$CTRL/lost_irq" ] || ! grep -q '^cpu_blocked:' "$DBG/$CTRL/lost_irq"; then
	ktap_skip_all "needs debugfs and the poller's cpu_blocked counter"
	exit "$KSFT_SKIP"
fi
# queue 1's vector, the CPU it targets and a CPU it serves besides
irq=$(awk -v q="${CTRL}q1" '$NF == q { sub(":", "", $1); print $1 }' /proc/interrupts)
vec=$(awk -v q="${CTRL}q1" '$NF == q { for (i = 1; i <= NF; i++)
	if ($i ~ /^[0-9]+-edge$/) { sub("-edge", "", $i); print $i } }' /proc/interrupts)
vcpu=$(cut -d, -f1 "/proc/irq/$irq/effective_affinity_list" 2> /dev/null | cut -d- -f1)
sub=
for c in $(python3 -c 'import sys
for part in sys.argv[1].replace(" ", "").split(","):
    a, _, b = part.partition("-")
    print(*range(int(a), int(b or a) + 1))' "$(cat "/sys/block/${NS#/dev/}/mq/0/cpu_list")"); do
	[ "$c" != "$vcpu" ] && sub=$c && break
done
if [ -z "$irq" ] || [ -z "$vcpu" ] || [ -z "$sub" ]; then
	ktap_skip_all "queue 1 of $CTRL serves no CPU but its vector's (boot with one I/O queue)"
	exit "$KSFT_SKIP"
fi
if [ -z "${NVME_IRQ_QMP:-}" ] || ! "$NVME_IRQ_QMP" stall-vcpu "$vcpu" 1 2> /dev/null ||
   ! dev=$("$NVME_IRQ_QMP" dev "$CTRL" 2> /dev/null) ||
   ! "$NVME_IRQ_QMP" get "$dev" x-msix-dropped > /dev/null 2>&1; then
	ktap_skip_all "needs a host that can stop one vCPU and drop messages (NVME_IRQ_QMP)"
	exit "$KSFT_SKIP"
fi
mkdir -p "$WORK"
ktap_print_msg "queue 1 of $CTRL: irq $irq (MSI-X $vec) on CPU $vcpu, I/O from CPU $sub"
# the poller from the start: its checks and its question to the CPU are
# what this tests
poll_always
at_exit cleanup
run_tests

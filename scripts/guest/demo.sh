#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Guest side of 'make demo': what each feature of the series does here.
here=$(dirname "$0")
dev=/dev/nvme0n1
qmp=$here/qmp
# MSI-X messages nvme0's emulated controller sent on its I/O vectors
dev_msgs() {
	"$qmp" get nvme0 x-msix-messages 2> /dev/null |
		awk '{ for (i = 2; i <= NF; i++) s += $i } END { print s + 0 }'
}

echo "== APST exit-latency bound"
echo "nvme_core.default_ps_max_latency_us = $(cat /sys/module/nvme_core/parameters/default_ps_max_latency_us) (stock 6.12: 100000)"

echo "== NVMe completion interrupts per completed I/O (fio 4k randread, 5 s)"
for qd in 1 32; do
	m0=$(dev_msgs)
	r=$("$here/fio-irq" --name=demo --filename=$dev --rw=randread --bs=4k \
		--ioengine=libaio --direct=1 --iodepth=$qd --runtime=5 \
		--time_based)
	echo "QD$qd: $r"
	ios=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["ios"])' "$r")
	echo "  the controller sent $(($(dev_msgs) - m0)) MSI-X messages for $ios I/Os" \
		"(the guest's APIC merges those that arrive while one is pending)"
done

echo "== Lost MSI-X at the device, as behind VMD: every message of nvme0's queue 1 dropped, QD1 reads for 4 s"
vec=$(awk '$NF == "nvme0q1" { for (i = 1; i <= NF; i++)
	if ($i ~ /^[0-9]+-edge$/) { sub("-edge", "", $i); print $i } }' /proc/interrupts)
if "$qmp" set nvme0 x-lost-msix-every 1 2> /dev/null &&
   "$qmp" set nvme0 x-lost-msix-vectors $((1 << vec)); then
	r=$("$here/fio-irq" --name=lostdev --filename=$dev --rw=randread --bs=4k \
		--ioengine=libaio --direct=1 --iodepth=1 --runtime=4 --time_based \
		--cpus_allowed="$(cut -d, -f1 /sys/block/nvme0n1/mq/0/cpu_list)")
	"$qmp" set nvme0 x-lost-msix-vectors 0
	echo "LOST-DEVICE: $r"
	echo "  messages the device dropped per vector: $("$qmp" get nvme0 x-msix-dropped | cut -d' ' -f1-4)"
else
	echo "(Debian's QEMU: the device cannot lose messages)"
fi

echo "== The same with the driver's own fault injector: every interrupt of queue 1 dropped, QD1 reads for 4 s"
dbg=/sys/kernel/debug/nvme_pci
echo 1 > $dbg/fail_lost_irq_qid
echo 0 > $dbg/fail_lost_irq/verbose
echo -1 > $dbg/fail_lost_irq/times
echo 100 > $dbg/fail_lost_irq/probability
r=$("$here/fio-irq" --name=lost --filename=$dev --rw=randread --bs=4k \
	--ioengine=libaio --direct=1 --iodepth=1 --runtime=4 --time_based \
	--cpus_allowed="$(cut -d, -f1 /sys/block/nvme0n1/mq/0/cpu_list)")
echo 0 > $dbg/fail_lost_irq/probability
echo "LOST: $r"
echo "poller counters ($dbg/nvme0/lost_irq):"
grep -v '^q' $dbg/nvme0/lost_irq | sed 's/^/  /'
dmesg | grep 'no completion interrupt' | sed 's/^/  /'
echo "(stock 6.12: each such read waits for nvme_core.io_timeout, 30 s)"

echo "== genirq moderation of nvme0's I/O vectors: QD32 reads, 5 s, off then 1000 us"
irqs=$(awk '$NF ~ /^nvme0q[1-9][0-9]*$/ { sub(":", "", $1); print $1 }' /proc/interrupts)
for us in 0 1000; do
	for i in $irqs; do
		echo $us > /proc/irq/$i/moderation_us
	done
	r=$("$here/fio-irq" --name=mod --filename=$dev --rw=randread --bs=4k \
		--ioengine=libaio --direct=1 --iodepth=32 --runtime=5 --time_based)
	echo "MOD$us: $r"
done
for i in $irqs; do
	echo 0 > /proc/irq/$i/moderation_us
done
echo "(held interrupts are not counted in /proc/interrupts: irqs/IO is handler runs per I/O)"

echo "== Adaptive interrupt coalescing of nvme0: QD1 and QD32 reads, 5 s each, off then on"
echo "(every threshold at its default but high_io_delta, lowered to 100 per 50 ms:"
echo " this lockdep kernel under TCG is interrupt-bound at QD32 at a few thousand"
echo " IOPS, and no signal the policy reads shows what its interrupts cost, see"
echo " high_io_delta in Documentation/admin-guide/nvme/adaptive-coalescing.rst)"
saved=$(cat $dbg/high_io_delta)
echo 100 > $dbg/high_io_delta
ev=/sys/kernel/tracing/events/nvme_pci/nvme_coalesce_decision
for mode in off on; do
	[ $mode = off ] && echo 0 > /sys/module/nvme/parameters/adaptive_coalescing
	[ $mode = on ] && echo 1 > /sys/module/nvme/parameters/adaptive_coalescing
	for qd in 1 32; do
		[ -d $ev ] && echo > /sys/kernel/tracing/trace && echo 1 > $ev/enable
		r=$("$here/fio-irq" --name=adapt --filename=$dev --rw=randread --bs=4k \
			--ioengine=libaio --direct=1 --iodepth=$qd --runtime=5 --time_based)
		[ -d $ev ] && echo 0 > $ev/enable
		echo "ADAPT-$mode-QD$qd: $r"
		[ -d $ev ] || continue
		n=$(grep -c 'nvme_coalesce_decision: nvme0 ' /sys/kernel/tracing/trace)
		echo "  decisions traced on nvme0: $n"
		grep -o 'nvme_coalesce_decision: nvme0 .*' /sys/kernel/tracing/trace |
			head -3 | cut -c1-160 | sed 's/^/    /'
	done
done
echo "$saved" > $dbg/high_io_delta
echo "nvme0/coalescing after the runs:"
grep -E '^(actuator|feature_08h|feature_status|decisions):|moderated_ms' \
	$dbg/nvme0/coalescing | sed 's/^/  /'
dmesg | grep -E 'nvme nvme[0-9]+: (interrupt|adaptive) coalescing' | sed 's/^/  /'
echo "(irqs/IO counts /proc/interrupts, i.e. handler runs; held interrupts are replayed, not lost)"

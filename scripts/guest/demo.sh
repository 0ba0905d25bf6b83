#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Guest side of 'make demo': what each feature of the series does here.
here=$(dirname "$0")
dev=/dev/nvme0n1

echo "== APST exit-latency bound"
echo "nvme_core.default_ps_max_latency_us = $(cat /sys/module/nvme_core/parameters/default_ps_max_latency_us) (stock 6.12: 100000)"

echo "== NVMe completion interrupts per completed I/O (fio 4k randread, 5 s)"
for qd in 1 32; do
	r=$("$here/fio-irq" --name=demo --filename=$dev --rw=randread --bs=4k \
		--ioengine=libaio --direct=1 --iodepth=$qd --runtime=5 \
		--time_based)
	echo "QD$qd: $r"
done

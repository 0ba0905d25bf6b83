# guest: QD32 on both drives for 8 s, three times: coalescing samples and
# local timer interrupts a second
T=/sys/kernel/tracing; [ -d $T/events ] || T=/sys/kernel/debug/tracing
loc() { awk '/^ *LOC:/ { s = 0; for (i = 2; i <= NF; i++) if ($i ~ /^[0-9]+$/) s += $i; print s }' /proc/interrupts; }
echo 1 > $T/events/nvme_pci/nvme_coalesce_sample/enable
for r in 1 2 3; do
  echo > $T/trace
  l0=$(loc)
  fio --output-format=terse --name=a --filename=/dev/nvme0n1 --name=b --filename=/dev/nvme1n1 \
      --rw=randread --bs=4k --ioengine=libaio --direct=1 --iodepth=32 --runtime=8 --time_based \
      --size=64m > /dev/null 2>&1
  l1=$(loc)
  s=$(grep -c nvme_coalesce_sample $T/trace)
  echo "run $r: samples $s in 8 s ($(( s / 8 ))/s, all queues), LOC $(( (l1 - l0) / 8 ))/s"
done > $RESULTS/calm.txt

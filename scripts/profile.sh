#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Where the time goes: a sampled kernel function profile of the series
# against stock, in the guest, under the cost bench's load (2 drives, libaio
# 4k randread, one job per drive).
#
#   scripts/profile.sh [OUT]        (default out/profile)
#
# Environment: QD (default 1), RUNTIME seconds (8), REPS (3, modes
# interleaved), FREQ samples per second per CPU (1999).
#
# Each boot runs fio under 'perf record -a -e cpu-clock' (a software timer:
# TCG has no PMU) on the bench and stock kernels (make kernel-bench
# kernel-stock; x86 always has perf events).
# A timer sample lands where interrupts are enabled: time spent with them
# off (hardirq handlers) is charged to where they come back on, so this
# shows the process and softirq side; hardirq time per I/O is the bench's.
# Sampling at 2 kHz also halves IOPS under TCG: compare modes, not runs
# without it.
# Writes OUT/MODE-rREP/{fio.json,report.txt} and OUT/profile.md: per
# function, CPU time per completed I/O (samples / FREQ / I/Os), median over
# the repetitions, for the functions above 0.5 % in any mode, and the total
# busy time per I/O (every sample, kernel or user, outside the idle loop).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

out=${1:-$TOP/out/profile}
qd=${QD:-1} runtime=${RUNTIME:-8} reps=${REPS:-3} freq=${FREQ:-1999}
for n in "$qd" "$runtime" "$reps" "$freq"; do
	[[ $n =~ ^[1-9][0-9]*$ ]] || die "not a positive number: $n"
done
off="nvme_core.default_ps_max_latency_us=100000 nvme.lost_irq_poll_ms=0"
off+=" nvme.irq_budget=0 nvme.adaptive_coalescing=0"
# mode name, kernel flavour, extra command line
modes=("stock stock -" "series bench -" "series-off bench $off")
for m in "${modes[@]}"; do
	set -- $m
	[ -f "$(bzimage_of "$2")" ] || die "no $2 kernel: make kernel-$2"
done
command -v perf > /dev/null || die "perf is not installed (linux-perf)"

mkdir -p "$out"
guest="$out/guest.sh"
cat > "$guest" <<EOF
#!/bin/bash
set -e
args=(--rw=randread --bs=4k --ioengine=libaio --direct=1 --iodepth=$qd
      --runtime=$runtime --time_based=1 --group_reporting --output-format=json)
i=0
for d in /dev/nvme[0-9]*n1; do args+=(--name=d\$i --filename=\$d); i=\$((i + 1)); done
perf record -q -a -e cpu-clock -F $freq -o /tmp/perf.data -- \\
	fio "\${args[@]}" > "\$RESULTS/fio.json"
perf report -i /tmp/perf.data --stdio --no-children --sort sym -n \\
	--percent-limit 0 2> /dev/null > "\$RESULTS/report.txt"
EOF
chmod +x "$guest"

for rep in $(seq 1 "$reps"); do
	for m in "${modes[@]}"; do
		set -- $m
		name=$1 flavour=$2
		shift 2
		append="kunit.enable=0"
		[ "$*" = - ] || append+=" $*"
		res="$out/$name-r$rep"
		rm -rf "$res"
		note "profile: $name, repetition $rep"
		"$TOP/scripts/vm" --kernel "$(bzimage_of "$flavour")" --drives 2 \
			--cpus 2 --queues 2 --mem 1G --results "$res" \
			--append "$append" -- "$guest" > "$res.log" 2>&1 ||
			die "the $name guest failed: see $res.log"
	done
done

python3 - "$out" "$freq" "$reps" > "$out/profile.md" <<'EOF'
import json, re, statistics, sys
out, freq, reps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
modes = ['stock', 'series', 'series-off']
# the idle loop as sampled under TCG: the halt and what surrounds it
# (the halt's own symbol is the start of .cpuidle.text)
IDLE = re.compile(r'(safe_halt|default_idle|cpu_idle|do_idle|acpi_idle|'
                  r'poll_idle|mwait_idle|intel_idle|__cpuidle_text_start)')
# kernel ([k]) and user ([.]) symbols
LINE = re.compile(r'^\s*([\d.]+)%\s+(\d+)\s+\[[k.]\]\s+(\S+)')
per, busy, iops, pct = {}, {}, {}, {}
for m in modes:
    for r in range(1, reps + 1):
        d = f'{out}/{m}-r{r}'
        job = json.load(open(f'{d}/fio.json'))['jobs'][0]['read']
        ios = job['total_ios']
        iops.setdefault(m, []).append(job['iops'])
        b = 0
        for line in open(f'{d}/report.txt'):
            g = LINE.match(line)
            if not g:
                continue
            p, n, sym = float(g[1]), int(g[2]), g[3]
            us = n / freq * 1e6 / ios
            per.setdefault(sym, {}).setdefault(m, []).append(us)
            pct.setdefault(sym, {}).setdefault(m, []).append(p)
            if not IDLE.search(sym):
                b += us
        busy.setdefault(m, []).append(b)
med = lambda v: statistics.median(v) if v else 0.0
def rng(v):
    return f'{med(v):.2f} [{min(v):.2f}-{max(v):.2f}]'
print(f'# Kernel function profile: {reps} repetition(s), medians [min-max]\n')
print('CPU time per completed I/O, us, from cpu-clock samples '
      f'({freq} per second per CPU), for the functions with 0.5 % of the '
      'samples in any mode; idle excluded.\n')
print('| | ' + ' | '.join(modes) + ' |')
print('|---|' + '---|' * len(modes))
print('| IOPS | ' + ' | '.join(f'{med(iops[m]):.0f} [{min(iops[m]):.0f}-'
                                 f'{max(iops[m]):.0f}]' for m in modes) + ' |')
print('| busy us/IO (kernel and user, all but idle) | ' + ' | '.join(rng(busy[m]) for m in modes) + ' |')
print('\n| function | ' + ' | '.join(f'{m} us/IO' for m in modes) + ' |')
print('|---|' + '---|' * len(modes))
def filled(d, s, m):
    # a function absent from a run's report had no sample in it
    v = d[s].get(m, [])
    return v + [0.0] * (reps - len(v))
rows = [s for s in per if not IDLE.search(s) and
        any(med(filled(pct, s, m)) >= 0.5 for m in modes)]
rows.sort(key=lambda s: -max(med(filled(per, s, m)) for m in modes))
for s in rows:
    cells = [f'{med(filled(per, s, m)):.3f}' for m in modes]
    print(f'| `{s}` | ' + ' | '.join(cells) + ' |')
EOF
note "profile: $out/profile.md"

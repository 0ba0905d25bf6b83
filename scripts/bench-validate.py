#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""make bench QUICK=1: is out/bench-quick well formed?
Asserts structure, never timing.

Prints "pass|fail bench: ..." lines: results.json parses and holds a run
for every case of every mode with I/Os completed and no fio error (and,
on the project's QEMU, the device's message count), every cold read of
the APST scenario timed with the device's power state known, results.md
has a table per scenario, and every plot it names is a PNG.
"""
import json
import os
import re

# the smoke run's folder: bench.py names it (BASE=6.12: bench-quick-6.12)
OUT = os.environ.get('BENCH_QUICK_DIR') or os.path.join(os.environ.get('OUT', os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'out')), 'bench-quick')


def result(ok, what):
    print(f"{'pass' if ok else 'fail'} bench: {what}")


def main():
    try:
        data = json.load(open(os.path.join(OUT, 'results.json')))
    except (OSError, ValueError) as e:
        result(False, f'results.json unreadable: {e}')
        return
    runs, summary = data.get('runs', []), data.get('summary', [])
    result(bool(summary), f'results.json summarises {len(summary)} cases')
    for row in summary:
        name = f"{row['scenario']}/{row['mode']} {row['case']}"
        mine = [r for r in runs if r['scenario'] == row['scenario'] and
                r['mode'] == row['mode'] and r['case'] == row['case']]
        if any(r.get('apst_trials') for r in mine):
            # cold reads after idle: every trial timed, the device's state known
            good = [r for r in mine if 'failed' not in r and r.get('ios', 0) > 0 and
                    len(r['apst_trials']) == r['ios'] and
                    all(t['clat_us'] > 0 and t['ps'] is not None
                        for t in r['apst_trials'])]
            result(mine and len(good) == len(mine) == row['runs'] == 1,
                   f'{name}: {len(good)}/{len(mine)} runs timed every cold read')
            continue
        good = [r for r in mine if 'failed' not in r and r.get('ios', 0) > 0 and
                r.get('errors') == 0 and r.get('irqs_per_io') is not None and
                r.get('handler_runs_per_io') is not None and
                (r.get('qemu') == 'system' or r.get('dev_msgs_per_io') is not None)]
        result(mine and len(good) == len(mine) == row['runs'] == data['meta']['reps'],
               f'{name}: {len(good)}/{len(mine)} runs completed I/O without error'
               ' (and the device counted its messages)')
    failed = [r for r in runs if 'failed' in r]
    result(not failed, f'{len(failed)} guest boots failed')
    try:
        md = open(os.path.join(OUT, 'results.md')).read()
    except OSError:
        result(False, 'results.md missing')
        return
    for scen in dict.fromkeys(r['scenario'] for r in summary):
        result(f'## {scen}' in md and '| mode | case |' in md,
               f'results.md has the {scen} table')
    for png in re.findall(r'\]\(([^)]+\.png)\)', md):
        path = os.path.join(OUT, png)
        try:
            head = open(path, 'rb').read(8)
            size = os.path.getsize(path)
        except OSError:
            head, size = b'', 0
        result(head == b'\x89PNG\r\n\x1a\n' and size > 1024, f'plot {png} is a PNG')


if __name__ == '__main__':
    main()

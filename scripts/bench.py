#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""make bench: side-by-side benchmark of the series against its stock base (mainline 7.3; BASE=6.12: the backport against stock 6.12).

Reads bench/matrix, boots one guest per mode and repetition (modes
interleaved), runs the mode's cases with fio in it and writes out/bench/:
results.json (every run and the summary), results.md (a table per
scenario, with ratios to the scenario's first mode) and PNG plots.

Environment: QUICK=1 (the modes marked quick, one repetition, 2 s runs,
in out/bench-quick/; with BENCH_KERNEL=test, as make check runs it, on
the test kernel and stock in its configuration, scripts/kernel.sh
stock-test), REPS=N, BENCH_MATRIX=file (published in bench/results/NAME/ for
bench/NAME.matrix), SCENARIOS=a,b (only those), REPLOT=1 (redo results.md
and the plots from out/bench/results.json without running), BASE=6.12
(the backport's kernels; out/bench-6.12/, published in bench/results/6.12/).
"""
import itertools
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TOP, 'scripts', 'guest'))
import react  # noqa: E402  (scripts/guest/react.py, bench-run's too)
QUICK = os.environ.get('QUICK', '') not in ('', '0')
# make check's smoke run boots the test kernel where a mode names the
# benchmark kernel, and stock in the test kernel's configuration (no
# figure of it is kept): the bench kernel is not built
SMOKE_ON_TEST = QUICK and os.environ.get('BENCH_KERNEL', 'bench') == 'test'
# the kernels' base (scripts/lib.sh): mainline unless BASE=6.12
BASE = os.environ.get('BASE') or '7.3'
BASE_TAG = '' if BASE == '7.3' else '-' + BASE
# a smoke run (make check's) never overwrites a full run's results
OUT = os.path.join(os.environ.get('OUT', os.path.join(TOP, 'out')),
                   ('bench-quick' if QUICK else 'bench') + BASE_TAG)

# tools/nvme's policy daemon, built on the host (scripts/lib.sh,
# build_nvme_coal) and run in the guest, whose root is the host's
COAL_BIN = os.path.join(os.environ.get('BUILD') or os.path.join(TOP, 'build'),
                        *([BASE] if BASE_TAG else []), 'tools', 'nvme', 'nvme-coal')

# metric key, column title, format, higher is better
METRICS = [
    ('iops', 'IOPS', '{:.0f}', True),
    ('clat_p50_us', 'p50 us', '{:.0f}', False),
    ('clat_p90_us', 'p90 us', '{:.0f}', False),
    ('clat_p99_us', 'p99 us', '{:.0f}', False),
    ('clat_p999_us', 'p99.9 us', '{:.0f}', False),
    ('clat_max_us', 'max us', '{:.0f}', False),
    ('irqs_per_io', 'irqs/IO', '{:.3f}', False),
    ('handler_runs_per_io', 'handler runs/IO', '{:.3f}', False),
    ('dev_msgs_per_io', 'device msgs/IO', '{:.3f}', False),
    ('hardirq_us_per_io', 'hardirq us/IO', '{:.2f}', False),
    ('softirq_us_per_io', 'softirq us/IO', '{:.2f}', False),
    ('loc_per_s', 'timer irqs/s', '{:.0f}', False),
    ('timer_softirqs_per_s', 'timer softirqs/s', '{:.0f}', False),
    ('lost_irq_recoveries', 'lost-irq recoveries', '{:.0f}', False),
    ('lost_irq_deadline_recoveries', 'deadline recoveries', '{:.0f}', False),
    ('lost_irq_early_recoveries', 'early re-check recoveries', '{:.0f}', False),
    ('early_empty_runs_per_io', 'empty runs/IO', '{:.3f}', False),
    ('early_rechecks_per_io', 're-checks/IO', '{:.3f}', False),
    ('drain_fallbacks', 'irq_poll fallbacks', '{:.0f}', False),
    ('softlockups', 'soft lockups', '{:.0f}', False),
    ('io_timeouts', 'I/O timeouts', '{:.0f}', False),
    ('coal_delay_us', 'adaptive delay us', '{:.0f}', False),
    ('admin_cmds_per_s', 'admin cmds/s', '{:.1f}', False),
    ('react_moderated_frac', 'moderated share', '{:.2f}', False),
    ('engage_ms', 'engage ms', '{:.0f}', False),
    ('release_ms', 'release ms', '{:.0f}', False),
    ('daemon_cpu_ms_per_s', 'nvme-coal CPU ms/s', '{:.1f}', False),
    ('other_iops', 'other jobs IOPS', '{:.0f}', True),
]


def die(msg):
    sys.exit(f'bench: {msg}')


def parse_matrix(path):
    defaults = {}
    modes = []
    for n, raw in enumerate(open(path), 1):
        line = raw.split('#', 1)[0].strip()
        if not line:
            continue
        words = line.split()
        if words[0] == '@defaults':
            for w in words[1:]:
                k, _, v = w.partition('=')
                defaults[k] = v
            continue
        if len(words) < 2:
            die(f'{path}:{n}: a line needs a scenario and a mode')
        opts = dict(defaults)
        boot = []
        quick = False
        for w in words[2:]:
            if w == 'quick':
                quick = True
            elif w.startswith('boot:'):
                boot.append(w[5:])
            elif '=' in w:
                k, _, v = w.partition('=')
                opts[k] = v
            else:
                die(f'{path}:{n}: cannot read "{w}"')
        if opts.get('sample', '') not in ('', 'coal', 'react'):
            die(f'{path}:{n}: sample={opts["sample"]}: sample=coal or sample=react')
        modes.append({
            'scenario': words[0], 'mode': words[1], 'quick': quick,
            'kernel': opts.pop('kernel', 'bench'),
            'run': opts.pop('run', 'fio'),
            'apst': {k[5:]: v for k, v in opts.items() if k.startswith('apst:')},
            'reps': int(opts.pop('reps', 3)),
            'sample': opts.pop('sample', ''),
            'boot': boot,
            'vm': {k[3:]: v for k, v in opts.items() if k.startswith('vm:')},
            # (an empty value takes a default back: fio:phases=)
            'fio': {k[4:]: v for k, v in opts.items() if k.startswith('fio:') and v},
            'dbg': {k[4:]: v for k, v in opts.items() if k.startswith('dbg:')},
            'coal': {k[5:]: v for k, v in opts.items() if k.startswith('coal:')},
        })
    return modes


def cases_of(mode):
    """Expand comma lists of fio options into one case each."""
    if mode['run'] == 'apst':
        tols = mode['apst'].get('tolerances', '100000,25000').split(',')
        return [{'case': 'apst', 'labels': [f'tol={t}' for t in tols],
                 'trials': 3 if QUICK else int(mode['apst'].get('trials', 60)),
                 'idle': mode['apst'].get('idle', '2.5'), 'tolerances': tols}]
    keys = [k for k, v in mode['fio'].items() if ',' in v]
    lists = [mode['fio'][k].split(',') for k in keys]
    cases = []
    for values in itertools.product(*lists):
        fio = dict(mode['fio'])
        fio.update(zip(keys, values))
        if QUICK:
            fio['runtime'] = '2'
        label = (' '.join(f'{k}={v}' for k, v in zip(keys, values)) or
                 (f"pair={fio['pair']}" if 'pair' in fio else 'run'))
        case = {'case': label, 'fio': fio, 'sample': mode['sample']}
        if mode['coal']:
            # nvme-coal (tools/nvme) beside the job: its options, its path
            case['coal'] = mode['coal']
            case['coal_bin'] = COAL_BIN
        if 'phases' in fio:
            # the guest runs the phases back to back, one result each
            case['labels'] = [f'phase{i} qd={ph.split(":")[0]}' for i, ph in
                              enumerate(fio['phases'].split('+'), 1)]
            if QUICK:
                fio['phases'] = '+'.join(ph.split(':')[0] + ':2' for ph in
                                         fio['phases'].split('+'))
        cases.append(case)
    return cases


def boot(mode, rep, cases):
    name = f"{mode['scenario']}-{mode['mode']}-r{rep}"
    res = os.path.join(OUT, 'runs', name)
    shutil.rmtree(res, ignore_errors=True)
    os.makedirs(res)
    json.dump(cases, open(os.path.join(res, 'jobs.json'), 'w'))
    vm = [os.path.join(TOP, 'scripts', 'vm'), '--results', res]
    if mode['kernel'] == 'bench' and SMOKE_ON_TEST:
        pass  # scripts/vm's default: the test kernel
    elif mode['kernel'] == 'stock' and SMOKE_ON_TEST:
        vm.append('--stock-test')
    elif mode['kernel'] in ('stock', 'bench'):
        vm.append('--' + mode['kernel'])
    else:
        vm += ['--kernel', mode['kernel']]
    for k, v in mode['vm'].items():
        vm += [f'--{k}', v]
    vm += ['--append', ' '.join(['kunit.enable=0'] + mode['boot'])]
    if mode['run'] == 'apst':
        c = cases[0]
        guest = os.path.join(TOP, 'scripts', 'guest', 'apst-run')
        vm += ['--', f"{guest} {c['trials']} {c['idle']} $RESULTS/results.jsonl "
               + ' '.join(c['tolerances'])]
    else:
        guest = os.path.join(TOP, 'scripts', 'guest', 'bench-run')
        # debugfs tuning knobs (the coalescing thresholds), set before the run
        knobs = ''.join(f'echo {v} > /sys/kernel/debug/nvme_pci/{k} && '
                        for k, v in mode['dbg'].items())
        vm += ['--', f'{knobs}{guest} $RESULTS/jobs.json $RESULTS/results.jsonl']
    rc = subprocess.run(vm).returncode
    runs = []
    path = os.path.join(res, 'results.jsonl')
    if os.path.exists(path):
        for line in open(path):
            r = json.loads(line)
            r.update(scenario=mode['scenario'], mode=mode['mode'], rep=rep,
                     qemu=mode['vm'].get('qemu', 'project'))
            runs.append(r)
    if rc != 0:
        print(f'bench: guest {name} exited {rc}; see {res}/console.log', file=sys.stderr)
        runs.append({'scenario': mode['scenario'], 'mode': mode['mode'],
                     'rep': rep, 'case': '*', 'failed': rc})
    return runs


def react_again(runs):
    """The reaction to the deep load, computed again from the series the
    guest kept (sample=react), so that REPLOT=1 follows react.py."""
    for r in runs:
        rs = r.get('react_series')
        if rs:
            r.pop('engage_ms', None)
            r.pop('release_ms', None)
            r.update(react.reaction([tuple(x) for x in rs['depth']],
                                    [tuple(x) for x in rs['delay']], deep=16))


def summarise(modes, runs):
    react_again(runs)
    summary = []
    for m in modes:
        for label in [lb for c in cases_of(m) for lb in c.get('labels', [c['case']])]:
            ok = [r for r in runs if r['scenario'] == m['scenario'] and
                  r['mode'] == m['mode'] and r['case'] == label and
                  'failed' not in r]
            row = {'scenario': m['scenario'], 'mode': m['mode'],
                   'case': label, 'runs': len(ok)}
            for key, *_ in METRICS:
                vals = [r[key] for r in ok if r.get(key) is not None]
                if vals:
                    row[key] = {'median': statistics.median(vals),
                                'min': min(vals), 'max': max(vals)}
            trials = [t for r in ok for t in r.get('apst_trials', [])]
            if trials:
                # cold reads: percentiles over every trial of every run
                lat = sorted(t['clat_us'] for t in trials)
                for key, p in (('clat_p50_us', 50), ('clat_p90_us', 90),
                               ('clat_p99_us', 99), ('clat_max_us', 100)):
                    v = lat[min(len(lat) - 1, -(-len(lat) * p // 100) - 1)]
                    row[key] = {'median': v, 'min': v, 'max': v}
                row['apst_states'] = {}
                for t in trials:
                    k = str(t['ps'])
                    row['apst_states'][k] = row['apst_states'].get(k, 0) + 1
            summary.append(row)
    return summary


def fmt(fmtstr, v):
    return fmtstr.format(v) if v is not None else '-'


def write_markdown(meta, summary, path, series=()):
    lines = [f"# make bench results ({meta['date']}, Linux {meta.get('base', '6.12')})", '',
             f"{meta['reps']} repetition(s) per case, modes interleaved; "
             'median [min-max]; the ratio is to the scenario\'s first mode '
             '(its baseline).  QEMU/TCG: read ratios and interrupt counts, '
             'not absolute speed.', '']
    if meta.get('note'):
        lines += [f"Note: {meta['note']}.", '']
    for scen in dict.fromkeys(r['scenario'] for r in summary):
        rows = [r for r in summary if r['scenario'] == scen]
        base_mode = rows[0]['mode']
        # the columns some row of the scenario has a figure for
        metrics = [m for m in METRICS if any(r.get(m[0]) for r in rows)]
        lines += [f'## {scen}', '']
        head = ['mode', 'case'] + [t for _, t, _, _ in metrics] + ['IOPS ratio', 'handler runs/IO ratio']
        lines += ['| ' + ' | '.join(head) + ' |', '|' + '---|' * len(head)]
        for r in rows:
            base = next((b for b in rows if b['mode'] == base_mode and b['case'] == r['case']), None)
            cells = [r['mode'], r['case']]
            for key, _, f, _ in metrics:
                m = r.get(key)
                if not m:
                    cells.append('-')
                elif key == 'iops':
                    cells.append(f"{fmt(f, m['median'])} [{fmt(f, m['min'])}-{fmt(f, m['max'])}]")
                else:
                    cells.append(fmt(f, m['median']))
            for key in ('iops', 'handler_runs_per_io'):
                b = base.get(key, {}).get('median') if base else None
                v = r.get(key, {}).get('median')
                cells.append(f'{v / b:.2f}' if b and v is not None else '-')
            lines.append('| ' + ' | '.join(cells) + ' |')
        lines.append('')
        for key, title in (('iops', 'IOPS'), ('clat_p99_us', 'p99'),
                           ('handler_runs_per_io', 'handler runs')):
            lines.append(f'![{scen} {title}]({scen}-{key}.png)')
        states = [r for r in rows if r.get('apst_states')]
        for r in states:
            lines.append(f"Power states the device was in before the read, "
                         f"{r['case']}: " + ', '.join(
                             f'ps{k}: {v}' for k, v in sorted(r['apst_states'].items())))
        if states:
            lines.append('')
        for png in series:
            if png.startswith(f'{scen}-'):
                lines.append(f'![{png[:-4]}]({png})')
        lines.append('')
    open(path, 'w').write('\n'.join(lines))


def gnuplot(script, png):
    r = subprocess.run(['gnuplot'], input=script, text=True, capture_output=True)
    if r.returncode != 0:
        die(f'gnuplot failed for {png}: {r.stderr}')


def plot(summary, outdir):
    """One clustered histogram per scenario and metric: cases x modes."""
    if not shutil.which('gnuplot'):
        die('gnuplot missing: run make deps')
    made = []
    for scen in dict.fromkeys(r['scenario'] for r in summary):
        rows = [r for r in summary if r['scenario'] == scen]
        modes = list(dict.fromkeys(r['mode'] for r in rows))
        cases = list(dict.fromkeys(r['case'] for r in rows))
        for key, title in (('iops', 'IOPS (median)'),
                           ('clat_p99_us', 'completion latency p99, us (median)'),
                           ('handler_runs_per_io', 'NVMe handler runs per completed I/O (median)')):
            dat = os.path.join(outdir, f'{scen}-{key}.dat')
            with open(dat, 'w') as f:
                f.write('case ' + ' '.join(f'"{m}"' for m in modes) + '\n')
                for c in cases:
                    vals = []
                    for m in modes:
                        r = next((x for x in rows if x['mode'] == m and x['case'] == c), {})
                        v = r.get(key, {}).get('median')
                        vals.append('0' if v is None else str(v))
                    f.write(f'"{c}" ' + ' '.join(vals) + '\n')
            png = os.path.join(outdir, f'{scen}-{key}.png')
            vals = [r[key]['median'] for r in rows if r.get(key, {}).get('median')]
            # latencies spanning decades (a timeout next to a poll) need a log scale
            log = key.startswith('clat') and vals and max(vals) > 100 * min(vals)
            script = f'''
set terminal png size 900,480
set output "{png}"
set title "{scen}: {title}"
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set key outside right top
{'set logscale y' if log else 'set yrange [0:*]'}
set grid ytics
plot for [i=2:{len(modes) + 1}] "{dat}" using i:xtic(1) title columnheader(i)
'''
            gnuplot(script, png)
            made.append(png)
    return made


def plot_apst(runs, outdir):
    """Latency of each cold read after idle, per tolerance, log scale."""
    made = []
    for scen in dict.fromkeys(r['scenario'] for r in runs if r.get('apst_trials')):
        rows = [r for r in runs if r['scenario'] == scen and r.get('apst_trials')]
        cases = list(dict.fromkeys(r['case'] for r in rows))
        dat = os.path.join(outdir, f'{scen}-trials.dat')
        with open(dat, 'w') as f:
            for c in cases:
                f.write(f'# {c}\n')
                lat = sorted(t['clat_us'] / 1000 for r in rows if r['case'] == c
                             for t in r['apst_trials'])
                for i, v in enumerate(lat):
                    f.write(f'{100 * (i + 1) / len(lat):.2f} {v}\n')
                f.write('\n\n')
        png = os.path.join(outdir, f'{scen}-trials.png')
        plots = ', '.join(f'"{dat}" index {i} using 2:1 with steps lw 2 title "{c}"'
                          for i, c in enumerate(cases))
        script = f'''
set terminal png size 900,420
set output "{png}"
set title "{scen}: cold 4 KiB O\\\\_DIRECT read after idle (cumulative)"
set xlabel "latency, ms (log)"
set ylabel "% of reads"
set logscale x
set yrange [0:100]
set key outside right top
set grid
plot {plots}
'''
        gnuplot(script, png)
        made.append(png)
    return made


def plot_series(runs, outdir):
    """Adaptive delay per queue over the phases of the first repetition."""
    made = []
    for scen in dict.fromkeys(r['scenario'] for r in runs if r.get('coal_series')):
        for mode in dict.fromkeys(r['mode'] for r in runs if r['scenario'] == scen
                                  and r.get('coal_series')):
            rows = [x for r in runs if r['scenario'] == scen and r['mode'] == mode
                    and r.get('rep') == 1 for x in r.get('coal_series', [])]
            if not rows:
                continue
            t0 = min(t for t, _, _ in rows)
            queues = sorted(dict.fromkeys(q for _, q, _ in rows))
            dat = os.path.join(outdir, f'{scen}-{mode}-delay.dat')
            with open(dat, 'w') as f:
                for i, q in enumerate(queues):
                    f.write(f'# {q}\n')
                    for t, qq, d in rows:
                        if qq == q:
                            f.write(f'{t - t0:.2f} {d}\n')
                    f.write('\n\n')
            png = os.path.join(outdir, f'{scen}-{mode}-delay.png')
            plots = ', '.join(f'"{dat}" index {i} using 1:2 with steps lw 2 title "{q}"'
                              for i, q in enumerate(queues))
            script = f'''
set terminal png size 900,400
set output "{png}"
set title "{scen}/{mode}: adaptive delay per queue (phases back to back)"
set xlabel "seconds"
set ylabel "delay, us"
set yrange [0:*]
set key outside right top
set grid
plot {plots}
'''
            gnuplot(script, png)
            made.append(png)
    return made


def plot_react(runs, outdir):
    """sample=react: the largest delay any queue had (the kernel's, read
    from debugfs, or nvme-coal's decisions) and the commands in flight,
    over the job, first repetition, a panel per mode."""
    made = []
    for scen in dict.fromkeys(r['scenario'] for r in runs if r.get('react_series')):
        rows = [r for r in runs if r['scenario'] == scen and r.get('react_series')
                and r.get('rep') == 1]
        if not rows:
            continue
        dat = os.path.join(outdir, f'{scen}-react.dat')
        with open(dat, 'w') as f:
            for r in rows:
                depth, delay = r['react_series']['depth'], r['react_series']['delay']
                # time 0: the deep load's start, as reaction() takes it
                t0 = next((t for t, n in depth if n > 16), depth[0][0] if depth else 0)
                # a block with one point at least: gnuplot counts no empty one
                f.write(f"# {r['mode']}: delay\n")
                f.write('-1 0\n')
                state = {}
                for t, q, d in delay:
                    state[q] = d
                    f.write(f'{t - t0:.3f} {max(state.values())}\n')
                f.write('\n\n')
                f.write(f"# {r['mode']}: in flight\n")
                for t, n in depth:
                    f.write(f'{t - t0:.3f} {n}\n')
                f.write('\n\n')
        png = os.path.join(outdir, f'{scen}-react.png')
        # a panel per mode: the delay (steps) and the commands in flight
        cols = 2
        nrows = -(-len(rows) // cols)
        panels = []
        for i, r in enumerate(rows):
            panels.append(f'''
set title "{r['mode']}"
plot "{dat}" index {2 * i} using 1:2 with steps lw 2 lc 1 title "delay us", \\
     "{dat}" index {2 * i + 1} using 1:2 axes x1y2 with lines lc 3 title "in flight"
''')
        script = f'''
set terminal png size 1000,{260 * nrows}
set output "{png}"
set multiplot layout {nrows},{cols} title "{scen}: delay set and commands in flight, from the deep load's start (s)"
set xrange [-1:*]
set yrange [0:*]
set y2range [0:*]
set ytics nomirror
set y2tics
set key top right font ",8"
set grid
{"".join(panels)}
unset multiplot
'''
        gnuplot(script, png)
        made.append(png)
    return made


def render(meta, summary, runs):
    """results.md and every plot in OUT; returns the plots' paths."""
    series = plot_series(runs, OUT) + plot_apst(runs, OUT) + plot_react(runs, OUT)
    write_markdown(meta, summary, os.path.join(OUT, 'results.md'),
                   [os.path.basename(p) for p in series])
    return plot(summary, OUT) + series


def publish(outdir, plots, matrix):
    """Keep the latest full run in the tree, for the README: bench/matrix's
    in bench/results/, another matrix's (bench/NAME.matrix) in
    bench/results/NAME/, so that it never replaces the full run's; a
    backport's in bench/results/BASE/.  The files of the previous run go,
    the folders of the others stay."""
    dest = os.path.join(TOP, 'bench', 'results', *([BASE] if BASE_TAG else []))
    if os.path.basename(matrix) != 'matrix':
        dest = os.path.join(dest, os.path.basename(matrix).rsplit('.', 1)[0])
    os.makedirs(dest, exist_ok=True)
    for old in os.listdir(dest):
        if os.path.isfile(os.path.join(dest, old)):
            os.remove(os.path.join(dest, old))
    for f in ['results.md', 'results.json'] + [os.path.basename(p) for p in plots]:
        shutil.copy(os.path.join(outdir, f), dest)


def replot():
    data = json.load(open(os.path.join(OUT, 'results.json')))
    if any(r.get('react_series') for r in data['runs']):
        # the reactions again, as react.py computes them now
        modes = parse_matrix(os.path.join(TOP, data['meta']['matrix']))
        done = {(r['scenario'], r['mode']) for r in data['runs']}
        data['summary'] = summarise([m for m in modes if (m['scenario'], m['mode']) in done],
                                    data['runs'])
        json.dump(data, open(os.path.join(OUT, 'results.json'), 'w'), indent=1)
    plots = render(data['meta'], data['summary'], data['runs'])
    if not data['meta']['quick']:
        publish(OUT, plots, data['meta']['matrix'])
    print(f'bench: replotted {len(plots)} plots from {OUT}/results.json')


def main():
    if os.environ.get('REPLOT'):
        return replot()
    matrix = os.environ.get('BENCH_MATRIX', os.path.join(TOP, 'bench', 'matrix'))
    modes = parse_matrix(matrix)
    if any(m['coal'] for m in modes) and not os.access(COAL_BIN, os.X_OK):
        die(f'no {COAL_BIN}: make bench builds it (scripts/lib.sh: build_nvme_coal)')
    only = os.environ.get('SCENARIOS')
    if only:
        modes = [m for m in modes if m['scenario'] in only.split(',')]
    if QUICK:
        modes = [m for m in modes if m['quick']]
    if not modes:
        die('no modes selected')
    reps = 1 if QUICK else int(os.environ.get('REPS', 0) or max(m['reps'] for m in modes))
    os.makedirs(OUT, exist_ok=True)
    for stale in os.listdir(OUT):
        if stale.endswith(('.png', '.dat')):
            os.remove(os.path.join(OUT, stale))

    # a run=apst mode holds its own repetitions (trials): once
    plan = [(rep, m) for rep in range(1, reps + 1) for m in modes
            if rep == 1 or m['run'] != 'apst']
    per_case = 2 if QUICK else int(modes[0]['fio'].get('runtime', 8)) + 1

    def estimate(m):
        c = cases_of(m)
        if m['run'] == 'apst':
            return 6 + c[0]['trials'] * len(c[0]['labels']) * (float(c[0]['idle']) + 0.5)
        return 6 + len(c) * (per_case + 2)
    est = {id(m): estimate(m) for m in modes}
    remaining = sum(est[id(m)] for _, m in plan)
    runs = []
    t0 = time.time()
    done_est = 0
    for k, (rep, m) in enumerate(plan, 1):
        # the estimate, corrected by how the boots so far compared with it
        scale = (time.time() - t0) / done_est if done_est else 1
        print(f"[{k}/{len(plan)}] {m['scenario']}/{m['mode']} rep {rep}: "
              f"{time.time() - t0:.0f}s elapsed, ~{remaining * scale:.0f}s to go",
              flush=True)
        runs += boot(m, rep, cases_of(m))
        done_est += est[id(m)]
        remaining -= est[id(m)]

    meta = {'date': time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime()),
            'base': BASE, 'quick': QUICK, 'reps': reps,
            'matrix': os.path.relpath(matrix, TOP),
            'seconds': round(time.time() - t0)}
    summary = summarise(modes, runs)
    json.dump({'meta': meta, 'runs': runs, 'summary': summary},
              open(os.path.join(OUT, 'results.json'), 'w'), indent=1)
    plots = render(meta, summary, runs)
    failed = [r for r in runs if 'failed' in r]
    if not QUICK and not only and not failed:
        publish(OUT, plots, matrix)
    print(f'bench: {len(runs)} runs in {meta["seconds"]} s, {len(failed)} failed; '
          f'{OUT}/results.md, results.json and {len(plots)} plots')
    if QUICK:
        # the smoke run checks the harness: are its results well formed?
        v = subprocess.run([sys.executable, os.path.join(TOP, 'scripts', 'bench-validate.py')],
                           capture_output=True, text=True,
                           env=dict(os.environ, BENCH_QUICK_DIR=OUT))
        print(v.stdout, end='')
        if v.returncode or '\nfail ' in '\n' + v.stdout:
            sys.exit(1)
    sys.exit(1 if failed else 0)


if __name__ == '__main__':
    main()

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Reduce KTAP/TAP output to one line per leaf test case.

Reads KUnit output (dmesg, with or without printk timestamps, subtests
indented by four spaces) and kselftest runner output (nested output
prefixed with "# "), and prints "pass|fail|skip <prefix>: <path>" for every
test case that has no subtests of its own.  A missing plan entry or a
"Bail out!" counts as a failure.

usage: ktap.py PREFIX FILE
"""
import re
import sys

TS = re.compile(r'^\[\s*\d+\.\d+\]\s?')
RESULT = re.compile(r'^(not ok|ok)\s+(\d+)\s*-?\s*([^#]*?)\s*(#\s*(.*))?$')
PLAN = re.compile(r'^1\.\.(\d+)')


def depth_and_text(line):
    """Nesting depth: KUnit indents 4 spaces, kselftest prefixes '# '."""
    depth = 0
    while True:
        if line.startswith('    '):
            line = line[4:]
        elif line.startswith('# ') and (RESULT.match(line[2:].lstrip())
                                        or PLAN.match(line[2:].lstrip())
                                        or line[2:].startswith(('# ', '    '))
                                        or 'TAP version' in line
                                        or line[2:].startswith('Bail out!')):
            line = line[2:]
        else:
            return depth, line
        depth += 1


def main():
    prefix, path = sys.argv[1], sys.argv[2]
    try:
        lines = open(path, errors='replace').read().splitlines()
    except OSError as e:
        print(f'fail {prefix}: no output ({e.strerror})')
        return
    # per depth: results seen since the last result one level up
    children = {}
    plans = {}
    names = {}
    failed = {}
    count = 0
    started = False
    for raw in lines:
        raw = TS.sub('', raw.rstrip('\r'))
        depth, text = depth_and_text(raw)
        if 'TAP version' in text:
            started = True
            children[depth] = 0
            continue
        if not started:
            continue
        if text.startswith('Bail out!'):
            print(f'fail {prefix}: bailed out: {text}')
            count += 1
            continue
        m = PLAN.match(text)
        if m:
            plans[depth] = int(m.group(1))
            children[depth] = 0
            continue
        m = re.match(r'^# (?:Subtest|selftests): (.*)', text)
        if m:
            names[depth + (0 if 'Subtest' in text else 1)] = m.group(1)
            continue
        m = RESULT.match(text)
        if not m:
            continue
        ok, num, desc, directive = m.group(1), m.group(2), m.group(3), m.group(5) or ''
        children[depth] = children.get(depth, 0) + 1
        if ok != 'ok':
            failed[depth] = failed.get(depth, 0) + 1
        if children.get(depth + 1, 0) > 0:
            planned = plans.pop(depth + 1, None)
            if planned is not None and children[depth + 1] < planned:
                print(f'fail {prefix}: {desc}: {planned - children[depth + 1]} '
                      f'of {planned} planned cases never reported')
                count += 1
            # a failing parent whose children all passed fails on its own
            if ok != 'ok' and not failed.get(depth + 1):
                print(f'fail {prefix}: {desc}')
                count += 1
            children[depth + 1] = 0
            failed[depth + 1] = 0
            continue
        path_names = [names[d] for d in sorted(names) if 0 < d <= depth]
        full = ': '.join(path_names + [desc or f'case {num}'])
        if directive.upper().startswith('SKIP'):
            state = 'skip'
        elif ok == 'ok':
            state = 'pass'
        else:
            state = 'fail'
        print(f'{state} {prefix}: {full}')
        count += 1
    # the output ended inside a plan (the guest stopped, a test hung):
    # the cases that never came are failures too
    for depth in sorted(plans, reverse=True):
        if children.get(depth, 0) < plans[depth]:
            where = names.get(depth) or 'the run'
            print(f'fail {prefix}: {where}: {plans[depth] - children.get(depth, 0)} '
                  f'of {plans[depth]} planned cases never reported (output ended)')
            count += 1
    if count == 0:
        print(f'fail {prefix}: no test results in {path}')


if __name__ == '__main__':
    main()

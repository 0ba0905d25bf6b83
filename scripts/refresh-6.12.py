#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Write a backport hunk of build/6.12/linux back into patches/6.12/.

  scripts/refresh-6.12.py NNNN FILE...

After a change to patch NNNN was made in build/6.12/linux (commit --fixup
and rebase there, as 'make refresh' expects for mainline), replace in
patches/6.12/NNNN-*.patch the section of each named upstream FILE with that
file's diff in the build/6.12/linux commit whose subject is the patch's
(a FILE with no section yet gets one, at the end).
The "[ 6.12: ... ]" note and the other sections stay as they are; 'make
tree BASE=6.12' then checks that the backport applies.
"""
import glob
import os
import re
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(os.environ.get('BUILD', os.path.join(TOP, 'build')), '6.12', 'linux')


def die(msg):
    sys.exit(f'error: {msg}')


def git(*args):
    return subprocess.run(['git', '-C', SRC] + list(args), check=True,
                          capture_output=True, text=True).stdout


def main():
    if len(sys.argv) < 3:
        die(__doc__.strip().splitlines()[2].strip())
    num, files = sys.argv[1], sys.argv[2:]
    backport = glob.glob(f'{TOP}/patches/6.12/{num}-*.patch')
    mainline = glob.glob(f'{TOP}/patches/{num}-*.patch')
    if len(backport) != 1 or len(mainline) != 1:
        die(f'no single patch {num} in patches/ and patches/6.12/')
    subject = None
    with open(mainline[0]) as f:
        for line in f:
            if line.startswith('Subject:'):
                subject = re.sub(r'^Subject: (\[PATCH[^\]]*\] )?', '', line.strip())
                break
    shas = [l.split(' ', 1)[0] for l in git('log', '--format=%H %s', 'base..HEAD').splitlines()
            if l.split(' ', 1)[1] == subject]
    if len(shas) != 1:
        die(f'build/6.12/linux has no single commit "{subject}"')
    text = open(backport[0]).read()
    for path in files:
        diff = git('diff', '-U3', shas[0] + '^', shas[0], '--', path)
        diff = ''.join(l for l in diff.splitlines(True) if not l.startswith('index '))
        if not diff:
            die(f'{path}: not changed by "{subject}" in build/6.12/linux')
        section = re.compile(r'^diff --git a/%s b/%s\n.*?(?=^diff --git |\Z)'
                             % (re.escape(path), re.escape(path)), re.S | re.M)
        if section.search(text):
            text = section.sub(lambda m: diff, text, count=1)
        else:
            # a file whose mainline hunks no longer apply to 6.12
            text = text.rstrip('\n') + '\n' + diff
    with open(backport[0], 'w') as f:
        f.write(text)
    print(f'{os.path.basename(backport[0])}: {", ".join(files)} from {shas[0][:12]}')


if __name__ == '__main__':
    main()

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Write the commits of build/linux back into the overlay.

Work on the series with git in build/linux (commit, commit --fixup, rebase),
then run 'make refresh': for each commit base..HEAD, in order,
 - the files it adds are copied to their in-tree paths in this repository
   and listed under its entry in patches/series;
 - its changes to upstream files become the hunks of its patch file, after
   a From:/Subject: header and its message.
A file added by one commit may be changed by later ones: the overlay holds
its last version, the later commits' changes to it are hunks of their
patches, and 'make tree' undoes them to get the version that adds it.  The
series may not be left with local edits.  Patch file names are made from
the number and subject.
"""
import os
import re
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(os.environ.get('BUILD', os.path.join(TOP, 'build')), 'linux')
AUTHOR = os.environ.get('SERIES_AUTHOR', 'NVMe IRQ series <nvme-irq@example.org>')


def git(*args):
    return subprocess.run(['git', '-C', SRC] + list(args), check=True,
                          capture_output=True, text=True).stdout


def die(msg):
    sys.exit(f'error: {msg}')


def old_series():
    names, header, files = [], [], set()
    with open(os.path.join(TOP, 'patches', 'series')) as f:
        for line in f:
            if line.startswith('#'):
                header.append(line)
            elif line.strip() and not line[0].isspace():
                names.append(line.strip())
            elif line.strip():
                files.add(line.strip())
    return names, header, files


def check_overlay_unedited(path, dest, data):
    """Refuse to overwrite an overlay file edited since the last make tree."""
    if not os.path.exists(dest):
        return
    mine = open(dest, 'rb').read()
    if mine == data:
        return
    applied = subprocess.run(['git', '-C', SRC, 'show', f'refs/overlay/applied:{path}'],
                             capture_output=True)
    if applied.returncode != 0 or applied.stdout != mine:
        die(f'{path} was edited both in the overlay and in build/linux; '
            'keep one edit (make tree, or revert the overlay file) and retry')


def slug(subject, n):
    s = re.sub(r'[^A-Za-z0-9_]+', '-', subject).strip('-')[:52].rstrip('-')
    return f'{n:04d}-{s}.patch'


def main():
    if os.environ.get('BASE', '7.3') != '7.3':
        die('make refresh writes mainline\'s patches from build/linux; the '
            'backport\'s notes, hunks and compat deltas are edited in '
            'patches/6.12/ (make tree BASE=6.12 checks that they apply)')
    if git('status', '--porcelain', '--untracked-files=no').strip():
        die('build/linux has uncommitted edits; commit them first')
    if os.path.exists(os.path.join(SRC, '.git', 'nvme-irq-at-base')):
        die('build/linux was left at base by a run that was killed; '
            "'make tree' checks it out again")
    commits = git('rev-list', '--reverse', 'base..HEAD').split()
    if not commits:
        die('build/linux has no commit on top of base (is it checked out at '
            'base?); nothing to refresh')
    names, header, old_files = old_series()
    owner = {}
    entries = []
    for i, c in enumerate(commits):
        msg = git('log', '-1', '--format=%B', c).rstrip('\n') + '\n'
        author = git('log', '-1', '--format=%an <%ae>', c).strip() or AUTHOR
        subject, _, body = msg.partition('\n')
        status = git('diff', '--name-status', '--no-renames', f'{c}^', c).splitlines()
        added, changed = [], []
        for line in status:
            st, path = line.split('\t', 1)
            if path in owner and st != 'M':
                die(f'commit {i + 1} ({subject}) adds or removes {path}, which commit '
                    f'{owner[path] + 1} adds: fold the change into that commit')
            (added if st == 'A' else changed).append(path)
        for path in added:
            owner[path] = i
        hunks = git('diff', '--no-renames', f'{c}^', c, '--', *changed) if changed else ''
        name = slug(subject, i + 1)
        with open(os.path.join(TOP, 'patches', name), 'w') as f:
            f.write(f'From: {author}\nSubject: [PATCH] {subject}\n\n')
            f.write(body.lstrip('\n'))
            f.write('---\n')
            f.write(hunks)
        entries.append((name, sorted(added)))
    # the overlay holds each added file as the series leaves it
    for path in owner:
        data = subprocess.run(['git', '-C', SRC, 'show', f'HEAD:{path}'],
                              check=True, capture_output=True).stdout
        dest = os.path.join(TOP, path)
        check_overlay_unedited(path, dest, data)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with open(dest, 'wb') as f:
            f.write(data)
        mode = git('ls-tree', 'HEAD', '--', path).split()[0]
        os.chmod(dest, 0o755 if mode == '100755' else 0o644)
    for stale in set(names) - {name for name, _ in entries}:
        os.remove(os.path.join(TOP, 'patches', stale))
    # files the series no longer adds leave the overlay
    for stale in old_files - set(owner):
        if os.path.isfile(os.path.join(TOP, stale)):
            os.remove(os.path.join(TOP, stale))
    with open(os.path.join(TOP, 'patches', 'series'), 'w') as f:
        f.writelines(header)
        for name, files in entries:
            f.write(name + '\n')
            for path in files:
                f.write('\t' + path + '\n')
    # the overlay now holds what HEAD holds: later refreshes compare with it
    git('update-ref', 'refs/overlay/applied', 'HEAD')
    print(f'refreshed {len(entries)} patches from build/linux')


if __name__ == '__main__':
    main()

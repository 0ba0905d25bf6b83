#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A patch of the series as another base carries it (make tree BASE=6.12).

    base_patch.py MAINLINE BASEFILE ADDED OUT COMPAT

MAINLINE is mainline's patch (a mail: headers, message, hunks).  BASEFILE,
the base's file of the same name under patches/<base>/, is either

 - a patch of its own (it has a Subject: header): a prerequisite backport,
   or a patch mainline does not carry; it is used as it is; or
 - a note, "[ 6.12: ... ]", followed by hunks: a hunk on a file this patch
   adds (ADDED, one path a line) belongs to the compat delta, applied once
   the new files are in; the hunks on any other file replace mainline's
   hunks on that file, and where they change other lines than mainline's
   (not only their context), the note must name the file.  The note goes into the message, before its last
   Signed-off-by: line, the way stable backports carry theirs.

OUT receives the patch to apply, COMPAT the compat delta (maybe empty).
"""
import re
import sys
from collections import Counter

DIFF = re.compile(r'(?m)^(?=diff --git )')


def split(text):
    """(the text before the first hunk, {path: its diff}, [paths in order])"""
    parts = DIFF.split(text)
    head, diffs, order = parts[0], {}, []
    for d in parts[1:]:
        path = re.match(r'diff --git a/\S+ b/(\S+)', d).group(1)
        d = re.sub(r'(?m)^-- \n[\s\S]*\Z', '', d)	# format-patch's signature
        diffs[path] = d
        order.append(path)
    return head, diffs, order


def changed(diff):
    """The lines a diff removes and adds, without their context."""
    return Counter(line for line in diff.split('\n')
                   if line[:1] in '+-' and not line.startswith(('+++', '---')))


def main():
    mainline, basefile, added, out, compat = sys.argv[1:6]
    text = open(basefile).read() if basefile != '-' else ''
    if re.search(r'(?m)^Subject: ', text.split('\ndiff --git ', 1)[0]):
        open(out, 'w').write(text)
        open(compat, 'w').write('')
        return
    added = set(open(added).read().split())
    note, base_diffs, base_order = split(text)
    head, diffs, order = split(open(mainline).read())
    for path in base_order:
        if path not in added and path not in diffs:
            order.append(path)
    note = note.strip('\n')
    if note:
        # the message ends at the "---" line before the hunks
        msg, sep, rest = head.partition('\n---\n')
        lines = msg.split('\n')
        sob = [i for i, line in enumerate(lines) if line.startswith('Signed-off-by:')]
        at = sob[-1] if sob else len(lines)
        lines[at:at] = note.split('\n')
        head = '\n'.join(lines) + sep + rest
    # a hunk of the base's that changes other lines than mainline's (not
    # only their context) must be one the note names: a hunk mainline adds
    # later is not lost silently
    for path in base_order:
        if path in added or path not in diffs:
            continue
        if changed(base_diffs[path]) != changed(diffs[path]) and \
           path.rsplit('/', 1)[-1] not in note:
            sys.exit(f'{basefile}: its hunks on {path} change other lines than '
                     "mainline's, and its note does not name the file")
    with open(out, 'w') as f:
        f.write(head)
        for path in order:
            f.write(base_diffs[path] if path in base_diffs and path not in added
                    else diffs[path])
    with open(compat, 'w') as f:
        for path in base_order:
            if path in added:
                f.write(base_diffs[path])


if __name__ == '__main__':
    main()

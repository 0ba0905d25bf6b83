#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Keep a kernel build folder across clones of the project (kernel.sh).

A clean clone extracts its tree afresh, so every source file is newer than
any object built before and make, with ccache, still runs every compile
command (about 70 s per kernel here, against 8 s for a build with nothing
to do).  This keeps the last build folder of each base and flavour in a
cache, with the blob ids of the tree it was built from (its manifest), and
seeds an empty build folder from it:

  save CACHE OUT SRC TOP BUILD     OUT/.manifest written (below), then OUT
                                   copied to CACHE
  restore CACHE OUT SRC TOP BUILD  CACHE copied to OUT, the old clone's
                                   TOP and BUILD in the .cmd files made
                                   this one's, and every source file given
                                   an mtime that tells make the truth:
                                   2001-01-01 when its blob is the one the
                                   cached objects were built from, now when
                                   it is not
  manifest OUT SRC                 OUT/.manifest only (a build not cached)

A manifest is written after a build of a clean tree only, and only for the
objects make looked at: an object a configuration no longer builds keeps
the blob it was built from, which a later configuration could take for
the present one, so a kbuild object older than a file its .cmd names is
deleted first.

An old mtime also reaches everything else built from SRC, so a file is made
old only when it was not written since tree.sh made the tree (its
.git/nvme-irq-made) and every other configured folder of SRC has a manifest
naming the same blob; a folder without one (built from a tree with local
edits, seeded by another script, or older than this script), or a build of
the tools older than the tree, refuses the cache, and the kernel is built
as before.  A restore fills OUT.new and renames it, so that an interrupted
one leaves no folder to build in; a changed Kconfig file makes kernel.sh
configure the folder again.  A refusal prints why, exits 2 and leaves OUT
alone; any other failure leaves OUT to be deleted.  CACHE's parent is
locked for each copy, so that clones do not read a folder half written.
"""

import fcntl
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

OLD = 978307200			# 2001-01-01: older than any cached object
MANIFEST = ".manifest"
TOPFILE = ".cache-top"


def refuse(why):
    print(f"kbuild cache: {why}: built without it", file=sys.stderr)
    sys.exit(2)


def tree_manifest(src):
    """{path: 'mode blob'} of SRC's index, None when the work tree differs"""
    git = ["git", "-C", src]
    if subprocess.run(git + ["diff", "--quiet"]).returncode != 0:
        return None
    out = subprocess.run(git + ["ls-files", "-s", "-z"], check=True,
                         capture_output=True).stdout
    entries = {}
    for rec in out.split(b"\0"):
        if not rec:
            continue
        meta, path = rec.split(b"\t", 1)
        mode, blob, _stage = meta.split(b" ")
        entries[path] = mode + b" " + blob
    return entries


CMD_TARGET = re.compile(rb"^savedcmd_(\S+) :=", re.M)
CMD_SOURCE = re.compile(rb"^source_\S+ := (\S+)", re.M)
CMD_DEPS = re.compile(rb"^deps_\S+ := \\\n((?:.*\\\n)*)", re.M)


def prune_stale(out):
    """delete the kbuild objects older than a file their .cmd names"""
    mtimes = {}

    def mtime(p):
        if p not in mtimes:
            try:
                mtimes[p] = os.stat(p).st_mtime_ns
            except FileNotFoundError:
                mtimes[p] = None
        return mtimes[p]

    pruned = 0
    for root, _dirs, files in os.walk(out):
        for name in files:
            if not (name.startswith(".") and name.endswith(".o.cmd")):
                continue
            with open(os.path.join(root, name), "rb") as f:
                data = f.read()
            t = CMD_TARGET.search(data)
            if not t:
                continue
            target = os.path.join(out, t.group(1).decode())
            built = mtime(target)
            if built is None:
                continue
            deps = []
            s = CMD_SOURCE.search(data)
            if s:
                deps.append((s.group(1), False))
            d = CMD_DEPS.search(data)
            for line in (d.group(1).split(b"\n") if d else []):
                line = line.strip().rstrip(b"\\").strip()
                if line.startswith(b"$(wildcard "):
                    deps.append((line[11:-1], True))
                elif line:
                    deps.append((line, False))
            for dep, optional in deps:
                # relative: from the build folder, where make runs
                got = mtime(os.path.join(out, dep.decode()))
                if (got is None and not optional) or (got is not None and got > built):
                    os.unlink(target)
                    mtimes[target] = None
                    pruned += 1
                    break
    return pruned


def write_manifest(out, src):
    path = os.path.join(out, MANIFEST)
    if os.path.exists(path):
        os.unlink(path)
    entries = tree_manifest(src)
    if entries is None:
        return False
    pruned = prune_stale(out)
    if pruned:
        print(f"kbuild cache: {pruned} objects of {out} older than their "
              "sources (not built by this configuration) deleted", file=sys.stderr)
    with open(path + ".new", "wb") as f:
        for p in sorted(entries):
            f.write(entries[p] + b"\t" + p + b"\0")
    os.replace(path + ".new", path)
    return True


def read_manifest(path):
    entries = {}
    with open(path, "rb") as f:
        for rec in f.read().split(b"\0"):
            if rec:
                meta, p = rec.split(b"\t", 1)
                entries[p] = meta
    return entries


def lock(cache):
    os.makedirs(os.path.dirname(cache), exist_ok=True)
    # (read-only: flock needs no more, and a user may read root's cache)
    fd = os.open(os.path.join(os.path.dirname(cache), ".lock"),
                 os.O_CREAT | os.O_RDONLY, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def save(cache, out, src, top, build):
    if not write_manifest(out, src):
        refuse(f"{src} has local edits, not cached")
    fd = lock(cache)
    tmp = tempfile.mkdtemp(prefix=os.path.basename(cache) + ".",
                           dir=os.path.dirname(cache))
    os.rmdir(tmp)
    try:
        subprocess.run(["cp", "-a", out, tmp], check=True)
        with open(os.path.join(tmp, TOPFILE), "w") as f:
            f.write(f"{top}\n{build}\n")
    except BaseException:
        # a full disk or an interrupt: no half copy left in the cache
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    old = None
    if os.path.exists(cache):
        old = tmp + ".old"
        os.rename(cache, old)
    os.rename(tmp, cache)
    os.close(fd)
    if old:
        shutil.rmtree(old)


def rewrite_paths(out, pairs):
    """each old path/ -> its new one in every .cmd file, mtimes kept"""
    pairs = [(o.encode() + b"/", n.encode() + b"/") for o, n in pairs if o and o != n]
    if not pairs:
        return 0
    # in one pass, the longer first (BUILD may lie inside TOP): a new path
    # that contains an old one is not rewritten again
    pairs.sort(key=lambda p: -len(p[0]))
    table = dict(pairs)
    pat = re.compile(b"|".join(re.escape(o) for o, _ in pairs))
    n = 0
    for root, _dirs, files in os.walk(out):
        for name in files:
            if not name.endswith(".cmd"):
                continue
            p = os.path.join(root, name)
            with open(p, "rb") as f:
                data = f.read()
            new = pat.sub(lambda m: table[m.group(0)], data)
            if new == data:
                continue
            st = os.stat(p)
            with open(p, "wb") as f:
                f.write(new)
            os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
            n += 1
    return n


def kconfig_file(p):
    name = p.rsplit(b"/", 1)[-1]
    return name.startswith(b"Kconfig") or name.endswith(b".config") or \
        p.startswith(b"scripts/kconfig/")


def restore(cache, out, src, top, build):
    if not os.path.isfile(os.path.join(cache, MANIFEST)):
        refuse(f"nothing cached in {cache}")
    if os.path.exists(os.path.join(out, "vmlinux")):
        refuse(f"{out} has a build of its own")
    current = tree_manifest(src)
    if current is None:
        refuse(f"{src} has local edits")
    # every other configured build folder of this tree must say what it
    # was built from (see the top)
    others = []
    parent = os.path.dirname(out)
    for d in sorted(os.listdir(parent)) if os.path.isdir(parent) else []:
        o = os.path.join(parent, d)
        if o in (out, out + ".new") or not os.path.isfile(os.path.join(o, ".config")):
            continue
        m = os.path.join(o, MANIFEST)
        if not os.path.isfile(m):
            refuse(f"{o} has no manifest")
        others.append(read_manifest(m))
    # and the tree made whole by tree.sh in one run, nothing written since
    # but what a newer mtime marks; user-space builds of it (nvme-coal)
    # made since, as a kernel folder's manifest would say
    try:
        made = os.stat(os.path.join(src, ".git", "nvme-irq-made")).st_mtime
    except FileNotFoundError:
        refuse(f"{src} was not made in one run of tree.sh")
    tools = os.path.join(os.path.dirname(parent), "tools")
    for root, _dirs, files in os.walk(tools):
        for name in files:
            if os.lstat(os.path.join(root, name)).st_mtime < made:
                refuse(f"{tools} was built from an earlier tree")

    new = out + ".new"
    shutil.rmtree(new, ignore_errors=True)
    os.makedirs(parent, exist_ok=True)
    fd = lock(cache)
    subprocess.run(["cp", "-a", cache, new], check=True)
    os.close(fd)
    # what the copy says of itself, whatever another clone saved since
    want = read_manifest(os.path.join(new, MANIFEST))
    with open(os.path.join(new, TOPFILE)) as f:
        old_top, old_build = f.read().split("\n")[:2]
    os.unlink(os.path.join(new, TOPFILE))
    os.unlink(os.path.join(new, MANIFEST))	# written again after the build
    rewritten = rewrite_paths(new, [(old_top, top), (old_build, build)])
    reconfigure = any(kconfig_file(p) and want.get(p) != m for p, m in current.items())
    if reconfigure and os.path.exists(os.path.join(new, ".fragments")):
        os.unlink(os.path.join(new, ".fragments"))

    now = time.time()
    same = changed = 0
    for p, meta in current.items():
        f = os.path.join(src.encode(), p)
        try:
            mtime = os.lstat(f).st_mtime
        except FileNotFoundError:
            continue
        if mtime <= made and want.get(p) == meta and \
           all(o.get(p) == meta for o in others):
            t, same = OLD, same + 1
        else:
            t, changed = now, changed + 1
        # (a file already old keeps its ctime: git need not read it again)
        if mtime != t:
            os.utime(f, (t, t), follow_symlinks=False)
    # the index's stat data again, or git would read every file later
    subprocess.run(["git", "-C", src, "update-index", "-q", "--refresh"],
                   stdout=subprocess.DEVNULL)
    shutil.rmtree(out, ignore_errors=True)
    os.rename(new, out)
    print(f"kbuild cache: {out} seeded from {cache}: {same} files as built, "
          f"{changed} newer; {rewritten} .cmd files moved from {old_top}"
          + ("; a Kconfig file changed: configured again" if reconfigure else ""),
          file=sys.stderr)


def main():
    if len(sys.argv) == 7 and sys.argv[1] in ("save", "restore"):
        args = [os.path.abspath(a) for a in sys.argv[2:]]
        (save if sys.argv[1] == "save" else restore)(*args)
    elif len(sys.argv) == 4 and sys.argv[1] == "manifest":
        if not write_manifest(*(os.path.abspath(a) for a in sys.argv[2:])):
            sys.exit(1)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check-bisect: build the test configuration at every commit of the
# series, in order, so that each patch builds on its own (incremental, in a
# worktree of its own).  Prints one pass/fail line per patch.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

wt=$BASE_BUILD/bisect
out=$(kbuild_dir bisect)
[ -f "$(kbuild_dir test)/.config" ] || die "configure the test kernel first: make kernel"
[ -d "$wt" ] || git -C "$SRC" worktree add -q --detach "$wt" base
mkdir -p "$out"
# as kernel.sh builds: the same cache keys for the same sources
export CCACHE_BASEDIR=$BASE_BUILD CCACHE_NOHASHDIR=1 CCACHE_COMPILERCHECK=content
fail=0
for c in $(git -C "$SRC" rev-list --reverse base..series); do
	subject=$(git -C "$SRC" log -1 --format=%s "$c")
	git -C "$wt" checkout -q -f --detach "$c"
	cp "$(kbuild_dir test)/.config" "$out/.config"
	if make -s -C "$wt" O="$out" ARCH=x86_64 CC="$KCC" -j"$(nproc)" \
		$(test_kflags) olddefconfig bzImage > "$out/build.log" 2>&1; then
		echo "pass bisect$BASE_TAG: $subject"
	else
		echo "fail bisect$BASE_TAG: $subject (see $out/build.log)"
		grep -E 'error' "$out/build.log" | head -5
		fail=1
	fi
done
exit $fail

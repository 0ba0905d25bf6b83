#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Static checks of the exported series, one "pass|fail <name>" line each:
#  - checkpatch.pl --strict on every patch: no error, warning or check;
#  - the patches apply in order with git am on the pristine base;
#  - sparse (C=2) and W=1 report nothing on a touched .c file that they do
#    not already report on the stock version of that file;
#  - the console matcher of scripts/vm matches every report header of a
#    corpus and no benign line;
#  - the series builds W=1 clean with CONFIG_IRQ_MODERATION,
#    CONFIG_FAULT_INJECTION, CONFIG_DEBUG_FS or CONFIG_FTRACE off.
# Needs out/series (make series) and a configured test kernel (make kernel).
set -uo pipefail
. "$(dirname "$0")/lib.sh"

series=$OUT/series
log=$OUT/check/static
mkdir -p "$log"
patches=$(ls "$series"/[0-9][0-9][0-9][0-9]-*.patch | grep -v 0000-cover-letter)

for p in $patches; do
	name=$(basename "$p")
	# a backport names its upstream commit, which this tree does not have
	ignore=()
	grep -qE '^commit [0-9a-f]{40} upstream\.$' "$p" && ignore=(--ignore UNKNOWN_COMMIT_ID)
	if (cd "$SRC" && PATH=/usr/bin:$PATH perl scripts/checkpatch.pl --strict --quiet "${ignore[@]}" "$p") > "$log/$name.checkpatch" 2>&1; then
		echo "pass static: checkpatch --strict $name"
	else
		echo "fail static: checkpatch --strict $name"
		sed 's/^/    /' "$log/$name.checkpatch" | head -30 >&2
	fi
done

am=$BUILD/am-check
if [ ! -d "$am" ]; then
	git -C "$SRC" worktree add -q --detach "$am" base > /dev/null 2>&1
fi
git -C "$am" am --abort > /dev/null 2>&1
git -C "$am" checkout -q -f --detach base && git -C "$am" clean -q -fdx
for p in $patches; do
	name=$(basename "$p")
	if git -C "$am" -c user.name=check -c user.email=check@localhost am -q "$p" > "$log/$name.am" 2>&1; then
		echo "pass static: git am $name"
	else
		echo "fail static: git am $name"
		sed 's/^/    /' "$log/$name.am" >&2
		git -C "$am" am --abort > /dev/null 2>&1
		break
	fi
done
if git -C "$am" diff --quiet series; then
	echo "pass static: git am of out/series gives the tree of build/linux"
else
	echo "fail static: git am of out/series differs from build/linux"
fi

# sparse and W=1: what is new against the stock file, line numbers ignored
test_out=$(kbuild_dir test)
stock_out=$BUILD/kbuild/sparse-stock
if [ ! -f "$test_out/.config" ]; then
	echo "fail static: sparse: no configured test kernel (make kernel)"
	exit 0
fi
if ! cmp -s "$test_out/.config" "$stock_out/.config.src" 2>/dev/null; then
	mkdir -p "$stock_out"
	cp "$test_out/.config" "$stock_out/.config"
	cp "$test_out/.config" "$stock_out/.config.src"
	make -s -C "$STOCK_SRC" O="$stock_out" ARCH=x86_64 CC="ccache gcc" \
		olddefconfig prepare -j"$(nproc)" > "$log/stock-prepare.log" 2>&1
fi
# the two trees' paths and line numbers differ; the warnings must not
normalise() {
	grep -E 'warning:|error:' | sed -E "s#$STOCK_SRC/##; s#$SRC/##" |
		sed -E 's/:[0-9]+:[0-9]+:/:/; s/:[0-9]+:/:/' | sort -u
}
for f in $(git -C "$SRC" diff --name-only --diff-filter=AM base series -- '*.c'); do
	obj=${f%.c}.o
	if [ ! -f "$test_out/$obj" ]; then
		echo "skip static: sparse W=1 $f (not built in the test configuration)"
		continue
	fi
	make -C "$SRC" O="$test_out" ARCH=x86_64 C=2 W=1 "$obj" 2>&1 | normalise > "$log/sparse-new" || true
	: > "$log/sparse-old"
	if [ -f "$STOCK_SRC/$f" ]; then
		make -C "$STOCK_SRC" O="$stock_out" ARCH=x86_64 C=2 W=1 "$obj" 2>&1 | normalise > "$log/sparse-old" || true
	fi
	new=$(comm -23 "$log/sparse-new" "$log/sparse-old")
	if [ -z "$new" ]; then
		echo "pass static: sparse W=1 $f"
	else
		echo "fail static: sparse W=1 $f"
		echo "$new" | sed 's/^/    /' >&2
	fi
done

# the console matcher of scripts/vm, on real report headers
bash "$TOP/scripts/splat/check.sh"

# the series in configurations the test kernels do not cover
bash "$TOP/scripts/config-matrix.sh"

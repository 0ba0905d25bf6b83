#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make qemu-series: the project's QEMU patches as a series for qemu-devel in
# out/qemu-series/ (cover letter from qemu/cover-letter), each checked with
# QEMU's own scripts/checkpatch.pl from the source make qemu fetched.  One
# "pass|fail static: qemu checkpatch <patch>" line each.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ -f "$BUILD/qemu.version" ] || die "run 'make qemu' first"
read -r _ _ qsrc < "$BUILD/qemu.version"
checkpatch=$qsrc/scripts/checkpatch.pl
[ -f "$checkpatch" ] || die "no $checkpatch: run 'make qemu'"

dest=$OUT/qemu-series
rm -rf "$dest"
mkdir -p "$dest"
n=0
while IFS= read -r p; do
	case $p in ''|'#'*) continue ;; esac
	cp "$TOP/qemu/patches/$p" "$dest/"
	n=$((n + 1))
done < "$TOP/qemu/patches/series"
{
	echo "From: $SERIES_AUTHOR"
	echo "Subject: [PATCH 0/$n] $(head -n 1 "$TOP/qemu/cover-letter")"
	echo
	tail -n +3 "$TOP/qemu/cover-letter"
	echo
	for p in "$dest"/0*.patch; do
		echo "  $(sed -n 's/^Subject: \[PATCH[^]]*\] //p' "$p")"
	done
} > "$dest/0000-cover-letter.patch"

status=0
for p in "$dest"/0[0-9][0-9][0-9]-*.patch; do
	case $p in */0000-cover-letter.patch) continue ;; esac
	name=$(basename "$p")
	if (cd "$qsrc" && perl scripts/checkpatch.pl -q "$p") > "$dest/$name.checkpatch" 2>&1; then
		echo "pass static: qemu checkpatch $name"
	else
		echo "fail static: qemu checkpatch $name"
		sed 's/^/    /' "$dest/$name.checkpatch" | head -20 >&2
		status=1
	fi
	rm -f "$dest/$name.checkpatch"
done
note "QEMU series exported: $n patches and a cover letter in $dest"
exit $status

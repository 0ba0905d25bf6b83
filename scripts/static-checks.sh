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
#  - the series builds W=1 clean with CONFIG_IRQ_MODERATION off,
#    CONFIG_FAULT_INJECTION and CONFIG_FTRACE off, or CONFIG_DEBUG_FS off.
# Needs out/series (make series) and a configured test kernel (make kernel);
# BASE=6.12: the backport's export, out/series-6.12, without the last two.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

lock_tree
series=$SERIES_OUT
log=$OUT/check/static$([ -z "$BASE_TAG" ] || echo "-$BASE")
mkdir -p "$log"
# mainline: one folder per tree's series (N-NAME), in the order they apply
patches=$(find "$series" -name '[0-9][0-9][0-9][0-9]-*.patch' ! -name '0000-cover-letter.patch' |
	sort -V)

# checkpatch_one PATCH: checkpatch's verdict in $log/NAME.checkpatch.rc
checkpatch_one() {
	# "does MAINTAINERS need updating?" for every patch that adds a file
	# and leaves MAINTAINERS alone, even when the file falls under an
	# entry's existing F: pattern (drivers/nvme/host/, kernel/irq/); the
	# series adds F: lines where it does not, no entry of its own
	# (the cover letters show get_maintainer.pl's output)
	local p=$1 name key rc ignore=(--ignore FILE_PATH_CHANGES)

	name=${p#"$series"/}; name=${name//\//_}
	# a backport names its upstream commit, which this tree does not have
	grep -qE '^commit [0-9a-f]{40} upstream\.$' "$p" && ignore+=(--ignore UNKNOWN_COMMIT_ID)
	# the verdict of an unchanged patch by an unchanged checkpatch is
	# kept: the patch without its first line (the commit's id) and its
	# message ids (format-patch puts the time in them), the script, its
	# word lists and the options
	key=$( { sed -E '1d; /^(Message-Id|In-Reply-To|References): </Id' "$p"
		echo "${ignore[*]}"; cat "$SRC/scripts/checkpatch.pl" \
		"$SRC/scripts/spelling.txt" "$SRC/scripts/const_structs.checkpatch"; } |
		sha256sum | cut -c 1-32)
	if [ -f "$CHECKPATCH_CACHE/$key.rc" ]; then
		cp "$CHECKPATCH_CACHE/$key.out" "$log/$name.checkpatch"
		cp "$CHECKPATCH_CACHE/$key.rc" "$log/$name.checkpatch.rc"
		return
	fi
	(cd "$SRC" && PATH=/usr/bin:$PATH perl scripts/checkpatch.pl --strict --quiet "${ignore[@]}" "$p") \
		> "$log/$name.checkpatch" 2>&1
	rc=$?
	echo $rc > "$log/$name.checkpatch.rc"
	# a verdict (0 clean, 1 findings) is kept; a failure to run is not
	[ $rc -le 1 ] && mkdir -p "$CHECKPATCH_CACHE" 2> /dev/null &&
		cp "$log/$name.checkpatch" "$CHECKPATCH_CACHE/$key.out.$$" &&
		mv "$CHECKPATCH_CACHE/$key.out.$$" "$CHECKPATCH_CACHE/$key.out" &&
		cp "$log/$name.checkpatch.rc" "$CHECKPATCH_CACHE/$key.rc.$$" &&
		mv "$CHECKPATCH_CACHE/$key.rc.$$" "$CHECKPATCH_CACHE/$key.rc"
}
# one checkpatch per core (it is single-threaded perl), verdicts in order
export -f checkpatch_one
export SRC log series CHECKPATCH_CACHE
printf '%s\n' $patches | xargs -P "$(nproc)" -I{} bash -c 'checkpatch_one "$1"' _ {}
for p in $patches; do
	name=${p#"$series"/}; name=${name//\//_}
	if [ "$(cat "$log/$name.checkpatch.rc" 2> /dev/null)" = 0 ]; then
		echo "pass static$BASE_TAG: checkpatch --strict ${p#"$series"/}"
	else
		echo "fail static$BASE_TAG: checkpatch --strict ${p#"$series"/}"
		sed 's/^/    /' "$log/$name.checkpatch" | head -30 >&2
	fi
done

# git am needs a work tree, not the whole of one: a sparse checkout of the
# folders the series touches (git am refuses a patch that reaches outside
# it, so a path missing from the list fails the check, never passes it)
am=$BASE_BUILD/am-check
am_dirs=$(sed -nE 's#^(\+\+\+ b|--- a)/(.*)/[^/]*$#\2#p' $patches | sort -u)
if [ ! -d "$am" ]; then
	git -C "$SRC" worktree add -q --no-checkout --detach "$am" base > /dev/null 2>&1
fi
git -C "$am" am --abort > /dev/null 2>&1
git -C "$am" sparse-checkout set --cone $am_dirs
# am_on_base PATCH...: apply in order on the pristine base; the first that
# fails is named, and nothing after it is applied
am_on_base() {
	local p
	git -C "$am" am --abort > /dev/null 2>&1
	git -C "$am" checkout -q -f --detach base && git -C "$am" clean -q -fdx
	for p; do
		if ! git -C "$am" -c user.name=check -c user.email=check@localhost am -q "$p" \
			> "$log/am.log" 2>&1; then
			AM_FAILED=${p#"$series"/}
			sed 's/^/    /' "$log/am.log" >&2
			git -C "$am" am --abort > /dev/null 2>&1
			return 1
		fi
	done
}
# every series on the pristine base, after the one it needs (patches/trees)
if [ -z "$BASE_TAG" ]; then
	while read -r name range needs tree; do
		case "$name" in ''|'#'*) continue ;; esac
		d=$(ls -d "$series"/[0-9]*-"$name")
		pre=()
		for need in ${needs//,/ }; do
			[ "$need" = - ] ||
				pre+=($(ls "$series"/[0-9]*-"$need"/[0-9][0-9][0-9][0-9]-*.patch | grep -v 0000-cover-letter))
		done
		if am_on_base "${pre[@]}" $(ls "$d"/[0-9][0-9][0-9][0-9]-*.patch | grep -v 0000-cover-letter); then
			echo "pass static: git am of the $name series on the pristine base${pre:+ after ${needs//,/ and }}"
		else
			echo "fail static: git am of the $name series on the pristine base: $AM_FAILED does not apply"
		fi
	done < "$TOP/patches/trees"
fi
# and all of it, in order: the tree of build/linux
if am_on_base $patches; then
	echo "pass static$BASE_TAG: git am of every patch of $(basename "$series"), in order"
else
	echo "fail static$BASE_TAG: git am of $(basename "$series"): $AM_FAILED does not apply"
fi
if [ "$(git -C "$am" rev-parse 'HEAD^{tree}')" = "$(git -C "$SRC" rev-parse 'series^{tree}')" ]; then
	echo "pass static$BASE_TAG: git am of $(basename "$series") gives the tree of build/linux"
else
	echo "fail static$BASE_TAG: git am of $(basename "$series") differs from build/linux"
fi

# sparse and W=1: what is new against the stock files, line numbers ignored.
# One make per tree for every touched object (kbuild's start-up, a second
# or two, is most of the time a single object takes); the test kernel's
# make variables, so that its objects are not rebuilt for other flags.
test_out=$(kbuild_dir test)
stock_out=$(kbuild_dir sparse-stock)
if [ ! -f "$test_out/.config" ]; then
	echo "fail static$BASE_TAG: sparse: no configured test kernel (make kernel)"
	exit 0
fi
# line numbers differ between the two versions of a file; the warnings must not
normalise() {
	grep -E 'warning:|error:' | sed -E "s#$SRC/##" |
		sed -E 's/:[0-9]+:[0-9]+:/:/; s/:[0-9]+:/:/' | sort -u
}
files=() new_objs=() old_objs=()
# (kernel code: tools/ is user space, built with -Werror by lib.sh)
for f in $(git -C "$SRC" diff --name-only --diff-filter=AM base series -- '*.c' ':!tools/'); do
	if [ ! -f "$test_out/${f%.c}.o" ]; then
		echo "skip static$BASE_TAG: sparse W=1 $f (not built in the test configuration)"
		continue
	fi
	files+=("$f")
	new_objs+=("${f%.c}.o")
	git -C "$SRC" cat-file -e "base:$f" 2> /dev/null && old_objs+=("${f%.c}.o")
done
# the kernels' compiler (a CC of its own would rebuild the objects, and
# without ccache): only sparse runs on every object each time
export CCACHE_BASEDIR=$BASE_BUILD CCACHE_NOHASHDIR=1 CCACHE_COMPILERCHECK=content
kcc=(CC="$KCC" HOSTCC="ccache gcc")
# the pinned sparse (lib.sh); kbuild drops C=2 with a warning, and checks
# nothing, when the checker cannot read the tree's headers.  Its short
# output (V=0, whatever make check was given) names each file checked.
if [ ! -x "$SPARSE" ]; then
	echo "fail static$BASE_TAG: sparse: no $SPARSE (make deps)"
fi
MAKEFLAGS= make -k -C "$SRC" O="$test_out" ARCH=x86_64 "${kcc[@]}" C=2 CHECK="$SPARSE" V=0 W=1 \
	$(test_kflags) "${new_objs[@]}" > "$log/sparse-new.log" 2>&1
normalise < "$log/sparse-new.log" > "$log/sparse-new"
if grep -q 'specified, but .* is not available' "$log/sparse-new.log"; then
	echo "fail static$BASE_TAG: sparse: kbuild did not run $SPARSE (see $log/sparse-new.log)"
fi
unchecked=()
for f in "${files[@]}"; do
	grep -qE "^  CHECK +(.*/)?$f\$" "$log/sparse-new.log" || unchecked+=("$f")
done
# the stock versions: build/linux at base (lib.sh: at_base), the test
# kernel's configuration.  What they report depends only on the base, the
# configuration, the checker and the objects: kept in $SPARSE_CACHE/old/
# under a hash of those, as checkpatch's verdicts are.
: > "$log/sparse-old"
# (the key leaves out the make command and normalise(): a change to
# either must empty $SPARSE_CACHE/old)
old_key=$( { git -C "$SRC" rev-parse 'base^{tree}'; cat "$test_out/.config"
	     sha256sum < "$SPARSE"; echo "${old_objs[*]} $(test_kflags)"; } |
	   sha256sum | cut -c 1-32)
old_cached=$SPARSE_CACHE/old/$old_key
if [ ${#old_objs[@]} -gt 0 ] && [ -f "$old_cached" ]; then
	cp "$old_cached" "$log/sparse-old"
elif [ ${#old_objs[@]} -gt 0 ] && ! at_base 2> "$log/at-base.err"; then
	echo "fail static$BASE_TAG: sparse: build/linux could not be checked out at base: $(< "$log/at-base.err")"
elif [ ${#old_objs[@]} -gt 0 ]; then
	# a copy of the test kernel's folder: configured and prepared (host
	# tools, objtool), and the stock files' objects are built again
	# because the checkout at base made them newer
	if ! cmp -s "$test_out/.config" "$stock_out/.config.src" 2>/dev/null; then
		seed_kbuild "$test_out" "$stock_out"
		cp "$test_out/.config" "$stock_out/.config.src"
	fi
	MAKEFLAGS= make -k -C "$SRC" O="$stock_out" ARCH=x86_64 "${kcc[@]}" C=2 CHECK="$SPARSE" V=0 W=1 $(test_kflags) \
		"${old_objs[@]}" > "$log/sparse-old.log" 2>&1
	old_rc=$?
	normalise < "$log/sparse-old.log" > "$log/sparse-old"
	back_from_base ||
		echo "fail static$BASE_TAG: build/linux could not be checked out back at the series"
	# only a run that built and checked every object is kept
	old_all=true
	for o in "${old_objs[@]}"; do
		grep -qE "^  CHECK +(.*/)?${o%.o}\.c\$" "$log/sparse-old.log" || old_all=false
	done
	if [ $old_rc -eq 0 ] && $old_all; then
		mkdir -p "$SPARSE_CACHE/old" 2> /dev/null &&
			cp "$log/sparse-old" "$old_cached.$$" && mv "$old_cached.$$" "$old_cached"
	else
		echo "fail static$BASE_TAG: sparse: the stock files were not all built and checked (see $log/sparse-old.log)"
	fi
fi
comm -23 "$log/sparse-new" "$log/sparse-old" > "$log/sparse-added"
for f in "${files[@]}"; do
	if [[ " ${unchecked[*]} " == *" $f "* ]]; then
		echo "fail static$BASE_TAG: sparse W=1 $f: sparse did not check it (see $log/sparse-new.log)"
	elif grep -q "^$f:" "$log/sparse-added"; then
		echo "fail static$BASE_TAG: sparse W=1 $f"
		grep "^$f:" "$log/sparse-added" | sed 's/^/    /' >&2
	else
		echo "pass static$BASE_TAG: sparse W=1 $f"
	fi
done
# what the touched files' builds report new in the headers they include
hdr=$(grep -vE "^($(IFS='|'; echo "${files[*]}")):" "$log/sparse-added")
if [ -z "$hdr" ]; then
	echo "pass static$BASE_TAG: sparse W=1: nothing new in the headers the touched files include"
else
	echo "fail static$BASE_TAG: sparse W=1: new in headers"
	echo "$hdr" | sed 's/^/    /' >&2
fi

# on mainline only: the backport's new files are mainline's with a compat
# delta the test kernel builds, and the matcher does not depend on a base
[ -z "$BASE_TAG" ] || exit 0

# the console matcher of scripts/vm, on real report headers
bash "$TOP/scripts/splat/check.sh"

# the series in configurations the test kernels do not cover
bash "$TOP/scripts/config-matrix.sh"

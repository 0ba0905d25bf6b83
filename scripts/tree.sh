#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Materialise the kernel tree under build/linux: the pristine 6.12 base as the
# first commit (tag "base"), then one commit per entry of patches/series.
#
# patches/series lists one patch a line, in order; indented lines that follow
# name the new files (or directories) of the overlay that belong to it.  Each
# patch file is a mail: From:, Subject:, body with Signed-off-by, then the
# hunks against upstream files and against files an earlier patch added
# (possibly none).  The overlay holds the last version of each added file.
#
# Commits are built in a scratch index, so re-running only rewrites the files
# whose content changed and the kernel build stays incremental.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

series=$TOP/patches/series
[ -f "$series" ] || die "no $series"

check_base() {
	local mk=$1/Makefile v p
	v=$(sed -n 's/^VERSION = //p' "$mk")
	p=$(sed -n 's/^PATCHLEVEL = //p' "$mk")
	[ "$v.$p" = 6.12 ] ||
		die "$1 is Linux $v.$p, the series is for 6.12.x ($TARBALL)"
}

# commit_base DIR: the pristine base in DIR (a new folder), committed as the
# first commit, tagged "base"; the same tarball always gives the same commit
commit_base() {
	local dir=$1

	note "extracting $TARBALL"
	mkdir -p "$dir"
	tar -C "$dir" --strip-components=1 -xf "$TARBALL"
	check_base "$dir"
	note "committing the pristine base"
	git -C "$dir" init -q -b pristine
	git -C "$dir" add -f -A
	GIT_AUTHOR_DATE="@1 +0000" GIT_COMMITTER_DATE="@1 +0000" \
	git -C "$dir" -c user.name=base -c user.email=base@localhost \
		commit -q -m "Linux $(make -s -C "$dir" kernelversion 2>/dev/null) (pristine base)"
	git -C "$dir" tag base
}

# tarball_key: what names the base: the tarball's SHA-256 (its first 16
# digits)
tarball_key() {
	[ -f "$TARBALL" ] || die "no kernel tarball $TARBALL: run 'make deps' (downloads $LINUX_PKG $LINUX_PKG_VERSION)"
	sha256sum "$TARBALL" | cut -c1-16
}

# The committed base is kept in $BASE_CACHE, one repository per tarball
# (keyed by its hash), so that another clone on the machine clones it
# instead of extracting and hashing 1.4 GB again.  Without a writable cache
# (it is root's: make deps, as root, creates it) the tree is extracted in
# place.  build/linux records the key of the tarball it was made from.
extract_base() {
	local key cached

	key=$(tarball_key)
	rm -rf "$SRC.tmp"
	cached=$BASE_CACHE/linux-$key.git
	if mkdir -p "$BASE_CACHE" 2> /dev/null && [ -w "$BASE_CACHE" ]; then
		exec 8> "$BASE_CACHE/.lock"
		flock 8
	else
		note "$BASE_CACHE is not writable: extracting the base in place"
	fi
	if git -C "$cached" rev-parse -q --verify base > /dev/null 2>&1; then
		note "cloning the pristine base from $cached"
		git clone -q -b pristine "$cached" "$SRC.tmp"
		git -C "$SRC.tmp" remote remove origin
		git -C "$SRC.tmp" tag -f base "$(git -C "$cached" rev-parse base)" > /dev/null
	else
		commit_base "$SRC.tmp"
		if [ -w "$BASE_CACHE" ]; then
			rm -rf "$cached" "$cached.tmp"
			git clone -q --bare "$SRC.tmp" "$cached.tmp" && mv "$cached.tmp" "$cached"
		fi
	fi
	exec 8>&-
	git -C "$SRC.tmp" config nvme-irq.tarball "$key"
	mv "$SRC.tmp" "$SRC"
}

# same_base: build/linux was made from this tarball (a tree of an earlier
# clone made from another one, the host's linux-source package before the
# base was pinned, is not updated in place: its builds would be of the
# wrong base)
same_base() {
	local had

	had=$(git -C "$SRC" config nvme-irq.tarball || true)
	[ -z "$had" ] || [ "$had" = "$(tarball_key)" ] ||
		die "build/linux was made from another tarball than $TARBALL: remove build/ and run make again"
	[ -n "$had" ] || [ -n "${LINUX_TARBALL:-}" ] ||
		[ "$(make -s -C "$SRC" kernelversion 2> /dev/null)" = "${LINUX_PKG_VERSION%%-*}" ] ||
		die "build/linux is not Linux ${LINUX_PKG_VERSION%%-*}: remove build/ and run make again"
}

# Read patches/series into parallel arrays: PATCHES[i], FILES[i].
parse_series() {
	PATCHES=() FILES=()
	local line i=-1
	while IFS= read -r line || [ -n "$line" ]; do
		case "$line" in
		''|'#'*) continue ;;
		[[:space:]]*)
			[ $i -ge 0 ] || die "series: file list before the first patch"
			line=${line//[[:space:]]/}
			[ -n "$line" ] || continue
			[ -e "$TOP/$line" ] || die "series: ${PATCHES[$i]} names $line, which does not exist"
			FILES[$i]+=" $line" ;;
		*)
			i=$((i + 1))
			PATCHES[$i]=$line FILES[$i]="" ;;
		esac
	done < "$series"
}

# add_overlay_file PATH I: the overlay holds the series' last version of
# PATH; patch I adds the version before the hunks that later patches carry
# for it, which are undone here from the last patch back.
add_overlay_file() {
	local path=$1 i=$2 mode=100644 blob j work
	[ -x "$TOP/$path" ] && mode=100755
	work=$tmp/undo
	rm -rf "$work"
	mkdir -p "$work/$(dirname "$path")"
	cp "$TOP/$path" "$work/$path"
	for ((j = ${#PATCHES[@]} - 1; j > i; j--)); do
		grep -q "^+++ b/$path\$" "$tmp/diff.$j" || continue
		(cd "$work" && git apply -R --include="$path" "$tmp/diff.$j") ||
			die "patch ${PATCHES[$j]}'s hunks for $path do not undo on the overlay's version"
	done
	blob=$(git hash-object -w "$work/$path")
	git update-index --add --cacheinfo "$mode,$blob,$path"
}

build_commits() {
	local i p f msg info parent tree
	local tmp
	tmp=$(mktemp -d)
	# every patch's hunks first: a later one may change an overlay file
	for i in "${!PATCHES[@]}"; do
		p=$TOP/patches/${PATCHES[$i]}
		[ -f "$p" ] || die "series names ${PATCHES[$i]}, which is not in patches/"
		git mailinfo "$tmp/msg" "$tmp/diff.$i" < "$p" > /dev/null
	done
	export GIT_INDEX_FILE=$SRC/.git/series-index
	git read-tree base
	parent=$(git rev-parse base)
	for i in "${!PATCHES[@]}"; do
		p=$TOP/patches/${PATCHES[$i]}
		[ -f "$p" ] || die "series names ${PATCHES[$i]}, which is not in patches/"
		git mailinfo "$tmp/msg" "$tmp/diff" < "$p" > "$tmp/info"
		if [ -s "$tmp/diff" ] &&
		   ! git apply --cached --whitespace=error-all "$tmp/diff" 2> "$tmp/err"; then
			sed 's/^/    /' "$tmp/err" >&2
			die "patch ${PATCHES[$i]} does not apply (hunk and file above)"
		fi
		for f in ${FILES[$i]}; do
			if [ -d "$TOP/$f" ]; then
				while IFS= read -r g; do
					add_overlay_file "${g#"$TOP"/}" "$i"
				done < <(find "$TOP/$f" -type f | sort)
			else
				add_overlay_file "$f" "$i"
			fi
		done
		tree=$(git write-tree)
		msg=$(sed -n 's/^Subject: //p' "$tmp/info")
		[ -n "$msg" ] || die "${PATCHES[$i]} has no Subject:"
		info=$(sed -n 's/^Author: //p' "$tmp/info")
		{ echo "$msg"; echo; cat "$tmp/msg"; } > "$tmp/commit"
		parent=$(GIT_AUTHOR_NAME="${info:-${SERIES_AUTHOR% <*}}" \
			GIT_AUTHOR_EMAIL="$(sed -n 's/^Email: //p' "$tmp/info")" \
			GIT_COMMITTER_NAME="${SERIES_AUTHOR% <*}" \
			GIT_COMMITTER_EMAIL="$(echo "$SERIES_AUTHOR" | sed 's/.*<\(.*\)>/\1/')" \
			GIT_AUTHOR_DATE="@$((1767225600 + i * 60)) +0000" \
			GIT_COMMITTER_DATE="@$((1767225600 + i * 60)) +0000" \
			git commit-tree "$tree" -p "$parent" -F "$tmp/commit")
		echo "  $(git log -1 --format='%h %s' "$parent")" >&2
	done
	unset GIT_INDEX_FILE
	rm -rf "$tmp" "$SRC/.git/series-index"
	TIP=$parent
}

lock_tree
if [ -d "$SRC/.git" ]; then
	same_base
else
	extract_base
fi
recover_from_base || die "cannot check build/linux out again"
# the stock kernel's worktree of earlier versions (now built in build/linux)
for old in "$BUILD/linux-stock" "$BUILD/stock/linux"; do
	[ -d "$old" ] && git -C "$SRC" worktree remove --force "$old" 2> /dev/null
done
git -C "$SRC" worktree prune
check_base "$SRC"
cd "$SRC"

if [ "$(git symbolic-ref -q HEAD)" = refs/heads/series ] &&
   [ -n "$(git status --porcelain --untracked-files=no)" ] && [ -z "${FORCE:-}" ]; then
	git status --short --untracked-files=no | head >&2
	die "build/linux has local edits; save them into patches/ or re-run with FORCE=1 to discard"
fi

parse_series
note "applying ${#PATCHES[@]} patches from patches/series"
build_commits
git update-ref refs/heads/series "$TIP"
git update-ref refs/overlay/applied "$TIP"	# what make refresh compares against
git symbolic-ref HEAD refs/heads/series
git reset -q --hard
note "build/linux is at $(git log -1 --format='%h %s')"

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Materialise the kernel tree of the base (lib.sh: BASE; build/linux for
# mainline, build/6.12/linux for the backport): the pristine base as the
# first commit (tag "base"), then one commit per entry of patches/series.
#
# patches/series lists one patch a line, in order; indented lines that follow
# name the new files (or directories) of the overlay that belong to it.  Each
# patch file is a mail: From:, Subject:, body with Signed-off-by, then the
# hunks against upstream files and against files an earlier patch added
# (possibly none).  The overlay holds the last version of each added file.
#
# The 6.12 backport (patches/6.12/) is the same series carried the way
# stable backports are: patches/6.12/series gives its order (prerequisite
# backports included), and a file of a patch's name in patches/6.12/ is
# either a patch of its own or a "[ 6.12: ... ]" note with the hunks that
# differ: on upstream files they replace mainline's, on the new files the
# patch adds they are its compat delta (scripts/base_patch.py).  The new
# files are mainline's.
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
	[ "$v.$p" = "$BASE" ] ||
		die "$1 is Linux $v.$p, BASE=$BASE wants $BASE.x ($TARBALL)"
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
	EXTRACTED=1
}

# same_base: build/linux was made from this tarball (a tree of an earlier
# clone made from another one, the host's linux-source package before the
# base was pinned, is not updated in place: its builds would be of the
# wrong base)
same_base() {
	local had

	had=$(git -C "$SRC" config nvme-irq.tarball || true)
	[ -z "$had" ] || [ "$had" = "$(tarball_key)" ] ||
		die "${SRC#"$TOP"/} was made from another tarball than $TARBALL (a 6.12 tree of before the mainline port? move it to build/6.12/linux, or remove it) and run make again"
	[ -n "$had" ] || [ -n "${LINUX_TARBALL:-}" ] ||
		[ "$(make -s -C "$SRC" kernelversion 2> /dev/null)" = "${LINUX_PKG_VERSION%%-*}" ] ||
		die "${SRC#"$TOP"/} is not Linux ${LINUX_PKG_VERSION%%-*} (a 6.12 tree of before the mainline port? move it to build/6.12/linux, or remove it) and run make again"
}

# Read the series into parallel arrays: PATCHES[i] (mainline's patch file),
# FILES[i] (the new files it adds), BASEFILE[i] (the base's file of that
# name, or "").
parse_series() {
	PATCHES=() FILES=() BASEFILE=()
	local line i=-1 name
	local -A files_of=()
	while IFS= read -r line || [ -n "$line" ]; do
		case "$line" in
		''|'#'*) continue ;;
		[[:space:]]*)
			[ -n "${name:-}" ] || die "series: file list before the first patch"
			line=${line//[[:space:]]/}
			[ -n "$line" ] || continue
			[ -e "$TOP/$line" ] || die "series: $name names $line, which does not exist"
			files_of[$name]+=" $line" ;;
		*)
			name=$line files_of[$name]="" ;;
		esac
	done < "$series"
	while IFS= read -r line || [ -n "$line" ]; do
		case "$line" in
		''|'#'*|[[:space:]]*) continue ;;
		esac
		i=$((i + 1))
		PATCHES[$i]=$TOP/patches/$line BASEFILE[$i]=""
		FILES[$i]=${files_of[$line]:-}
		[ -n "$BASE_PATCHES" ] && [ -f "$BASE_PATCHES/$line" ] &&
			BASEFILE[$i]=$BASE_PATCHES/$line
	done < "${BASE_PATCHES:-$TOP/patches}/series"
	[ $i -ge 0 ] || die "no patch in ${BASE_PATCHES:-$TOP/patches}/series"
	[ -n "$BASE_PATCHES" ] || return 0
	# the backport carries every mainline patch, and every file of its
	# folder is a patch of its series
	local named=" ${PATCHES[*]##*/} " f
	for f in "${!files_of[@]}"; do
		[[ $named == *" $f "* ]] || die "$BASE_PATCHES/series lacks mainline's $f"
	done
	for f in "$BASE_PATCHES"/*; do
		case "${f##*/}" in series|cover-letter) continue ;; esac
		[[ $named == *" ${f##*/} "* ]] || die "${f#"$TOP"/} is not in $BASE_PATCHES/series"
	done
}

# add_overlay_file PATH I: the overlay holds the series' last version of
# PATH; patch I adds the version before the hunks that later patches carry
# for it, which are undone here from the last patch back.  Prints the
# file's line for git update-index --index-info (one update of the
# kernel-sized index per patch, not one per file).
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
			die "patch ${PATCHES[$j]##*/}'s hunks for $path do not undo on the overlay's version"
	done
	blob=$(git hash-object -w "$work/$path")
	printf '%s %s\t%s\n' "$mode" "$blob" "$path"
}

build_commits() {
	local i p f msg info parent tree
	local tmp
	tmp=$(mktemp -d)
	# every patch's hunks first: a later one may change an overlay file
	for i in "${!PATCHES[@]}"; do
		p=${PATCHES[$i]} COMPAT[$i]=""
		if [ -n "${BASEFILE[$i]}" ]; then
			for f in ${FILES[$i]}; do
				if [ -d "$TOP/$f" ]; then
					(cd "$TOP" && find "$f" -type f)
				else
					echo "$f"
				fi
			done > "$tmp/added.$i"
			[ -f "$p" ] || p=-
			"$TOP/scripts/base_patch.py" "$p" "${BASEFILE[$i]}" "$tmp/added.$i" \
				"$tmp/patch.$i" "$tmp/compat.$i" ||
				die "cannot combine ${BASEFILE[$i]#"$TOP"/} with mainline's patch"
			[ -s "$tmp/compat.$i" ] && COMPAT[$i]=$tmp/compat.$i
			# the overlay is mainline's: its hunks undo to the
			# version a patch adds (a patch of the base's own, its)
			[ "$p" = - ] && p=$tmp/patch.$i
			PATCHES[$i]=$tmp/patch.$i
		fi
		[ -f "$p" ] || die "the series names ${p##*/}, which is not in patches/"
		git mailinfo "$tmp/msg" "$tmp/diff.$i" < "$p" > /dev/null
	done
	export GIT_INDEX_FILE=$SRC/.git/series-index
	git read-tree base
	parent=$(git rev-parse base)
	for i in "${!PATCHES[@]}"; do
		p=${PATCHES[$i]}
		git mailinfo "$tmp/msg" "$tmp/diff" < "$p" > "$tmp/info"
		if [ -s "$tmp/diff" ] &&
		   ! git apply --cached --whitespace=error-all "$tmp/diff" 2> "$tmp/err"; then
			sed 's/^/    /' "$tmp/err" >&2
			die "patch ${BASEFILE[$i]:-$p} does not apply (hunk and file above)"
		fi
		for f in ${FILES[$i]}; do
			if [ -d "$TOP/$f" ]; then
				while IFS= read -r g; do
					add_overlay_file "${g#"$TOP"/}" "$i"
				done < <(find "$TOP/$f" -type f | sort)
			else
				add_overlay_file "$f" "$i"
			fi
		done > "$tmp/index-info"
		git update-index --add --index-info < "$tmp/index-info"
		if [ -n "${COMPAT[$i]}" ]; then
			if ! git apply --cached --whitespace=error-all "${COMPAT[$i]}" 2> "$tmp/err"; then
				sed 's/^/    /' "$tmp/err" >&2
				die "the compat delta of ${BASEFILE[$i]#"$TOP"/} does not apply (hunk and file above)"
			fi
		fi
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
EXTRACTED=
if [ -d "$SRC/.git" ]; then
	same_base
else
	extract_base
fi
recover_from_base || die "cannot check build/linux out again"
# the exported patches' index lines the same in every clone (git's own
# length depends on how many objects are packed), so that the verdicts and
# answers kept under their hash (series.sh, static-checks.sh) serve every
# clone; and no automatic gc, which would pack the tree's objects in the
# middle of a build.  Set on every run: a tree made before these settings
# keeps git's own.
git -C "$SRC" config core.abbrev 9
git -C "$SRC" config gc.auto 0
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
# what the tree is made of: the patches, the base's own, the overlay's
# files and their modes (add_overlay_file commits the executable bit), and
# who the commits are by.  A tree made of the same, checked out unchanged,
# is not made again (make check exports the series right after
# materialising it).
key=$( { printf '%s\n' "$BASE" "$SERIES_AUTHOR" "${PATCHES[@]}" "${BASEFILE[@]}"
	cat "$TOP/scripts/tree.sh" "$TOP/scripts/base_patch.py" \
		"${BASE_PATCHES:-$TOP/patches}/series" "$series" "${PATCHES[@]}" ${BASEFILE[@]}
	cd "$TOP" && find ${FILES[@]} -type f -printf '%m %p\n' | sort
	find ${FILES[@]} -type f | sort | xargs cat; } | sha256sum | cut -c 1-32)
if [ "$(git config nvme-irq.inputs || true)" = "$key" ] &&
   [ "$(git symbolic-ref -q HEAD)" = refs/heads/series ] &&
   [ "$(git rev-parse -q --verify series)" = "$(git rev-parse -q --verify refs/overlay/applied)" ] &&
   [ -z "$(git status --porcelain --untracked-files=no)" ]; then
	note "${SRC#"$TOP"/} is at $(git log -1 --format='%h %s') (up to date)"
	exit 0
fi
note "applying ${#PATCHES[@]} patches from ${BASE_PATCHES:-$TOP/patches}/series"
build_commits
git update-ref refs/heads/series "$TIP"
git update-ref refs/overlay/applied "$TIP"	# what make refresh compares against
git symbolic-ref HEAD refs/heads/series
git reset -q --hard
git config nvme-irq.inputs "$key"
# a tree made whole here: when its files were written (kbuild-cache.py
# gives a cached build folder's objects back only to files not written
# since)
[ -z "${EXTRACTED:-}" ] || touch "$SRC/.git/nvme-irq-made"
note "${SRC#"$TOP"/} is at $(git log -1 --format='%h %s')"

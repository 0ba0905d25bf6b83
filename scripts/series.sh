#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Export the series from build/linux as git format-patch files with cover
# letters.  Mainline: one series per maintainer tree (patches/trees), each
# in out/series/N-NAME/ with the cover letter patches/cover-letter-NAME,
# To: and Cc: from the tree's scripts/get_maintainer.pl, and base-commit:
# (the pristine tarball's commit; a series that needs another one lists
# that one's patches as prerequisites).  BASE=6.12: the backport as one
# series for distribution kernels, out/series-6.12/, cover letter
# patches/6.12/cover-letter.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

bash "$TOP/scripts/tree.sh"
# the cover letters' From: is the committer
export GIT_COMMITTER_NAME="${SERIES_AUTHOR% <*}"
GIT_COMMITTER_EMAIL=$(echo "$SERIES_AUTHOR" | sed 's/.*<\(.*\)>/\1/')
export GIT_COMMITTER_EMAIL
dest=$SERIES_OUT
rm -rf "$dest"
mkdir -p "$dest"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# fill_cover COVER BLURB-FILE NOTES-FILE: subject and text of the cover letter
fill_cover() {
	python3 - "$@" <<'PY'
import sys
path, blurb, notes = sys.argv[1:4]
text = open(path).read()
lines = open(blurb).read().split('\n', 1)
body = lines[1].strip('\n') + '\n\n' + open(notes).read().strip('\n')
text = text.replace('*** SUBJECT HERE ***', lines[0])
text = text.replace('*** BLURB HERE ***', body)
open(path, 'w').write(text)
PY
}

# base_note FILES: the base as the cover letters give it, and what of
# Debian's patches touches FILES (patches/debian-BASE: a "files:" line, then
# the text)
base_note() {
	local deb=$TOP/patches/debian-$BASE f hit=
	echo "Based on Linux ${LINUX_PKG_VERSION%%-*} as Debian's $LINUX_PKG ($LINUX_PKG_VERSION)"
	echo "ships it: base-commit below is that tarball committed as it is."
	[ -f "$deb" ] || return 0
	for f in $(sed -n 's/^files: //p' "$deb"); do
		grep -qxF "$f" <<< "$1" && hit=1
	done
	if [ -n "$hit" ]; then
		sed '/^files: /d' "$deb"
	else
		echo "None of Debian's patches touches a file this series touches."
	fi
}

if [ -n "$BASE_TAG" ]; then
	git -C "$SRC" format-patch -q --cover-letter --thread=shallow --base=base \
		--from="$SERIES_AUTHOR" -o "$dest" base..series
	base_note "$(git -C "$SRC" diff --name-only base series)" > "$tmp/notes"
	fill_cover "$dest/0000-cover-letter.patch" "$BASE_PATCHES/cover-letter" "$tmp/notes"
	note "series exported: $(ls "$dest" | wc -l) files in $dest"
	exit 0
fi

# replay PARENT COMMIT...: the commits' changes on PARENT, in a scratch
# index (no work tree; read once: each commit's tree is the index as the
# one before left it); prints the new tip
replay() {
	local tip=$1 c
	shift
	GIT_INDEX_FILE=$tmp/index git -C "$SRC" read-tree "$tip"
	for c; do
		git -C "$SRC" diff --binary "$c^" "$c" |
			GIT_INDEX_FILE=$tmp/index git -C "$SRC" apply --cached ||
			die "$(git -C "$SRC" log -1 --format=%s "$c") does not apply without the series before it"
		tip=$(GIT_INDEX_FILE=$tmp/index git -C "$SRC" write-tree |
			xargs -I{} env GIT_AUTHOR_NAME="$(git -C "$SRC" log -1 --format=%an "$c")" \
			GIT_AUTHOR_EMAIL="$(git -C "$SRC" log -1 --format=%ae "$c")" \
			GIT_AUTHOR_DATE="$(git -C "$SRC" log -1 --format=%ad "$c")" \
			GIT_COMMITTER_DATE="$(git -C "$SRC" log -1 --format=%cd "$c")" \
			git -C "$SRC" commit-tree {} -p "$tip" -F <(git -C "$SRC" log -1 --format=%B "$c"))
	done
	echo "$tip"
}

mapfile -t commits < <(git -C "$SRC" rev-list --reverse base..series)
declare -A from_of=() tip_of=() range_of=() needs_of=() tree_of=() code_of=()
names=() covered=()
# gm PATCH OPTION...: get_maintainer.pl on a patch file, with its role
# after each address ("Name <a@b> (maintainer:SECTION)").  Its answer
# depends only on the patch, the options, the base (the folders its F:
# patterns find), MAINTAINERS, .mailmap, its configuration and ignore
# files and the script: kept under a hash of those, as checkpatch's
# verdicts are (static-checks.sh)
gm() {
	local f=$1 key c
	shift
	# (its configuration and ignore files: the first found in the tree,
	# $HOME, the tree's .scripts; each named by where it is, not by the
	# clone's path, then its content)
	key=$( { cat "$f"; echo "$*"; git -C "$SRC" rev-parse 'base^{tree}'
		cat "$SRC/MAINTAINERS" "$SRC/scripts/get_maintainer.pl"
		for c in "$SRC/.mailmap" {"$SRC","$HOME","$SRC/.scripts"}/.get_maintainer.{conf,ignore}; do
			if [ -e "$c" ]; then
				case $c in
				"$SRC"/*) echo "== tree/${c#"$SRC"/}" ;;
				*) echo "== home/${c##*/}" ;;
				esac
				cat "$c"
			fi
		done; } |
		sha256sum | cut -c 1-32)
	if [ -f "$GM_CACHE/$key" ]; then
		cat "$GM_CACHE/$key"
		return
	fi
	(cd "$SRC" && perl scripts/get_maintainer.pl --no-git --no-git-fallback \
		--no-tree "$@" "$f") > "$f.gm.$$" || return
	mkdir -p "$GM_CACHE" 2> /dev/null && cp "$f.gm.$$" "$GM_CACHE/$key.$$" &&
		mv "$GM_CACHE/$key.$$" "$GM_CACHE/$key"
	cat "$f.gm.$$"
	rm -f "$f.gm.$$"
}
export -f gm
export SRC GM_CACHE
# addresses FILE: the addresses of a gm output, roles dropped
addresses() {
	sed -E 's/ \((maintainer|reviewer|supporter|odd fixer|(open|moderated|subscriber) list)\b.*\)$//' "$1"
}
# each series replayed on the base and the series it needs
while read -r name range needs tree; do
	case "$name" in ''|'#'*) continue ;; esac
	names+=("$name")
	first=${range%-*} last=${range#*-}
	covered+=($(seq "$first" "$last"))
	[ "$last" -le ${#commits[@]} ] || die "patches/trees: $name names patch $last of ${#commits[@]}"
	from=base
	for need in ${needs//,/ }; do
		[ "$need" = - ] && continue
		[ -n "${range_of[$need]:-}" ] ||
			die "patches/trees: $name needs $need, which is not before it"
		r=${range_of[$need]}
		from=$(replay "$from" "${commits[@]:$((${r%-*} - 1)):$((${r#*-} - ${r%-*} + 1))}")
	done
	range_of[$name]=$range needs_of[$name]=$needs tree_of[$name]=$tree from_of[$name]=$from
	tip_of[$name]=$(replay "$from" "${commits[@]:$((first - 1)):$((last - first + 1))}")
	git -C "$SRC" update-ref "refs/heads/export/$name" "${tip_of[$name]}"
	git -C "$SRC" diff "$from" "${tip_of[$name]}" > "$tmp/$name.patch"
	# the code, without documentation and tests: whose maintainers are To:
	git -C "$SRC" diff "$from" "${tip_of[$name]}" -- . ':!Documentation' ':!tools' ':!include/trace' \
		> "$tmp/$name.code.patch"
done < "$TOP/patches/trees"
[ ${#names[@]} -gt 0 ] || die "patches/trees names no series"
# the trees take the whole series, each patch once
[ "$(echo "${covered[*]:-}" | tr ' ' '\n' | sort -n | paste -sd' ')" = "$(seq -s' ' 1 ${#commits[@]})" ] ||
	die "patches/trees does not take each of the ${#commits[@]} patches exactly once"

# get_maintainer.pl takes seconds on a large patch (its K: keyword scan):
# one run per patch file, on every core, each output read several times.
# The whole series' patch: everyone, as the cover letter shows it; the
# code's: maintainers and lists, no reviewers.
for name in "${names[@]}"; do
	printf '%s\n' "$tmp/$name.patch" "$tmp/$name.code.patch"
done | xargs -P "$(nproc)" -I{} bash -c \
	'case "$1" in *.code.patch) o=--no-r ;; *) o=--r ;; esac; gm "$1" --m $o --l > "$1.gm"' _ {} ||
	die "scripts/get_maintainer.pl failed"
n=0
for name in "${names[@]}"; do
	n=$((n + 1))
	from=${from_of[$name]} tip=${tip_of[$name]} needs=${needs_of[$name]}
	# To: the maintainers of the code; Cc: everyone else get_maintainer.pl
	# names for the series, and the maintainers and lists of the series it
	# needs and of those that need it
	to=$(grep -vE ' \((open|moderated|subscriber) list\b' "$tmp/$name.code.patch.gm" |
		addresses /dev/stdin | sort -u)
	cc=$(addresses "$tmp/$name.patch.gm")
	for other in "${names[@]}"; do
		[ "$other" != "$name" ] || continue
		if [[ ",$needs," == *",$other,"* ]] || [[ ",${needs_of[$other]}," == *",$name,"* ]]; then
			cc+=$'\n'$(addresses "$tmp/$other.code.patch.gm")
		fi
	done
	cc=$(echo "$cc" | grep -vxF -f <(echo "$to") | awk 'NF && !seen[$0]++')
	out=$dest/$n-$name
	git -C "$SRC" format-patch -q --cover-letter --thread=shallow --base=base \
		--from="$SERIES_AUTHOR" --to="$(echo "$to" | paste -sd, -)" \
		--cc="$(echo "$cc" | paste -sd, -)" -o "$out" "$from..$tip"
	# the prerequisites' ids as their exported files give them (format-patch
	# may diff them differently from git patch-id)
	if [ "$needs" != - ]; then
		for need in ${needs//,/ }; do
			ls "$dest"/[0-9]*-"$need"/[0-9][0-9][0-9][0-9]-*.patch | grep -v 0000-cover-letter
		done | while read -r f; do
			git patch-id --stable < "$f" | cut -d' ' -f1
		done > "$tmp/prereq"
		python3 - "$out/0000-cover-letter.patch" "$tmp/prereq" <<'PY'
import sys
path, ids = sys.argv[1], open(sys.argv[2]).read().split()
lines = open(path).read().split('\n')
at = [i for i, l in enumerate(lines) if l.startswith('prerequisite-patch-id: ')]
if len(at) != len(ids):
    sys.exit(f'{path}: {len(at)} prerequisite-patch-id lines for {len(ids)} prerequisites')
for i, pid in zip(at, ids):
    lines[i] = 'prerequisite-patch-id: ' + pid
open(path, 'w').write('\n'.join(lines))
PY
	fi
	touched=$(git -C "$SRC" diff --name-only "$from" "$tip")
	{
		echo "This series is for ${tree_of[$name]}."
		[ "$needs" = - ] ||
			printf '%s\n' "It needs the ${needs//,/ and the } series, posted alongside," \
				"applied first (prerequisite-patch-id below)."
		echo
		base_note "$touched"
		echo
		echo "scripts/get_maintainer.pl for this series (the series adds F: lines"
		echo "to existing entries, no entry of its own):"
		sed 's/^/  /' "$tmp/$name.patch.gm"
	} > "$tmp/notes"
	fill_cover "$out/0000-cover-letter.patch" "$TOP/patches/cover-letter-$name" "$tmp/notes"
done
note "series exported: $n series in $dest ($(find "$dest" -name '*.patch' | wc -l) files)"

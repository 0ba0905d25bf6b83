#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install the Debian packages the project needs, when any is missing, add
# deb-src entries for the configured suites when there are none (make qemu
# builds QEMU from Debian's qemu source package), and download the pinned
# kernel sources of both bases (lib.sh: BASE, LINUX_PKG_VERSION) when they are
# not in $LINUX_CACHE (LINUX_TARBALL=: that one only), and build the pinned
# sparse (lib.sh: SPARSE_VERSION) when it is not in $SPARSE_CACHE.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

# both bases' tarballs (make check builds both): one run per base, the
# packages installed by the first
if [ -z "${LINUX_TARBALL:-}" ] && [ -z "${NVME_IRQ_DEPS_ONE:-}" ]; then
	for b in 7.3 6.12; do
		NVME_IRQ_DEPS_ONE=1 BASE=$b "$0" || exit
	done
	exit 0
fi

pkgs=(build-essential bc bison flex libelf-dev libssl-dev
      cpio kmod xz-utils rsync python3 python3-ply python3-git ccache sparse
      qemu-system-x86 fio nvme-cli trace-cmd jq gnuplot-nox
      dpkg-dev meson ninja-build pkgconf libglib2.0-dev libpixman-1-dev
      libfdt-dev libcap-ng-dev libattr1-dev zlib1g-dev)

# a suite the host does not use, from the host's own mirror, through an
# apt configuration of its own in DIR (aptopt=): private_apt DIR LINE...
host_mirror() {
	local mirror
	# Debian's archive, not a third party's repository or the security one
	mirror=$( { sed -nE 's/^URIs:[[:space:]]*([^[:space:]]+).*/\1/p' \
			"$apt_dir"/sources.list.d/*.sources
		    sed -nE 's/^deb[[:space:]]+(\[[^]]*\][[:space:]]+)?([^[:space:]]+).*/\2/p' \
			"$apt_dir"/sources.list; } 2> /dev/null |
		grep -v security | grep -E '/debian/?$' | head -1)
	echo "${mirror:-http://deb.debian.org/debian}"
}
private_apt() {
	local dir=$1

	shift
	mkdir -p "$dir/lists/partial"
	printf '%s\n' "$@" > "$dir/sources.list"
	aptopt=(-o Dir::Etc::SourceList="$dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
		-o Dir::State::Lists="$dir/lists" -o Dir::Cache::pkgcache=
		-o Dir::Cache::srcpkgcache=)
	apt-get "${aptopt[@]}" update -q > "$dir/download.log" 2>&1 ||
		{ cat "$dir/download.log" >&2; die "apt-get update of $* failed"; }
}

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing+=("$p")
done

apt_dir=/etc/apt
has_deb_src() {
	grep -qsE '^[[:space:]]*(deb-src[[:space:]]|Types:.*deb-src)' \
		"$apt_dir"/sources.list "$apt_dir"/sources.list.d/*.list "$apt_dir"/sources.list.d/*.sources
}
need_src=0
has_deb_src || need_src=1
need_linux=0
[ -f "$TARBALL" ] || need_linux=1
need_sparse=0
[ -x "$SPARSE" ] || need_sparse=1
# the pinned tarball is what its hash says (half a second), whoever put it there
if [ $need_linux -eq 0 ] && [ -z "${LINUX_TARBALL:-}" ] &&
   ! echo "$LINUX_SHA256  $TARBALL" | sha256sum -c --quiet - > /dev/null 2>&1; then
	die "$TARBALL is not $LINUX_PKG $LINUX_PKG_VERSION (SHA-256); remove it and run 'make deps'"
fi
[ ${#missing[@]} -eq 0 ] && [ $need_src -eq 0 ] && [ $need_linux -eq 0 ] &&
	[ $need_sparse -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	[ ${#missing[@]} -eq 0 ] || echo "missing packages: ${missing[*]}" >&2
	[ $need_src -eq 0 ] || echo "no deb-src entry in $apt_dir (needed by 'make qemu')" >&2
	[ $need_linux -eq 0 ] || echo "no kernel source $TARBALL" >&2
	[ $need_sparse -eq 0 ] || echo "no sparse $SPARSE" >&2
	echo "run 'sudo make deps' and try again" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
tmp= stmp=
trap 'rm -rf ${tmp:+"$tmp"} ${stmp:+"$stmp"}' EXIT
if [ $need_src -eq 1 ]; then
	# the same suites as the binary entries, as deb-src
	note "adding deb-src entries for the configured suites"
	# (the binary entries only: "deb-src" matches \bdeb\b, and the file
	# written is itself one of *.sources)
	for f in "$apt_dir"/sources.list.d/*.sources; do
		[ -f "$f" ] && grep -qE '^Types:(.*[[:space:]])?deb([[:space:]]|$)' "$f" || continue
		sed -E 's/^Types:.*/Types: deb-src/' "$f"
		echo
	done > "$apt_dir/sources.list.d/nvme-irq-deb-src.sources.tmp"
	mv "$apt_dir/sources.list.d/nvme-irq-deb-src.sources.tmp" \
		"$apt_dir/sources.list.d/nvme-irq-deb-src.sources"
	[ -s "$apt_dir/sources.list.d/nvme-irq-deb-src.sources" ] ||
		rm -f "$apt_dir/sources.list.d/nvme-irq-deb-src.sources"
	if [ -f "$apt_dir/sources.list" ]; then
		sed -nE 's/^[[:space:]]*deb([[:space:]])/deb-src\1/p' "$apt_dir/sources.list" \
			> "$apt_dir/sources.list.d/nvme-irq-deb-src.list"
		[ -s "$apt_dir/sources.list.d/nvme-irq-deb-src.list" ] ||
			rm -f "$apt_dir/sources.list.d/nvme-irq-deb-src.list"
	fi
	has_deb_src || die "could not derive deb-src entries from $apt_dir"
fi
# (the private configurations below update their own lists)
if [ ${#missing[@]} -gt 0 ] || [ $need_src -eq 1 ]; then
	apt-get update -q > /dev/null
fi
if [ ${#missing[@]} -gt 0 ]; then
	note "installing ${missing[*]}"
	apt-get install -y -q --no-install-recommends "${missing[@]}" > "${TMPDIR:-/tmp}/nvme-irq-deps.log" 2>&1 ||
		{ tail -20 "${TMPDIR:-/tmp}/nvme-irq-deps.log" >&2; die "apt-get install failed"; }
fi

# the pinned kernel source: apt checks the package against the signed
# archive, the tarball's hash pins the version
if [ $need_linux -eq 1 ]; then
	[ -z "${LINUX_TARBALL:-}" ] || die "no kernel tarball $LINUX_TARBALL"
	note "downloading $LINUX_PKG=$LINUX_PKG_VERSION"
	tmp=$(mktemp -d)
	chmod 755 "$tmp"
	aptopt=()
	[ -z "$LINUX_SUITE" ] || private_apt "$tmp" "deb $(host_mirror) $LINUX_SUITE main"
	(cd "$tmp" && apt-get "${aptopt[@]}" download -q "$LINUX_PKG=$LINUX_PKG_VERSION") \
		>> "$tmp/download.log" 2>&1 ||
		{
			cat "$tmp/download.log" >&2
			# a pinned version leaves the suite when a newer one
			# enters it; Debian's snapshot archive keeps every one
			die "apt-get download $LINUX_PKG=$LINUX_PKG_VERSION failed." \
				"If the version has left the archive, take the package from" \
				"https://snapshot.debian.org/binary/$LINUX_PKG/ and put its" \
				"usr/src/$LINUX_PKG.tar.xz at $TARBALL: make deps checks its SHA-256"
		}
	dpkg-deb --fsys-tarfile "$tmp"/*.deb |
		tar -xO "./usr/src/$LINUX_PKG.tar.xz" > "$tmp/linux.tar.xz"
	echo "$LINUX_SHA256  $tmp/linux.tar.xz" | sha256sum -c --quiet - ||
		die "$LINUX_PKG $LINUX_PKG_VERSION: the tarball's hash is not the pinned one"
	mkdir -p "$LINUX_CACHE"
	mv "$tmp/linux.tar.xz" "$TARBALL"
fi

# sparse (lib.sh: SPARSE_VERSION): apt checks the source package against the
# signed archive, the tarball's hash pins the version
if [ $need_sparse -eq 1 ]; then
	note "building sparse $SPARSE_VERSION"
	stmp=$(mktemp -d)
	chmod 755 "$stmp"
	orig=$SPARSE_CACHE/sparse_$SPARSE_VERSION.orig.tar.gz
	if [ ! -f "$orig" ]; then
		private_apt "$stmp" "deb-src $(host_mirror) sid main"
		(cd "$stmp" && apt-get "${aptopt[@]}" source --download-only -q "sparse=$SPARSE_DEB_VERSION") \
			>> "$stmp/download.log" 2>&1 ||
			{
				cat "$stmp/download.log" >&2
				die "apt-get source sparse=$SPARSE_DEB_VERSION failed." \
					"If the version has left sid, take $(basename "$orig") from" \
					"https://snapshot.debian.org/package/sparse/$SPARSE_DEB_VERSION/" \
					"and put it at $orig: make deps checks its SHA-256"
			}
		echo "$SPARSE_SHA256  $stmp/$(basename "$orig")" | sha256sum -c --quiet - ||
			die "sparse $SPARSE_DEB_VERSION: the tarball's hash is not the pinned one"
		mkdir -p "$SPARSE_CACHE"
		mv "$stmp/$(basename "$orig")" "$orig"
	fi
	echo "$SPARSE_SHA256  $orig" | sha256sum -c --quiet - ||
		die "$orig is not sparse $SPARSE_VERSION (SHA-256); remove it and run 'make deps'"
	tar -xzf "$orig" -C "$stmp"
	MAKEFLAGS= make -C "$stmp/sparse-${SPARSE_VERSION/\~/-}" -j"$(nproc)" sparse > "$stmp/build.log" 2>&1 ||
		{ tail -20 "$stmp/build.log" >&2; die "sparse $SPARSE_VERSION did not build"; }
	mkdir -p "$(dirname "$SPARSE")"
	install -m 755 "$stmp/sparse-${SPARSE_VERSION/\~/-}/sparse" "$SPARSE.$$"
	mv "$SPARSE.$$" "$SPARSE"
fi

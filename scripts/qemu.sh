#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make qemu: build qemu-system-x86_64 from Debian's qemu source package (its
# own patches applied) plus the project's QEMU patches (qemu/patches/series),
# and point build/qemu at it.
#
# The binary is cached outside the checkout, under $QEMU_CACHE, keyed by the
# source version and a hash of the project's patches and of this script's
# configure options, so another clone on the same machine does not rebuild
# it.  The build folder has a fixed path, so ccache hits across rebuilds.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

cache=$QEMU_CACHE
patches=$TOP/qemu/patches
# no debug information: a cold build on 2 cores is most of a fresh make
# check's first minutes (rebuild with --enable-debug-info to debug QEMU)
configure_opts=(--target-list=x86_64-softmmu --without-default-features
	--disable-docs --disable-user --disable-tools --enable-tcg
	--disable-debug-info
	--enable-fdt=system --enable-virtfs --enable-attr --enable-cap-ng)

command -v apt-get > /dev/null || die "make qemu needs Debian's apt-get"
# The patches are written against QEMU 7.2 as Debian 12 ships it: the
# newest 7.2 source package of the configured suites (its security updates
# included), never a newer upstream release from backports or testing.
QEMU_BASE=${QEMU_BASE:-1:7.2+dfsg}
version=$(apt-cache showsrc qemu 2> /dev/null | sed -n 's/^Version: //p' |
	grep -F "$QEMU_BASE" | sort -V | tail -n 1)
[ -n "$version" ] ||
	die "no qemu $QEMU_BASE source package: run 'make deps' (it adds deb-src entries)"

patch_list=()
while IFS= read -r p; do
	case $p in ''|'#'*) continue ;; esac
	[ -f "$patches/$p" ] || die "qemu/patches/series names $p, which is missing"
	patch_list+=("$patches/$p")
done < "$patches/series"
key=$( { echo "$version ${configure_opts[*]}"; cat "${patch_list[@]}"; } |
	sha256sum | cut -c1-16)
bin=$cache/bin/${version//:/_}-$key

src=$cache/src/${version//:/_}
link_build() {
	mkdir -p "$BUILD"
	ln -sfn "$bin" "$BUILD/qemu"
	echo "$version $key $(echo "$src"/qemu-*/)" > "$BUILD/qemu.version"
}

if [ -x "$bin/qemu-system-x86_64" ]; then
	link_build
	exit 0
fi

mkdir -p "$cache" || die "cannot create $cache (set QEMU_CACHE to a writable folder)"
exec 9> "$cache/.lock"
flock 9

if [ ! -f "$src/.extracted" ]; then
	note "fetching the qemu $version source package (Debian's patches applied)"
	rm -rf "$src"
	mkdir -p "$src"
	(cd "$src" && apt-get source -q "qemu=$version" > "$src.log" 2>&1) ||
		{ tail -5 "$src.log" >&2; die "apt-get source qemu=$version failed"; }
	touch "$src/.extracted"
fi

# a fresh copy with the project's patches, always at the same path
work=$cache/work
rm -rf "$work/src"
mkdir -p "$work"
cp -a "$src/qemu-"*/ "$work/src"
for p in "${patch_list[@]}"; do
	patch -d "$work/src" -p1 --batch --forward -s < "$p" > "$work/patch.log" 2>&1 ||
		{ cat "$work/patch.log" >&2; die "QEMU patch $(basename "$p") does not apply to $version"; }
done

# depend mode (see lib.sh): meson's -MD lists every header, the system's
# too, and nothing qemu-system-x86_64 compiles uses .incbin
export CCACHE_BASEDIR=$work CCACHE_NOHASHDIR=1 CCACHE_DEPEND=1
mkdir -p "$work/build"
cd "$work/build"
if [ ! -f build.ninja ] || [ "$(cat .configure-opts 2> /dev/null)" != "${configure_opts[*]}" ]; then
	note "configuring QEMU in $work/build"
	rm -rf "$work/build"/*
	../src/configure --cc="ccache gcc" "${configure_opts[@]}" > configure.log 2>&1 ||
		{ tail -20 configure.log >&2; die "QEMU configure failed (see $work/build/configure.log)"; }
	echo "${configure_opts[*]}" > .configure-opts
fi
note "building qemu-system-x86_64 ($version + ${#patch_list[@]} patches; log: $work/build/ninja.log)"
start=$(date +%s)
ninja qemu-system-x86_64 > ninja.log 2>&1 ||
	{ grep -E 'error|FAILED' ninja.log | head -20 >&2; die "QEMU build failed (see $work/build/ninja.log)"; }
mkdir -p "$bin.tmp"
cp qemu-system-x86_64 "$bin.tmp/"
rm -rf "$bin"
mv "$bin.tmp" "$bin"
note "QEMU built in $(( $(date +%s) - start )) s: $bin/qemu-system-x86_64"
link_build

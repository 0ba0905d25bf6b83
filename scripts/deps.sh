#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install the Debian packages the project needs, when any is missing, and
# add deb-src entries for the configured suites when there are none (make
# qemu builds QEMU from Debian's qemu source package).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

pkgs=(linux-source-6.12 build-essential bc bison flex libelf-dev libssl-dev
      cpio kmod xz-utils rsync python3 python3-ply python3-git ccache sparse
      qemu-system-x86 fio nvme-cli trace-cmd gnuplot-nox
      dpkg-dev meson ninja-build pkgconf libglib2.0-dev libpixman-1-dev
      libfdt-dev libcap-ng-dev libattr1-dev zlib1g-dev)

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
[ ${#missing[@]} -eq 0 ] && [ $need_src -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	[ ${#missing[@]} -eq 0 ] || echo "missing packages: ${missing[*]}" >&2
	[ $need_src -eq 0 ] || echo "no deb-src entry in $apt_dir (needed by 'make qemu')" >&2
	echo "run 'sudo make deps' and try again" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
if [ $need_src -eq 1 ]; then
	# the same suites as the binary entries, as deb-src
	note "adding deb-src entries for the configured suites"
	for f in "$apt_dir"/sources.list.d/*.sources; do
		[ -f "$f" ] && grep -q '^Types:.*\bdeb\b' "$f" || continue
		sed -E 's/^Types:.*/Types: deb-src/' "$f"
		echo
	done > "$apt_dir/sources.list.d/nvme-irq-deb-src.sources"
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
apt-get update -q > /dev/null
if [ ${#missing[@]} -gt 0 ]; then
	note "installing ${missing[*]}"
	apt-get install -y -q --no-install-recommends "${missing[@]}" > "${TMPDIR:-/tmp}/nvme-irq-deps.log" 2>&1 ||
		{ tail -20 "${TMPDIR:-/tmp}/nvme-irq-deps.log" >&2; die "apt-get install failed"; }
fi

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install the Debian packages the project needs, when any is missing.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

pkgs=(linux-source-6.12 build-essential bc bison flex libelf-dev libssl-dev
      cpio kmod xz-utils rsync python3 python3-ply python3-git ccache sparse
      qemu-system-x86 fio nvme-cli trace-cmd gnuplot-nox)

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "missing packages: ${missing[*]}" >&2
	echo "run 'sudo make deps' (or: sudo apt-get install ${missing[*]}) and try again" >&2
	exit 1
fi
note "installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q > /dev/null
apt-get install -y -q --no-install-recommends "${missing[@]}" > "${TMPDIR:-/tmp}/nvme-irq-deps.log" 2>&1 ||
	{ tail -20 "${TMPDIR:-/tmp}/nvme-irq-deps.log" >&2; die "apt-get install failed"; }

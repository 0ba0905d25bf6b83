# SPDX-License-Identifier: GPL-2.0
# Shared settings of the host scripts; sourced, never run.

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$TOP/build}
SRC=$BUILD/linux		# base + series, a git repository
STOCK_SRC=$BUILD/linux-stock	# worktree of the pristine base
OUT=${OUT:-$TOP/out}
TARBALL=${LINUX_TARBALL:-/usr/src/linux-source-6.12.tar.xz}
# the project's QEMU builds, shared by every clone on the machine (make qemu)
QEMU_CACHE=${QEMU_CACHE:-/var/cache/nvme-irq/qemu}
SERIES_AUTHOR=${SERIES_AUTHOR:-"NVMe IRQ series <nvme-irq@example.org>"}

die() { echo "error: $*" >&2; exit 1; }
note() { echo ">>> $*" >&2; }

# kernel build directory of a flavour: test (series + debug), bench (series),
# stock (no series)
kbuild_dir() { echo "$BUILD/kbuild/$1"; }
bzimage_of() { echo "$(kbuild_dir "$1")/arch/x86/boot/bzImage"; }

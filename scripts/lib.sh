# SPDX-License-Identifier: GPL-2.0
# Shared settings of the host scripts; sourced, never run.

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$TOP/build}
OUT=${OUT:-$TOP/out}
# The bases.  Mainline, Linux 7.3.4 (Debian's linux-source-7.3 from
# trixie-backports), is where the series is developed and sent from; 6.12
# LTS (6.12.117) is its maintained backport (BASE=6.12): the same patches
# with its own hunks where upstream differs, and a small compat delta for
# the new files, under patches/6.12/.  make deps downloads the pinned
# tarball, checks its hash and keeps it in $LINUX_CACHE (the host's own
# linux-source packages, which Debian's updates move on, are not used).
BASE=${BASE:-7.3}
case $BASE in
7.3)
	LINUX_PKG=linux-source-7.3
	LINUX_PKG_VERSION=7.3.4-1~bpo13+1
	LINUX_SHA256=76df1affb19f24926949369be1d74b60071c963c598ce8780bddd4bbf0fc3bc4
	# not in Debian 12's suites: fetched with an apt configuration of
	# its own (deps.sh), the host's sources untouched
	LINUX_SUITE=trixie-backports
	BASE_BUILD=$BUILD
	BASE_PATCHES= ;;
6.12)
	LINUX_PKG=linux-source-6.12
	LINUX_PKG_VERSION=6.12.117-1~deb12u1
	LINUX_SHA256=585a4a074597aefa2b1a68ada83a3184ba351c127544dea80618bbcceaa3961f
	LINUX_SUITE=
	BASE_BUILD=$BUILD/6.12
	BASE_PATCHES=$TOP/patches/6.12 ;;
*)
	echo "error: BASE=$BASE: the bases are 7.3 (mainline, the default) and 6.12 (the backport)" >&2
	exit 1 ;;
esac
SRC=$BASE_BUILD/linux		# base + series, a git repository
# the exported series (make series), and what results of the base say
if [ "$BASE" = 7.3 ]; then
	SERIES_OUT=$OUT/series BASE_TAG=
else
	SERIES_OUT=$OUT/series-$BASE BASE_TAG=" ($BASE)"
fi
LINUX_CACHE=${LINUX_CACHE:-/var/cache/nvme-irq/src}
# LINUX_TARBALL= replaces mainline's tarball, LINUX_TARBALL_6_12= the
# backport's (make check builds both)
if [ "$BASE" = 7.3 ]; then
	LINUX_TARBALL=${LINUX_TARBALL:-}
else
	LINUX_TARBALL=${LINUX_TARBALL_6_12:-}
fi
TARBALL=${LINUX_TARBALL:-$LINUX_CACHE/${LINUX_PKG}_$LINUX_PKG_VERSION.tar.xz}
# The kernels' compiler: ccache in depend mode but for .incbin sources
# (scripts/ccache-cc).  On a cold cache, drivers/acpi of the test kernel
# (215 objects, 2 cores): 88-113 s in ccache's default mode, 66-80 s in
# depend mode, 60-64 s without ccache; a warm cache hits in 14 s in both.
# Host programs (HOSTCC) stay in the default mode: their dependency files
# leave out the system headers, which a libc update changes.
KCC=$TOP/scripts/ccache-cc
# the project's QEMU builds, shared by every clone on the machine (make qemu)
QEMU_CACHE=${QEMU_CACHE:-/var/cache/nvme-irq/qemu}
# the pristine base committed once per tarball, shared the same way (make tree)
BASE_CACHE=${BASE_CACHE:-/var/cache/nvme-irq/linux}
# checkpatch's verdicts, keyed by everything they depend on (static-checks.sh)
CHECKPATCH_CACHE=${CHECKPATCH_CACHE:-/var/cache/nvme-irq/checkpatch}
# get_maintainer.pl's answers, the same way (series.sh)
GM_CACHE=${GM_CACHE:-/var/cache/nvme-irq/get_maintainer}
# the last build folder of each kernel, with what it was built from
# (kernel.sh, kbuild-cache.py)
KBUILD_CACHE=${KBUILD_CACHE:-/var/cache/nvme-irq/kbuild}
# sparse: Debian 12's 0.6.4 cannot read 7.3's headers (__typeof_unqual__),
# and kbuild then drops C=2 with a warning and checks nothing.  make deps
# builds this release candidate from Debian's source package (sid), its
# tarball pinned by hash, into $SPARSE_CACHE (about 15 s).  Built from the
# tarball, not from git, it calls itself 0.6.4 (sparse --version).
SPARSE_VERSION=0.6.5~rc1
SPARSE_DEB_VERSION=0.6.5~rc1-2
SPARSE_SHA256=3ac8855ec7f3ab92f325be0f64347ccc2b10f8b4d7c2906783ee8e2bdab3f0de
SPARSE_CACHE=${SPARSE_CACHE:-/var/cache/nvme-irq/sparse}
SPARSE=$SPARSE_CACHE/$SPARSE_VERSION/sparse
SERIES_AUTHOR=${SERIES_AUTHOR:-"NVMe IRQ series <nvme-irq@example.org>"}

die() { echo "error: $*" >&2; exit 1; }
note() { echo ">>> $*" >&2; }

# nvme-coal (tools/nvme), for the selftests' nvme_coal.sh: built out of
# tree, per base (build_nvme_coal), the guest finds it through NVME_COAL=
nvme_coal_bin() { echo "$BASE_BUILD/tools/nvme/nvme-coal"; }
build_nvme_coal() {
	mkdir -p "$BASE_BUILD/tools" &&
		make -s -C "$SRC/tools" nvme O="$BASE_BUILD/tools" CFLAGS=-Werror > /dev/null
}

# kernel build directory of a flavour: test (series + debug), bench (series),
# sanitize, stock, stock-test (no series)
kbuild_dir() { echo "$BASE_BUILD/kbuild/$1"; }
bzimage_of() { echo "$(kbuild_dir "$1")/arch/x86/boot/bzImage"; }

# seed_kbuild SEED OUT: OUT a copy of the build folder SEED, so that a
# build of another configuration or tree compiles only what differs
seed_kbuild() {
	local seed=$1 out=$2 f

	rm -rf "$out"
	mkdir -p "$(dirname "$out")"
	cp -a "$seed" "$out"
	rm -f "$out/.manifest"	# what the seed was built from, not the copy
	# objtool's own build records its output folder by absolute path:
	# point it at the copy, mtimes kept (an objtool built again would
	# have every object built again)
	grep -rlF "$seed/" "$out/tools" --include='.*.cmd' | while IFS= read -r f; do
		sed -i "s#$seed/#$out/#g" "$f"
		touch -r "$seed/${f#"$out"/}" "$f"
	done
}

# The test kernel's KCSAN instruments the files of these names, wherever they are: the
# interrupt core (with CPU hotplug and migration), PCI MSI,
# lib/irq_poll.c, nvme-pci and the series' nvme files; a few files of
# the same names come along (drivers/pci/pci.c, the x86 APIC's msi.c).
# A per-file setting beats a directory's KCSAN_SANITIZE := n, so a
# configuration with CONFIG_EFI_STUB would instrument the EFI stub's
# pci.c too and fail to link: this one has no EFI stub.  A kernel
# instrumented whole reports races of the block layer, aio and the
# scheduler on every boot (blk_finish_plug / iocb_put,
# sbitmap_queue_clear_batch, update_sd_lb_stats): upstream's, outside
# this series, and they would hide its own.  Instrumenting only these
# files also keeps the rest of the kernel at lockdep's speed, so that
# every boot of this kernel runs under the detector.
TEST_KCSAN_FILES="chip handle manage resend spurious irqdesc irqdomain msi"
TEST_KCSAN_FILES+=" cpuhotplug migration moderation irq_poll pci pci_lost_irq"
TEST_KCSAN_FILES+=" pci_lost_irq_inject pci_early_irq pci_drain pci_moderate pci_stats"
TEST_KCSAN_FILES+=" pci_coalesce pci_coalesce_policy apst pci_debugfs"

# test_kflags: the make variables of the test kernel's build (and of the
# bisect builds of its configuration)
test_kflags() {
	local f

	echo KCSAN_SANITIZE=n
	for f in $TEST_KCSAN_FILES; do echo "KCSAN_SANITIZE_$f.o=y"; done
}

# lock_tree: hold build/linux for this script and its children (kernel
# builds, make tree, the static checks): a build beside at_base's window
# would compile the base's version of a file into a series kernel, and the
# mtimes put back afterwards would keep it there.  Released at exit.
lock_tree() {
	[ "${NVME_IRQ_TREE_LOCKED:-}" = "$BASE_BUILD" ] && return 0
	mkdir -p "$BASE_BUILD"
	exec {TREE_LOCK_FD}> "$BASE_BUILD/.tree.lock"
	flock "$TREE_LOCK_FD"
	export NVME_IRQ_TREE_LOCKED=$BASE_BUILD
}

# at_base / back_from_base: check build/linux out at the pristine base, and
# back.  What is built of the base (the stock kernel, the stock versions of
# the files the static checks compare) is built in the series' own tree:
# make then compiles again only what depends on the files the series
# changes, where a tree of its own would cost a 1.4 GB checkout and a
# compile or ccache lookup of every object.  The files the checkout rewrites
# get their series' mtimes back, so that the series' kernels are not
# rebuilt for it.  Under lock_tree; an exit in between goes back too (an
# EXIT trap), and a run killed in between leaves $AT_BASE_MARK, which the
# next at_base, make tree and make refresh act on.  Both return non-zero,
# saying why, when git cannot do it.
AT_BASE_MARK=$SRC/.git/nvme-irq-at-base
at_base() {
	local f

	lock_tree
	recover_from_base || return 1
	if [ -n "$(git -C "$SRC" status --porcelain --untracked-files=no)" ]; then
		echo "error: build/linux has local edits: building the base needs it checked out at base" >&2
		return 1
	fi
	BASE_BACK_TO=$(git -C "$SRC" symbolic-ref -q --short HEAD || git -C "$SRC" rev-parse HEAD)
	declare -gA BASE_MTIMES=()
	while IFS= read -r f; do
		[ -e "$SRC/$f" ] && BASE_MTIMES[$f]=$(stat -c %.9Y "$SRC/$f")
	done < <(git -C "$SRC" diff --name-only base HEAD)
	echo "$BASE_BACK_TO" > "$AT_BASE_MARK"
	trap back_from_base EXIT
	if ! git -C "$SRC" checkout -q --detach base ||
	   [ "$(git -C "$SRC" rev-parse HEAD)" != "$(git -C "$SRC" rev-parse 'base^{commit}')" ]; then
		echo "error: build/linux could not be checked out at base" >&2
		back_from_base
		return 1
	fi
}
back_from_base() {
	local f

	trap - EXIT
	if ! git -C "$SRC" checkout -q "$BASE_BACK_TO"; then
		echo "error: build/linux is left at base; 'make tree' puts it back" >&2
		return 1
	fi
	for f in "${!BASE_MTIMES[@]}"; do
		touch -d "@${BASE_MTIMES[$f]}" "$SRC/$f"
	done
	# the index's stat data again, or git would rewrite the files later
	git -C "$SRC" update-index -q --refresh > /dev/null
	rm -f "$AT_BASE_MARK"
}
# recover_from_base: after a run killed between at_base and back_from_base,
# check out what build/linux was at (its mtimes are lost: the next builds
# compile what depends on the rewritten files)
recover_from_base() {
	local back

	[ -f "$AT_BASE_MARK" ] || return 0
	back=$(< "$AT_BASE_MARK")
	note "build/linux was left at base by a run that was killed: back to $back"
	git -C "$SRC" checkout -q -f "$back" || return 1
	rm -f "$AT_BASE_MARK"
}

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Adaptive coalescing across a host-managed suspend.  In a suspend to idle,
# nvme keeps a controller on, in its deepest power state, when the
# controller has power states and ASPM is on its link (scripts/vm
# --root-ports, the kernel booted with pcie_aspm=force
# pcie_aspm.policy=powersave); the controller stays live meanwhile.  Under
# a QD16 random-write load, with the controller carrying a moderated queue
# (Feature 08h on), the system is suspended to idle with pm_test=platform
# (every device through its suspend, late and noirq phases, its interrupts
# suspended, five seconds, resumed: all of a suspend to idle but the idle
# loop, from which QEMU's system_wakeup cannot wake a guest that QEMU sees
# running), and the load goes on after.
# Between nvme's two power-state commands (Set Features 02h to the deepest
# state and back) the controller gets no Set Features 08h or 09h and no I/O
# command; after them, the load still on, it carries the queue again (08h
# read back non-zero); verify is clean.  The admin and I/O commands are
# traced (nvme_setup_cmd) in a trace instance of its own.  The system's
# other devices must survive the suspend too: a root file system on
# virtio-9p does only if its virtio-pci device says No_Soft_Reset (Linux
# resets one that does not on resume, and 9p cannot restore its
# virtqueues); the test skips otherwise, rather than hang.

DIR=$(dirname "$0")
. "$DIR/../kselftest/ktap_helpers.sh"
. "$DIR/lib.sh"

WORK=${TMPDIR:-/tmp}/nvme_irq_suspend
DBG=/sys/kernel/debug/nvme_pci
SWITCH=/sys/module/nvme/parameters/adaptive_coalescing
INST=/sys/kernel/tracing/instances/nvme_irq_suspend

ALL_TESTS="
	carried_before
	suspend_returned
	host_managed
	no_coalescing_command_suspended
	no_io_suspended
	carried_after
	fio_clean
"

key() {		# key KEY: the controller's KEY in its coalescing file
	awk -v k="$1:" '$1 == k { print $2 }' "$DBG/$CTRL/coalescing"
}

# carried: the driver moderates a queue through the controller, and the
# controller reads back a non-zero 08h; tried for up to $1 seconds
carried() {
	local t

	for t in $(seq $(($1 * 5))); do
		if [ "$(key actuator)" = device ] && [ "$(key feature_08h_dw11)" != 0x0 ] &&
		   [ "$(feat "$CTRL" -f 8)" -gt 0 ]; then
			return 0
		fi
		pause 0.2
	done
	return 1
}

# the trace of the suspend, nvme$N's lines only, numbered
ctrl_trace() {
	grep -n " $CTRL: " "$WORK/trace"
}

# line numbers of nvme's two power-state commands, to the deepest state and
# back: the window the controller spends suspended
window() {
	ctrl_trace | grep 'qid=0,.*nvme_admin_set_features fid=0x2,' |
		head -n 2 | cut -d: -f1 | tr '\n' ' '
}

suspend_run() {
	local pid w

	# a new instance traces at once: only from just before the suspend
	echo 0 > "$INST/tracing_on"
	echo 2048 > "$INST/buffer_size_kb"
	echo 1 > "$INST/events/nvme/nvme_setup_cmd/enable"
	fio_json load --name=w --filename="$NS" --rw=randwrite --bs=4k --size=64m \
		--ioengine=libaio --direct=1 --iodepth=16 --time_based --runtime=25 \
		--verify=crc32c --verify_fatal=1 --verify_backlog=256 > "$WORK/load.out" &
	pid=$!
	carried 15
	before=$?
	ktap_print_msg "before: actuator $(key actuator), 08h $(key feature_08h_dw11)," \
		"read back $(feat "$CTRL" -f 8)"
	mark_dmesg
	echo 1 > "$INST/tracing_on"
	# no real suspend if pm_test refused: nothing here would wake it
	suspended=1
	echo platform > /sys/power/pm_test && echo freeze > /sys/power/state &&
		suspended=0
	echo 0 > "$INST/tracing_on"
	echo none > /sys/power/pm_test
	cat "$INST/trace" > "$WORK/trace"
	w=$(window)
	read -r first last <<< "$w"
	ktap_print_msg "power-state commands at trace lines ${first:-none} and ${last:-none}" \
		"($(wc -l < "$WORK/trace") lines, $(ctrl_trace | wc -l) of $CTRL)"
	ctrl_trace | grep 'fid=0x2,' | sed 's/^/# /'
	carried 15
	after=$?
	ktap_print_msg "after: actuator $(key actuator), 08h $(key feature_08h_dw11)," \
		"read back $(feat "$CTRL" -f 8)"
	wait "$pid"
	fio_rc=$?
	sed -n 's/^# /# load: /p' "$WORK/load.out"
	dmesg_since | grep -E 'PM: |nvme' | head -n 10 | sed 's/^/# /'
}

carried_before() {
	once suspend_run
	ktap_test_result "under load before the suspend: the controller carries a queue" \
		[ "${before:-1}" = 0 ]
}

suspend_returned() {
	once suspend_run
	ktap_test_result "suspend to idle (pm_test=platform) returned success" \
		[ "${suspended:-1}" = 0 ]
}

host_managed() {
	local ok=1

	once suspend_run
	# ktap_test_result runs its condition unquoted: no empty word in it
	[ -n "${first:-}" ] && [ -n "${last:-}" ] && ok=0
	ktap_test_result "nvme kept the controller on: power state set and restored" \
		[ $ok = 0 ]
}

# commands of $CTRL between the two power-state commands matching $1
in_window() {
	[ -n "${first:-}" ] && [ -n "${last:-}" ] || { echo 1; return; }
	ctrl_trace | awk -F: -v a="$first" -v b="$last" '$1 > a && $1 < b' | grep -c -- "$1"
}

no_coalescing_command_suspended() {
	local n

	once suspend_run
	n=$(in_window 'nvme_admin_set_features fid=0x[89],')
	ktap_print_msg "Set Features 08h/09h while suspended: $n"
	ktap_test_result "no Set Features 08h or 09h while the controller is suspended" [ "$n" = 0 ]
}

no_io_suspended() {
	local n

	once suspend_run
	n=$(in_window 'qid=[1-9]')
	ktap_print_msg "I/O commands while suspended: $n"
	ktap_test_result "no I/O command while the controller is suspended" [ "$n" = 0 ]
}

carried_after() {
	once suspend_run
	ktap_test_result "after the resume, the load on: the controller carries a queue again" \
		[ "${after:-1}" = 0 ]
}

fio_clean() {
	once suspend_run
	ktap_test_result "random writes across the suspend verify clean" [ "${fio_rc:-1}" = 0 ]
}

# no_soft_reset DEV: PCI device DEV (a sysfs path) says No_Soft_Reset in
# its Power Management capability (control/status register, bit 3)
no_soft_reset() {
	local cfg=$1/config pos id ctrl n=0

	pos=$(od -An -tu1 -j52 -N1 "$cfg" 2> /dev/null | tr -d ' ')
	while [ "${pos:-0}" -ge 64 ] && [ $((n += 1)) -le 48 ]; do
		id=$(od -An -tu1 -j"$pos" -N1 "$cfg" | tr -d ' ')
		if [ "$id" = 1 ]; then
			ctrl=$(od -An -tu2 -j$((pos + 4)) -N2 "$cfg" | tr -d ' ')
			[ $((ctrl & 8)) -ne 0 ]
			return
		fi
		pos=$(od -An -tu1 -j$((pos + 1)) -N1 "$cfg" | tr -d ' ')
	done
	return 1
}

# the 9p devices on virtio-pci the resume would reset under a 9p root, if any
reset_on_resume() {
	local d v

	# statfs over 9p reports the server's type: the mount table says 9p
	[ "$(awk '$2 == "/" { t = $3 } END { print t }' /proc/mounts)" = 9p ] || return 0
	for d in /sys/bus/pci/drivers/virtio-pci/0000:*; do
		for v in "$d"/virtio*/driver; do
			[ "$(basename "$(readlink "$v" 2> /dev/null)")" = 9pnet_virtio ] &&
				! no_soft_reset "$d" && basename "$d"
		done
	done
}

cleanup() {
	echo none > /sys/power/pm_test 2> /dev/null
	[ -d "$INST" ] && rmdir "$INST" 2> /dev/null
}

ktap_print_header
require_root
require_test_devs
NS=$(first_ns)
CTRL=$(ns_ctrl "${NS#/dev/}")
if [ ! -e "$SWITCH" ] || [ ! -r "$DBG/$CTRL/coalescing" ] || ! command -v nvme > /dev/null ||
   [ ! -d /sys/kernel/tracing/instances ]; then
	ktap_skip_all "needs debugfs, tracefs, adaptive coalescing in nvme-pci and nvme-cli"
	exit "$KSFT_SKIP"
fi
if ! grep -qw freeze /sys/power/state 2> /dev/null || [ ! -w /sys/power/pm_test ]; then
	ktap_skip_all "needs suspend to idle and pm_test (CONFIG_SUSPEND, CONFIG_PM_DEBUG)"
	exit "$KSFT_SKIP"
fi
link=/sys/class/nvme/$CTRL/device/link
if [ "$(cat "$link/l0s_aspm" 2> /dev/null)" != 1 ] &&
   [ "$(cat "$link/l1_aspm" 2> /dev/null)" != 1 ]; then
	ktap_skip_all "ASPM is off on $CTRL's link: a suspend shuts it down (scripts/vm" \
		"--root-ports, pcie_aspm=force pcie_aspm.policy=powersave)"
	exit "$KSFT_SKIP"
fi
reset=$(reset_on_resume)
if [ -n "$reset" ]; then
	ktap_skip_all "the root file system is 9p, and the resume would reset its virtio" \
		"devices ($(echo $reset)): they do not say No_Soft_Reset"
	exit "$KSFT_SKIP"
fi
# the deepest power state nvme suspends to: Identify Controller's NPSS
npss=$(nvme id-ctrl "/dev/$CTRL" 2> /dev/null | awk '$1 == "npss" { print $3 }')
if [ -z "$npss" ] || [ "$npss" = 0 ]; then
	ktap_skip_all "$CTRL has no power state but 0: a suspend shuts it down"
	exit "$KSFT_SKIP"
fi
cap=$(feat "$CTRL" -f 8 -s 3)
if [ $((cap & 4)) -eq 0 ] || [ "$cap" -lt 0 ]; then
	ktap_skip_all "$CTRL does not let Feature 08h be changed (QEMU without irq-coalescing=on)"
	exit "$KSFT_SKIP"
fi
if [ "$(cmdline_value nvme.adaptive_coalescing 1)" = 0 ]; then
	ktap_skip_all "adaptive coalescing is off on the command line"
	exit "$KSFT_SKIP"
fi
mkdir -p "$WORK" "$INST" || exit 1
at_exit cleanup
# thresholds any load passes, as in coalescing_ignored.sh
echo 1 > "$SWITCH"
echo 50 > "$DBG/coalescing_period_ms"
echo 1 > "$DBG/high_io_delta"
echo 0 > "$DBG/avg_qd_threshold"
echo 0 > "$DBG/total_inflight_io_threshold"
echo 1000 > "$DBG/coalescing_max_delay_us"
ktap_print_msg "$NS on $CTRL, power states 0-$npss"
run_tests

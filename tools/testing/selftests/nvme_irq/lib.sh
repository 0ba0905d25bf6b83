# SPDX-License-Identifier: GPL-2.0
# Helpers of the nvme_irq tests, sourced after ../kselftest/ktap_helpers.sh.

# Each test script lists its test functions in ALL_TESTS and ends with
# run_tests.  TESTS="name ..." runs only those, as in net/forwarding; the
# plan is computed from the list.  A test function ends in exactly one
# result (ktap_test_result, _pass, _fail or _skip); work several of them
# check is done once, by a function they call that remembers it ran.

# check_tests: bail out if $TESTS names a test $ALL_TESTS does not list; a
# script whose setup changes things calls it first
check_tests() {
	local t

	for t in ${TESTS:-}; do
		case " $(echo $ALL_TESTS) " in
		*" $t "*) ;;
		*) ktap_exit_fail_msg "no test '$t' (tests: $(echo $ALL_TESTS))" ;;
		esac
	done
}

# run_tests: run the functions $TESTS names, or all of $ALL_TESTS
run_tests() {
	local t n

	check_tests
	ktap_set_plan "$(echo ${TESTS:-$ALL_TESTS} | wc -w)"
	for t in ${TESTS:-$ALL_TESTS}; do
		n=$KTAP_TESTNO
		"$t"
		n=$((KTAP_TESTNO - n))
		[ "$n" -eq 1 ] || ktap_test_fail "$t ended in $n results, not one"
	done
	ktap_finished
}

# pause SECONDS: sleep(1) without starting a program, where the time a test
# waits is part of what it does (pacing); read with a timeout from a pipe
# that never has data
exec {PAUSE_FD}<> <(:)
pause() {
	read -r -t "$1" -u "$PAUSE_FD" _
	return 0
}

# once [NAME] CMD...: run CMD the first time only; later calls return what
# it returned then (a fixture shared by several tests, run by whichever of
# them comes first).  NAME tells apart runs of one CMD with other
# arguments; without it, CMD names the run.
declare -A ONCE_RC
once() {
	local name=$1

	[ $# -gt 1 ] && shift
	if [ -z "${ONCE_RC[$name]:-}" ]; then
		"$@"
		ONCE_RC[$name]=$?
	fi
	return "${ONCE_RC[$name]}"
}

# Value of name=value on the kernel command line, or $2 when it is absent.
cmdline_value() {
	local arg

	for arg in $(< /proc/cmdline); do
		case "$arg" in
		"$1="*) echo "${arg#*=}"; return ;;
		esac
	done
	echo "$2"
}

# The suite overwrites, resets, removes and reloads the NVMe namespaces it is
# given, and only those: NVME_IRQ_TEST_DEVS lists them as block devices
# ("/dev/nvme0n1 /dev/nvme1n1"), as blktests' TEST_DEVS does, and without it
# every test is skipped.  The module parameters, debugfs knobs and fault
# injection the tests set are global: other controllers see them while a
# test runs (they lose no data: that is what the series is for), and each
# test puts them back when it exits.

# Helpers that tests call often read sysfs and debugfs with shell builtins
# (read, $(<FILE), globs): in a guest under TCG every program started costs
# a quarter of a second.

# test_ns: the named namespaces, as nvme0n1 nvme1n1 ...
test_ns() {
	local dev

	for dev in $NVME_IRQ_TEST_DEVS; do
		echo "${dev##*/}"
	done
}

# ns_ctrl NS: the controller of namespace NS (nvme0 for nvme0n1 or, behind
# native multipath, the first path's: nvme2 for nvme2c0n1); nothing if NS
# is not there
ns_ctrl() {
	local p line

	# a namespace's device is its controller, whose uevent names it
	if [ -r "/sys/block/$1/device/uevent" ]; then
		while IFS= read -r line; do
			case "$line" in
			DEVNAME=nvme[0-9]*) echo "${line#DEVNAME=}"; return ;;
			esac
		done < "/sys/block/$1/device/uevent"
	fi
	for p in /sys/block/$1/multipath/nvme*c*n*; do
		[ -e "$p" ] || continue
		p=${p##*/}
		p=${p#nvme*c}
		echo "nvme${p%n*}"
		return
	done
}

# ctrl_subsys CTRL: the NVMe subsystem controller CTRL belongs to
ctrl_subsys() {
	local s

	for s in /sys/class/nvme-subsystem/*/"$1"; do
		[ -L "$s" ] || continue
		s=${s%/*}
		echo "${s##*/}"
		return
	done
}

# wait_subsys_gone SUBSYS: wait up to 10 s for the driver to free SUBSYS,
# once the last reference to its last controller is dropped (an I/O that
# was failing, a close): a PCI rescan before that finds the instance
# numbers still taken, and the controller and its namespace come back
# under new names (nvme2n2 for nvme1n1)
wait_subsys_gone() {
	local t

	[ -n "$1" ] || return 0
	for t in $(seq 50); do
		[ -e "/sys/class/nvme-subsystem/$1" ] || return 0
		sleep 0.2
	done
	ktap_print_msg "$1 still there 10 s after its controller was removed"
	return 1
}

# ctrl_ns CTRL: the first named namespace on controller CTRL, as /dev/nvme0n1
ctrl_ns() {
	local dev

	for dev in $NVME_IRQ_TEST_DEVS; do
		[ "$(ns_ctrl "${dev#/dev/}")" = "$1" ] && { echo "$dev"; return; }
	done
}

# The controllers of the named namespaces that are there now, as nvme0 nvme1
nvme_ctrls() {
	local ns c
	local -A seen=()

	for ns in $(test_ns); do
		c=$(ns_ctrl "$ns")
		[ -n "$c" ] && [ -z "${seen[$c]:-}" ] || continue
		seen[$c]=1
		echo "$c"
	done
}

# The knobs a test may change: the writable module parameters of nvme and
# nvme_core, the nvme_pci debugfs knobs and fault attributes, and the block
# layer's fault attributes the suite drives.  /proc/irq/<N>/moderation_us is
# not among them: adaptive coalescing moves it, and a write from /proc takes
# the vector from the driver; the tests that set it put it back themselves.
knob_files() {
	local f mode

	# root may write any file: the owner's write bit says it is a knob (one
	# stat for all of them; a pattern that matches nothing is left out)
	stat -c '%a %n' /sys/module/nvme/parameters/* /sys/module/nvme_core/parameters/* \
		/sys/kernel/debug/nvme_pci/* /sys/kernel/debug/nvme_pci/fail_*/* \
		/sys/kernel/debug/fail_io_timeout/* \
		/sys/kernel/debug/fail_make_request/* 2> /dev/null |
	while read -r mode f; do
		[ -f "$f" ] && [ $((0$mode & 0200)) -ne 0 ] && echo "$f"
	done
}

declare -A KNOBS_SAVED
AT_EXIT=()

# at_exit CMD...: run CMD when the test exits, before the knobs are restored
at_exit() {
	AT_EXIT+=("$*")
}

# at_exit_cancel CMD...: no longer run CMD at exit (the process it would
# kill was reaped: its pid may be another's by then)
at_exit_cancel() {
	local i

	for i in "${!AT_EXIT[@]}"; do
		[ "${AT_EXIT[$i]}" = "$*" ] && unset "AT_EXIT[$i]"
	done
}

# wait_until TENTHS CMD...: true as soon as CMD is, tried at most TENTHS
# times, 0.1 s apart; false if it never was
wait_until() {
	local n=$1 i

	shift
	for ((i = 0; i < n; i++)); do
		"$@" && return 0
		pause 0.1
	done
	return 1
}

# restore_knobs: every knob back to its value when the test started
restore_knobs() {
	local f

	for f in "${!KNOBS_SAVED[@]}"; do
		{ [ "$(< "$f")" = "${KNOBS_SAVED[$f]}" ]; } 2> /dev/null ||
			echo "${KNOBS_SAVED[$f]}" > "$f" 2> /dev/null ||
			ktap_print_msg "could not restore $f to ${KNOBS_SAVED[$f]}"
	done
}

nvme_irq_exit() {
	local cmd

	for cmd in "${AT_EXIT[@]}"; do
		eval "$cmd"
	done
	restore_knobs
}

# save_knobs: remember every knob, and put them back when the test exits
save_knobs() {
	local f

	# a write-only knob reads as empty, and is not written back
	for f in $(knob_files); do
		KNOBS_SAVED[$f]=$(< "$f")
	done 2> /dev/null
	trap nvme_irq_exit EXIT
}

# require_test_devs [unloaded] [noio|nojq]: skip every test unless
# NVME_IRQ_TEST_DEVS names NVMe namespaces that exist, and unless fio and jq
# (fio_json) are there to run I/O on them.  With "unloaded", the nvme module
# may not be loaded yet, and the names are checked once it is; "noio": the
# test runs no fio job; "nojq": it runs fio but reads its output without jq
require_test_devs() {
	local dev arg unloaded= needs="fio jq"

	for arg in "$@"; do
		case "$arg" in
		unloaded) unloaded=1 ;;
		noio) needs= ;;
		nojq) needs=fio ;;
		*) ktap_exit_fail_msg "require_test_devs: unknown $arg" ;;
		esac
	done
	for arg in $needs; do
		if ! command -v "$arg" > /dev/null; then
			ktap_skip_all "needs $arg"
			exit "$KSFT_SKIP"
		fi
	done
	if [ -z "${NVME_IRQ_TEST_DEVS:-}" ]; then
		ktap_skip_all "NVME_IRQ_TEST_DEVS is not set: name the NVMe" \
			"namespaces these tests may overwrite" \
			"(e.g. NVME_IRQ_TEST_DEVS=/dev/nvme0n1)"
		exit "$KSFT_SKIP"
	fi
	for dev in $NVME_IRQ_TEST_DEVS; do
		case "$dev" in
		/dev/nvme[0-9]*n[0-9]*) ;;
		*)
			ktap_skip_all "NVME_IRQ_TEST_DEVS: $dev is not an" \
				"NVMe namespace (/dev/nvmeXnY)"
			exit "$KSFT_SKIP" ;;
		esac
		[ -n "$unloaded" ] && continue
		if [ ! -b "$dev" ] || [ -z "$(ns_ctrl "${dev##*/}")" ]; then
			ktap_skip_all "NVME_IRQ_TEST_DEVS: no NVMe namespace $dev"
			exit "$KSFT_SKIP"
		fi
	done
	save_knobs
}

require_root() {
	if [ "$(id -u)" -ne 0 ]; then
		ktap_skip_all "must be run as root"
		exit "$KSFT_SKIP"
	fi
}

# first_ns: the first named namespace, as /dev/nvme0n1
first_ns() {
	set -- $NVME_IRQ_TEST_DEVS
	echo "$1"
}

# The Linux interrupt numbers of the named controllers' I/O queue vectors
nvme_io_irqs() {
	awk -v c=" $(echo $(nvme_ctrls)) " '
		$NF ~ /^nvme[0-9]+q[1-9][0-9]*$/ {
			n = $NF; sub(/q[0-9]+$/, "", n)
			if (index(c, " " n " ")) { sub(":", "", $1); print $1 }
		}' /proc/interrupts
}

# nvme_pci_key CTRL FILE KEY: one value of /sys/kernel/debug/nvme_pci/CTRL/FILE
nvme_pci_key() {
	local k v

	while read -r k v; do
		[ "$k" = "$3:" ] && { echo "$v"; return; }
	done < "/sys/kernel/debug/nvme_pci/$1/$2"
}

# nvme_pci_sum FILE KEY: KEY summed over every named controller's FILE
nvme_pci_sum() {
	local c k v s=0

	for c in $(nvme_ctrls); do
		[ -r "/sys/kernel/debug/nvme_pci/$c/$1" ] || continue
		while read -r k v; do
			[ "$k" = "$2:" ] && s=$((s + v))
		done < "/sys/kernel/debug/nvme_pci/$c/$1"
	done
	echo "$s"
}

# fail_lost_irq_setting: the lost-interrupt injector's setting in debugfs,
# in the parameter's form (interval,probability,space,times)
fail_lost_irq_setting() {
	local d=/sys/kernel/debug/nvme_pci/fail_lost_irq

	cat "$d/interval" "$d/probability" "$d/space" "$d/times" | paste -sd,
}

# Sum of one key of every controller's bounded-drain counters
drain_sum() {
	nvme_pci_sum drain "$1"
}

# fio_json NAME [fio options]: fio with JSON output in $WORK; prints the
# I/O and error counts, writes every job's IOPS to $WORK/NAME.iops; true
# if it did I/O and reported no error.  (jq, not python3: under TCG a
# python3 start takes a second.)
fio_json() {
	local name=$1 out=$WORK/$1.json s ios errs iops
	shift
	command -v jq > /dev/null || { ktap_print_msg "fio_json needs jq"; return 1; }
	fio --output-format=json --output="$out" "$@" > /dev/null \
		2> "$WORK/$name.err" || return 1
	s=$(jq -r '.jobs | (map(.read.total_ios + .write.total_ios) | add // 0),
		(map(.error) | add // 0),
		(map(.read.iops + .write.iops | round | tostring) | join(" "))' \
		"$out") || return 1
	{ read -r ios; read -r errs; read -r iops; } <<< "$s"
	echo "$iops" > "$WORK/$name.iops"
	echo "# fio: $ios I/Os, $errs errors"
	[ "${errs:-1}" = 0 ] && [ "${ios:-0}" -gt 0 ]
}

# One fio job per named namespace: --name=dN --filename=/dev/nvmeNn1 ...
fio_all_drives() {
	local dev i=0

	for dev in $NVME_IRQ_TEST_DEVS; do
		printf -- '--name=d%s --filename=%s ' "$i" "$dev"
		i=$((i + 1))
	done
}

# once_per_ctrl TEXT: every controller logged "nvme<N>: TEXT" exactly once
once_per_ctrl() {
	local c n

	# the whole log: some of these are logged once at probe, before any mark
	for c in $(nvme_ctrls); do
		n=$(dmesg | grep -c "$c: $1")
		ktap_print_msg "$c: $n message(s)"
		[ "$n" -eq 1 ] || return 1
	done
}

# write_rejected FILE VALUE: true if writing VALUE to FILE fails
write_rejected() {
	! echo "$2" > "$1" 2> /dev/null
}

# modprobe, from the module tree NVME_IRQ_MODROOT (an INSTALL_MOD_PATH) when
# set: a test kernel's modules need not be installed in /lib/modules
nvme_modprobe() {
	modprobe ${NVME_IRQ_MODROOT:+-d "$NVME_IRQ_MODROOT"} "$@"
}

# mark_dmesg: write a start line into the kernel log; dmesg_since prints
# only what was logged after it, so that a test judges its own messages,
# not those of whatever ran before it in the same boot
mark_dmesg() {
	DMESG_MARK="nvme_irq selftest ${0##*/} $$ mark $(date +%s.%N)"
	echo "$DMESG_MARK" > /dev/kmsg
}

dmesg_since() {
	# no mark in the log (never written, wrapped away or cleared): the
	# whole log, so that a "nothing since" check cannot pass by default
	dmesg | awk -v m="$DMESG_MARK" '
		{ all[NR] = $0 } f { print } index($0, m) { f = 1 }
		END { if (!f) for (i = 1; i <= NR; i++) print all[i] }'
}

# set_moderation VALUE IRQ...: write VALUE to every IRQ's moderation_us
set_moderation() {
	local v=$1 i
	shift
	for i; do
		echo "$v" > "/proc/irq/$i/moderation_us" || return 1
	done
}

# moderation_is VALUE IRQ...: every IRQ's moderation_us reads VALUE
moderation_is() {
	local v=$1 i
	shift
	for i; do
		[ "$(< "/proc/irq/$i/moderation_us")" = "$v" ] || return 1
	done
}

# no_timeouts: no I/O timed out since mark_dmesg
no_timeouts() {
	! dmesg_since | grep -q timeout
}

# rejects_keeps FILE [VALUE...]: writing each VALUE to FILE fails and leaves
# the value FILE had; each failure printed.  No VALUE means the empty
# string, which ktap_test_result's unquoted expansion drops.
rejects_keeps() {
	local f=$1 old bad ok=0
	shift
	[ $# -gt 0 ] || set -- ""
	old=$(< "$f")
	for bad; do
		if ! write_rejected "$f" "$bad"; then
			ktap_print_msg "$f took '$bad'"
			ok=1
		elif [ "$(< "$f")" != "$old" ]; then
			ktap_print_msg "$f: '$bad' refused but the value changed to $(< "$f")"
			ok=1
		fi
	done
	return $ok
}

# poll_always: the lost-interrupt poller watches every controller from now
# on, as on a platform known to lose interrupts, instead of only those that
# had a completion recovered (save_knobs puts the value back)
poll_always() {
	local f=/sys/module/nvme/parameters/lost_irq_poll_always

	[ ! -e "$f" ] || echo 1 > "$f"
}

# qmp_lose_msix QOM-PATH VECTOR PPM: the emulated controller at QOM-PATH
# ($NVME_IRQ_QMP dev) drops that fraction of VECTOR's messages; 0 for none
qmp_lose_msix() {
	local mask=$((1 << $2))

	[ "$3" = 0 ] && mask=0
	"$NVME_IRQ_QMP" set "$1" x-lost-msix-ppm "$3" &&
	"$NVME_IRQ_QMP" set "$1" x-lost-msix-seed 1 &&
	"$NVME_IRQ_QMP" set "$1" x-lost-msix-vectors "$mask"
}

# wait_ctrl_live CTRL: wait up to 10 s until controller CTRL is live again
wait_ctrl_live() {
	local t

	for t in $(seq 50); do
		[ "$(cat "/sys/class/nvme/$1/state" 2> /dev/null)" = live ] && return 0
		sleep 0.2
	done
	return 1
}

# feat CTRL ARGS...: the value nvme get-feature ARGS prints last for
# controller CTRL, as a number; -1, and false, if none
feat() {
	local v

	# (no grep or tail: a program costs a tenth of a second under TCG,
	# and the coalescing tests read features in loops)
	v=$(nvme get-feature "/dev/$1" "${@:2}" 2> /dev/null)
	[[ $v =~ .*value:(0x)?([0-9a-fA-F]+) ]] || { echo -1; return 1; }
	echo $((16#${BASH_REMATCH[2]}))
}

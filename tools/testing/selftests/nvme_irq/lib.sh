# SPDX-License-Identifier: GPL-2.0
# Helpers of the nvme_irq tests, sourced after ../kselftest/ktap_helpers.sh.

# Value of name=value on the kernel command line, or $2 when it is absent.
cmdline_value() {
	local arg

	for arg in $(cat /proc/cmdline); do
		case "$arg" in
		"$1="*) echo "${arg#*=}"; return ;;
		esac
	done
	echo "$2"
}

# The NVMe controllers, as nvme0 nvme1 ...
nvme_ctrls() {
	local c

	for c in /sys/class/nvme/nvme*; do
		[ -e "$c" ] && basename "$c"
	done
}

require_root() {
	if [ "$(id -u)" -ne 0 ]; then
		ktap_skip_all "must be run as root"
		exit "$KSFT_SKIP"
	fi
}

# The Linux interrupt numbers of the NVMe I/O queue vectors
nvme_io_irqs() {
	awk '$NF ~ /^nvme[0-9]+q[1-9][0-9]*$/ { sub(":", "", $1); print $1 }' \
		/proc/interrupts
}

# nvme_pci_key CTRL FILE KEY: one value of /sys/kernel/debug/nvme_pci/CTRL/FILE
nvme_pci_key() {
	awk -F': ' -v k="$3" '$1 == k { print $2 }' "/sys/kernel/debug/nvme_pci/$1/$2"
}

# nvme_pci_sum FILE KEY: KEY summed over every controller's FILE
nvme_pci_sum() {
	cat /sys/kernel/debug/nvme_pci/nvme*/"$1" 2> /dev/null |
		awk -v k="$2:" '$1 == k { s += $2 } END { print s + 0 }'
}

# Sum of one key of every controller's bounded-drain counters
drain_sum() {
	nvme_pci_sum drain "$1"
}

# require_ctrls_and_fio: skip the whole test without an NVMe controller or fio
require_ctrls_and_fio() {
	if [ -z "$(nvme_ctrls)" ] || ! command -v fio > /dev/null; then
		ktap_skip_all "needs an NVMe controller and fio"
		exit "$KSFT_SKIP"
	fi
}

# fio_json NAME [fio options]: fio with JSON output in $WORK; prints the
# I/O and error counts; true if it did I/O and reported no error
fio_json() {
	local name=$1 out=$WORK/$1.json
	shift
	fio --output-format=json --output="$out" "$@" > /dev/null \
		2> "$WORK/$name.err" || return 1
	python3 - "$out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
errs = sum(j['error'] for j in d['jobs'])
ios = sum(j['read']['total_ios'] + j['write']['total_ios'] for j in d['jobs'])
print(f"# fio: {ios} I/Os, {errs} errors")
sys.exit(1 if errs or not ios else 0)
PY
}

# One fio job per NVMe namespace: --name=dN --filename=/dev/nvmeNn1 ...
fio_all_drives() {
	local dev i=0

	for dev in /dev/nvme*n1; do
		printf -- '--name=d%s --filename=%s ' "$i" "$dev"
		i=$((i + 1))
	done
}

# once_per_ctrl TEXT: every controller logged "nvme<N>: TEXT" exactly once
once_per_ctrl() {
	local c n

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
	DMESG_MARK="nvme_irq selftest $(basename "$0") $$ mark $(date +%s.%N)"
	echo "$DMESG_MARK" > /dev/kmsg
}

dmesg_since() {
	# no mark in the log (never written, wrapped away or cleared): the
	# whole log, so that a "nothing since" check cannot pass by default
	dmesg | awk -v m="$DMESG_MARK" '
		{ all[NR] = $0 } f { print } index($0, m) { f = 1 }
		END { if (!f) for (i = 1; i <= NR; i++) print all[i] }'
}

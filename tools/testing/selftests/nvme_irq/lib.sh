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

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The series' boot parameters take effect: every one given on the kernel
# command line shows up where it is documented to, and every absent one
# reads its documented default.  The adaptive-coalescing policy's
# thresholds are debugfs tuning knobs, not parameters: they are no module
# parameter and read their defaults.

DIR=$(dirname "$0")
. "$DIR/../kselftest/ktap_helpers.sh"
. "$DIR/lib.sh"

ALL_TESTS="
	param_lost_irq_poll_ms
	param_lost_irq_deadline_ms
	param_lost_irq_poll_always
	param_fail_lost_irq
	param_irq_budget
	param_irq_moderation_us
	param_adaptive_coalescing
	thresholds_not_params
	thresholds_defaults
"

# the policy's thresholds and their documented defaults
THRESHOLDS="coalescing_period_ms=50 high_io_delta=10000 avg_qd_threshold=8
	total_inflight_io_threshold=32 coalescing_max_delay_us=1000"

# param_check NAME DEFAULT: the value given on the command line, or the
# documented default when it is absent, is what the parameter reads
param_check() {
	local v

	v=$(cmdline_value "nvme.$1" "")
	if [ -n "$v" ]; then
		ktap_test_result "nvme.$1=$v took effect" \
			[ "$(cat "/sys/module/nvme/parameters/$1")" = "$v" ]
	else
		ktap_test_result "nvme.$1 absent: the documented default $2" \
			[ "$(cat "/sys/module/nvme/parameters/$1")" = "$2" ]
	fi
}

param_lost_irq_poll_ms() { param_check lost_irq_poll_ms 5; }
param_lost_irq_deadline_ms() { param_check lost_irq_deadline_ms 500; }
param_lost_irq_poll_always() { param_check lost_irq_poll_always 0; }
param_irq_budget() { param_check irq_budget 256; }
param_irq_moderation_us() { param_check irq_moderation_us 0; }
param_adaptive_coalescing() { param_check adaptive_coalescing 1; }

# none of them is a module parameter, nor a debugfs mirror of one
no_threshold_param() {
	local t

	for t in $THRESHOLDS; do
		[ -e "/sys/module/nvme/parameters/${t%=*}" ] && return 1
	done
	for t in lost_irq_poll_ms lost_irq_deadline_ms lost_irq_poll_always irq_budget \
		 irq_moderation_us adaptive_coalescing; do
		[ -e "/sys/kernel/debug/nvme_pci/$t" ] && return 1
	done
	return 0
}

thresholds_not_params() {
	ktap_test_result "thresholds: no module parameters; parameters: no debugfs copy" \
		no_threshold_param
}

thresholds_at_default() {
	local t

	for t in $THRESHOLDS; do
		[ "$(cat "/sys/kernel/debug/nvme_pci/${t%=*}")" = "${t#*=}" ] || return 1
	done
}

thresholds_defaults() {
	if [ ! -e /sys/kernel/debug/nvme_pci/high_io_delta ]; then
		ktap_test_skip "no /sys/kernel/debug/nvme_pci (debugfs)"
		return
	fi
	ktap_test_result "the coalescing thresholds read their defaults in debugfs" \
		thresholds_at_default
}

param_fail_lost_irq() {
	local fail attr=/sys/kernel/debug/nvme_pci/fail_lost_irq got

	fail=$(cmdline_value nvme.fail_lost_irq "")
	if [ ! -d "$attr" ]; then
		ktap_test_skip "no $attr (CONFIG_FAULT_INJECTION_DEBUG_FS)"
	elif [ -z "$fail" ]; then
		ktap_test_result "nvme.fail_lost_irq absent: nothing is dropped" \
			[ "$(cat "$attr/probability")" = 0 ]
	else
		got=$(fail_lost_irq_setting)
		ktap_print_msg "fail_lost_irq: command line $fail, debugfs $got"
		ktap_test_result "nvme.fail_lost_irq=$fail took effect" [ "$got" = "$fail" ]
	fi
}

ktap_print_header
require_root
require_test_devs noio
run_tests

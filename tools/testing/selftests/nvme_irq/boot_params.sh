#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The series' boot parameters take effect: every one given on the kernel
# command line shows up where it is documented to, and every absent one
# reads its documented default.

DIR=$(dirname "$0")
. "$DIR/../kselftest/ktap_helpers.sh"
. "$DIR/lib.sh"

ALL_TESTS="
	param_lost_irq_poll_ms
	param_fail_lost_irq
	param_irq_budget
	param_irq_moderation_us
	param_adaptive_coalescing
	param_coalescing_period_ms
	param_high_io_delta
	param_avg_qd_threshold
	param_total_inflight_io_threshold
	param_coalescing_max_delay_us
"

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
param_irq_budget() { param_check irq_budget 256; }
param_irq_moderation_us() { param_check irq_moderation_us 0; }
param_adaptive_coalescing() { param_check adaptive_coalescing 1; }
param_coalescing_period_ms() { param_check coalescing_period_ms 50; }
param_high_io_delta() { param_check high_io_delta 10000; }
param_avg_qd_threshold() { param_check avg_qd_threshold 8; }
param_total_inflight_io_threshold() { param_check total_inflight_io_threshold 32; }
param_coalescing_max_delay_us() { param_check coalescing_max_delay_us 1000; }

param_fail_lost_irq() {
	local fail attr=/sys/kernel/debug/nvme_pci/fail_lost_irq got

	fail=$(cmdline_value nvme.fail_lost_irq "")
	if [ ! -d "$attr" ]; then
		ktap_test_skip "no $attr (CONFIG_FAULT_INJECTION_DEBUG_FS)"
	elif [ -z "$fail" ]; then
		ktap_test_result "nvme.fail_lost_irq absent: nothing is dropped" \
			[ "$(cat "$attr/probability")" = 0 ]
	else
		got=$(cat "$attr/interval" "$attr/probability" "$attr/space" \
			"$attr/times" | paste -sd,)
		ktap_print_msg "fail_lost_irq: command line $fail, debugfs $got"
		ktap_test_result "nvme.fail_lost_irq=$fail took effect" [ "$got" = "$fail" ]
	fi
}

ktap_print_header
require_root
require_test_devs
run_tests

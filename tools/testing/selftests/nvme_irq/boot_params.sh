#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The series' boot parameters take effect: every one given on the kernel
# command line shows up where it is documented to; absent ones are skipped.

DIR=$(dirname "$0")
. "$DIR/../kselftest/ktap_helpers.sh"
. "$DIR/lib.sh"

ktap_print_header
require_root
ktap_set_plan 10

ms=$(cmdline_value nvme.lost_irq_poll_ms "")
if [ -z "$ms" ]; then
	ktap_test_skip "nvme.lost_irq_poll_ms not on the command line"
else
	ktap_test_result "nvme.lost_irq_poll_ms=$ms took effect" \
		[ "$(cat /sys/module/nvme/parameters/lost_irq_poll_ms)" = "$ms" ]
fi

fail=$(cmdline_value nvme.fail_lost_irq "")
attr=/sys/kernel/debug/nvme_pci/fail_lost_irq
if [ -z "$fail" ]; then
	ktap_test_skip "nvme.fail_lost_irq not on the command line"
elif [ ! -d "$attr" ]; then
	ktap_test_fail "nvme.fail_lost_irq given but $attr missing"
else
	got=$(cat "$attr/interval" "$attr/probability" "$attr/space" \
		"$attr/times" | paste -sd,)
	ktap_print_msg "fail_lost_irq: command line $fail, debugfs $got"
	ktap_test_result "nvme.fail_lost_irq=$fail took effect" [ "$got" = "$fail" ]
fi

budget=$(cmdline_value nvme.irq_budget "")
if [ -z "$budget" ]; then
	ktap_test_skip "nvme.irq_budget not on the command line"
else
	ktap_test_result "nvme.irq_budget=$budget took effect" \
		[ "$(cat /sys/module/nvme/parameters/irq_budget)" = "$budget" ]
fi

us=$(cmdline_value nvme.irq_moderation_us "")
if [ -z "$us" ]; then
	ktap_test_skip "nvme.irq_moderation_us not on the command line"
else
	ktap_test_result "nvme.irq_moderation_us=$us took effect" \
		[ "$(cat /sys/module/nvme/parameters/irq_moderation_us)" = "$us" ]
fi

for p in adaptive_coalescing coalescing_period_ms high_io_delta \
	 avg_qd_threshold total_inflight_io_threshold coalescing_max_delay_us; do
	v=$(cmdline_value "nvme.$p" "")
	if [ -z "$v" ]; then
		ktap_test_skip "nvme.$p not on the command line"
	else
		ktap_test_result "nvme.$p=$v took effect" \
			[ "$(cat "/sys/module/nvme/parameters/$p")" = "$v" ]
	fi
done

ktap_finished

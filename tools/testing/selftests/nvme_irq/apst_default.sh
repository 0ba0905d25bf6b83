#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# APST exit-latency bound: nvme_core.default_ps_max_latency_us is 25000 by
# default, follows the kernel command line, and is what each controller
# starts with as its PM QoS latency tolerance.

DIR=$(dirname "$0")
. "$DIR/../kselftest/ktap_helpers.sh"
. "$DIR/lib.sh"

PARAM=/sys/module/nvme_core/parameters/default_ps_max_latency_us

ktap_print_header
require_root
if [ ! -r "$PARAM" ]; then
	ktap_skip_all "nvme_core is not loaded"
	exit "$KSFT_SKIP"
fi

ctrls=$(nvme_ctrls)
ktap_set_plan $((1 + $(echo "$ctrls" | wc -w)))

want=$(cmdline_value nvme_core.default_ps_max_latency_us 25000)
got=$(cat "$PARAM")
ktap_print_msg "expected $want (kernel command line or default), read $got"
ktap_test_result "default_ps_max_latency_us is $want" [ "$got" = "$want" ]

for c in $ctrls; do
	tol=/sys/class/nvme/$c/power/pm_qos_latency_tolerance_us
	if [ ! -r "$tol" ]; then
		# exposed only for controllers that support APST
		ktap_test_skip "$c: no APST, no latency tolerance to check"
		continue
	fi
	ktap_test_result "$c starts with a latency tolerance of $want us" \
		[ "$(cat "$tol")" = "$want" ]
done

ktap_finished

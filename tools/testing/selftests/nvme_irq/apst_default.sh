#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# APST exit-latency bound: nvme_core.default_ps_max_latency_us is 25000 by
# default, follows the kernel command line, and is what each controller
# starts with as its PM QoS latency tolerance.  On a controller with APST
# the table read back from the device (Get Features 0Ch) targets only
# non-operational states whose exit latency is within that bound, and
# reaches the deepest of them; where the test can ask the device which
# power state it is in (an emulated controller, $NVME_IRQ_QMP), an idle
# controller ends up in that state and in none deeper.

DIR=$(dirname "$0")
. "$DIR/../kselftest/ktap_helpers.sh"
. "$DIR/lib.sh"

PARAM=/sys/module/nvme_core/parameters/default_ps_max_latency_us

ALL_TESTS="
	default_latency
	ctrls_latency_tolerance
	ctrls_apst_table
	ctrls_idle_state
"

default_latency() {
	local got

	got=$(cat "$PARAM")
	ktap_print_msg "expected $want (kernel command line or default), read $got"
	ktap_test_result "default_ps_max_latency_us is $want" [ "$got" = "$want" ]
}

# "PS EXLAT ENLAT" of every non-operational power state of controller $1
nonop_states() {
	local re='^ps +([0-9]+) : .*non-operational.*enlat:([0-9]+) exlat:([0-9]+).*'

	nvme id-ctrl "/dev/$1" 2> /dev/null | sed -nE "s/$re/\1 \3 \2/p"
}
apst_param() {
	cat "/sys/module/nvme_core/parameters/apst_$1" 2> /dev/null || echo 0
}
# The deepest state the table may target, by nvme_core's rules: exit
# latency within the bound, and entry + exit within the primary latency
# tolerance or, with a secondary timeout, the secondary one (with no
# explicit tolerances, any).
deepest_target() {
	awk -v t="$want" -v pt="$(apst_param primary_timeout_ms)" \
	    -v pl="$(apst_param primary_latency_tol_us)" \
	    -v st="$(apst_param secondary_timeout_ms)" \
	    -v sl="$(apst_param secondary_latency_tol_us)" '
		$2 > t { next }
		!pt || !pl || $2 + $3 <= pl || (st && $2 + $3 <= sl) { d = $1 }
		END { print d }' <<< "$1"
}

# the APST table of controller $1 as the device has it: "ENTRY ITPS ITPT_MS"
# for every non-zero entry
apst_table() {
	nvme get-feature "/dev/$1" -f 0xc -b 2> /dev/null | od -An -v -tu8 |
		tr -s ' ' '\n' | grep . | awk '$1 != 0 {
			printf "%d %d %d\n", NR - 1,
				int($1 / 8) % 32, int($1 / 256) % 16777216 }'
}

# the state an idle controller ends in, following the table from ps0, and
# the idle time that takes in ms: "STATE MS"
apst_end() {
	awk 'BEGIN { s = 0; t = 0 }
	     { itps[$1] = $2; itpt[$1] = $3 }
	     END { for (n = 0; n < 32 && (s in itps); n++) {
			t += itpt[s]; s = itps[s] }
		   print s, t }' <<< "$1"
}

declare -A deepest entries0 end_state tol_ok table_ok
idle_ms=0

# table_fits CTRL TABLE STATES: a table, and every target within the bound,
# the deepest state within it among them
table_fits() {
	local c=$1 table=$2 states=$3 e s ms x

	[ -n "$table" ] && [ -n "${deepest[$c]}" ] || return 1
	while read -r e s ms; do
		x=$(awk -v s="$s" '$1 == s { print $2 }' <<< "$states")
		[ -n "$x" ] && [ "$x" -le "$want" ] || return 1
	done <<< "$table"
	awk '{ print $2 }' <<< "$table" | grep -qx "${deepest[$c]}"
}

# What each controller that supports APST (the only ones with a latency
# tolerance) starts with, and the table the device has
probe_run() {
	local c tol table states ms

	apst_ctrls=
	for c in $ctrls; do
		tol=/sys/class/nvme/$c/power/pm_qos_latency_tolerance_us
		[ -r "$tol" ] || continue
		apst_ctrls+=" $c"
		tol_ok[$c]=$([ "$(cat "$tol")" = "$want" ] && echo 1 || echo 0)
		ktap_print_msg "$c: latency tolerance $(cat "$tol") us"
		table=$(apst_table "$c")
		states=$(nonop_states "$c")
		ktap_print_msg "$c: non-operational states (ps exlat enlat): $(echo $states)"
		ktap_print_msg "$c: APST table (entry itps itpt_ms): $(echo $table | tr '\n' ';')"
		# the deepest state within the bound; every target within the bound
		deepest[$c]=$(deepest_target "$states")
		if [ "$want" = 0 ]; then
			table_ok[$c]=$([ -z "$table" ] && echo 1 || echo 0)
			continue
		fi
		table_fits "$c" "$table" "$states"
		table_ok[$c]=$((! $?))
		ktap_print_msg "$c: targets within $want us, down to" \
			"ps${deepest[$c]}: ${table_ok[$c]}"
		read -r end_state[$c] ms <<< "$(apst_end "$table")"
		[ "$ms" -gt "$idle_ms" ] && idle_ms=$ms
		if [ -n "${NVME_IRQ_QMP:-}" ]; then
			entries0[$c]=$("$NVME_IRQ_QMP" get "$("$NVME_IRQ_QMP" dev "$c")" \
				x-power-state-entries 2> /dev/null)
		fi
	done
}

# all_ctrls ARRAY: ARRAY is 1 for every controller with APST
all_ctrls() {
	local -n ok=$1
	local c

	for c in $apst_ctrls; do
		[ "${ok[$c]}" = 1 ] || { ktap_print_msg "$c fails"; return 1; }
	done
}

ctrls_latency_tolerance() {
	once probe probe_run
	if [ -z "$apst_ctrls" ]; then
		ktap_test_skip "no controller with APST: no latency tolerance to check"
		return
	fi
	ktap_test_result "every controller with APST starts with a latency tolerance of $want us" \
		all_ctrls tol_ok
}

ctrls_apst_table() {
	local msg

	once probe probe_run
	if [ -z "$apst_ctrls" ]; then
		ktap_test_skip "no controller with APST: no table"
	elif [ "$want" = 0 ]; then
		ktap_test_result "bound 0: APST off, an empty table on every controller" \
			all_ctrls table_ok
	else
		msg="every controller's APST targets states exiting within $want us,"
		ktap_test_result "$msg down to the deepest" all_ctrls table_ok
	fi
}

# in_deepest CTRL PS ENTRIES: the controller idles in the deepest state the
# bound allows, the one its table ends in, and entered no deeper one
in_deepest() {
	local c=$1 ps=$2 s a b

	[ "$ps" = "${deepest[$c]}" ] && [ "$ps" = "${end_state[$c]}" ] || return 1
	read -ra a <<< "${entries0[$c]}"
	read -ra b <<< "$3"
	for ((s = deepest[$c] + 1; s < ${#b[@]}; s++)); do
		[ "${a[s]}" = "${b[s]}" ] || return 1
	done
	[ "${b[ps]}" -gt "${a[ps]}" ]
}

# Wake every controller with an I/O command (admin commands leave a
# controller in its power state), then leave them all idle past the
# longest chain of idle times; ask each device its power state
idle_run() {
	local c dev ps entries1

	once probe probe_run
	for c in $ctrls; do
		dd if="$(ctrl_ns "$c")" of=/dev/null bs=4k count=1 iflag=direct 2> /dev/null
	done
	[ "$idle_ms" -gt 0 ] &&
		sleep "$(((idle_ms + 700) / 1000)).$(((idle_ms + 700) % 1000 / 100))"
	idle_ok=0
	for c in $apst_ctrls; do
		dev=$("$NVME_IRQ_QMP" dev "$c")
		ps=$("$NVME_IRQ_QMP" get "$dev" x-power-state)
		entries1=$("$NVME_IRQ_QMP" get "$dev" x-power-state-entries)
		ktap_print_msg "$c: idle ${idle_ms} ms + 700: in ps$ps (deepest allowed" \
			"ps${deepest[$c]}); entries per state ${entries0[$c]} -> $entries1"
		in_deepest "$c" "$ps" "$entries1" || idle_ok=1
	done
}

ctrls_idle_state() {
	local c msg

	once probe probe_run
	if [ -z "$apst_ctrls" ]; then
		ktap_test_skip "no controller with APST: no power state to check"
		return
	elif [ "$want" = 0 ]; then
		ktap_test_skip "APST off: no power state to check"
		return
	fi
	for c in $apst_ctrls; do
		if [ -z "${entries0[$c]:-}" ]; then
			msg="the device cannot be asked its power state"
			ktap_test_skip "$msg (no NVME_IRQ_QMP)"
			return
		fi
	done
	once idle idle_run
	msg="idle, every device is in the deepest state the bound allows"
	ktap_test_result "$msg and entered no deeper one" [ "$idle_ok" = 0 ]
}

ktap_print_header
require_root
require_test_devs noio
if [ ! -r "$PARAM" ]; then
	ktap_skip_all "nvme_core is not loaded"
	exit "$KSFT_SKIP"
fi
ctrls=$(nvme_ctrls)
want=$(cmdline_value nvme_core.default_ps_max_latency_us 25000)
run_tests

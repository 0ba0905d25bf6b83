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

ktap_print_header
require_root
require_test_devs
if [ ! -r "$PARAM" ]; then
	ktap_skip_all "nvme_core is not loaded"
	exit "$KSFT_SKIP"
fi

ctrls=$(nvme_ctrls)
ktap_set_plan $((1 + 3 * $(echo "$ctrls" | wc -w)))

want=$(cmdline_value nvme_core.default_ps_max_latency_us 25000)
got=$(cat "$PARAM")
ktap_print_msg "expected $want (kernel command line or default), read $got"
ktap_test_result "default_ps_max_latency_us is $want" [ "$got" = "$want" ]

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

declare -A deepest entries0 end_state
idle_ms=0
for c in $ctrls; do
	tol=/sys/class/nvme/$c/power/pm_qos_latency_tolerance_us
	if [ ! -r "$tol" ]; then
		# exposed only for controllers that support APST
		ktap_test_skip "$c: no APST, no latency tolerance to check"
		ktap_test_skip "$c: no APST table"
		ktap_test_skip "$c: no APST, no power state to check"
		continue
	fi
	ktap_test_result "$c starts with a latency tolerance of $want us" \
		[ "$(cat "$tol")" = "$want" ]

	table=$(apst_table "$c")
	states=$(nonop_states "$c")
	ktap_print_msg "$c: non-operational states (ps exlat enlat): $(echo $states)"
	ktap_print_msg "$c: APST table (entry itps itpt_ms): $(echo $table | tr '\n' ';')"
	# the deepest state within the bound; every target within the bound
	deepest[$c]=$(deepest_target "$states")
	table_ok() {
		local e s ms x

		[ -n "$table" ] && [ -n "${deepest[$c]}" ] || return 1
		while read -r e s ms; do
			x=$(awk -v s="$s" '$1 == s { print $2 }' <<< "$states")
			[ -n "$x" ] && [ "$x" -le "$want" ] || return 1
		done <<< "$table"
		awk '{ print $2 }' <<< "$table" | grep -qx "${deepest[$c]}"
	}
	if [ "$want" = 0 ]; then
		ktap_test_result "$c: bound 0: APST off, an empty table" [ -z "$table" ]
		continue
	fi
	msg="$c: APST targets states exiting within $want us, down to"
	ktap_test_result "$msg ps${deepest[$c]}" table_ok
	read -r end_state[$c] ms <<< "$(apst_end "$table")"
	[ "$ms" -gt "$idle_ms" ] && idle_ms=$ms
	if [ -n "${NVME_IRQ_QMP:-}" ]; then
		entries0[$c]=$("$NVME_IRQ_QMP" get "$("$NVME_IRQ_QMP" dev "$c")" \
			x-power-state-entries 2> /dev/null)
	fi
done

# wake every controller with an I/O command (admin commands leave a
# controller in its power state), then leave them all idle past the
# longest chain of idle times
for c in $ctrls; do
	dd if="$(ctrl_ns "$c")" of=/dev/null bs=4k count=1 iflag=direct 2> /dev/null
done
[ "$idle_ms" -gt 0 ] && sleep "$(((idle_ms + 700) / 1000)).$(((idle_ms + 700) % 1000 / 100))"

for c in $ctrls; do
	[ -r "/sys/class/nvme/$c/power/pm_qos_latency_tolerance_us" ] || continue
	if [ "$want" = 0 ]; then
		ktap_test_skip "$c: APST off: no power state to check"
		continue
	fi
	if [ -z "${entries0[$c]:-}" ]; then
		ktap_test_skip "$c: the device cannot be asked its power state (no NVME_IRQ_QMP)"
		continue
	fi
	dev=$("$NVME_IRQ_QMP" dev "$c")
	ps=$("$NVME_IRQ_QMP" get "$dev" x-power-state)
	entries1=$("$NVME_IRQ_QMP" get "$dev" x-power-state-entries)
	ktap_print_msg "$c: idle ${idle_ms} ms + 700: in ps$ps; entries per state" \
		"${entries0[$c]} -> $entries1"
	idle_in_deepest() {
		local s a b

		[ "$ps" = "${deepest[$c]}" ] && [ "$ps" = "${end_state[$c]}" ] || return 1
		# no state deeper than the bound entered while idle
		read -ra a <<< "${entries0[$c]}"
		read -ra b <<< "$entries1"
		for ((s = deepest[$c] + 1; s < ${#b[@]}; s++)); do
			[ "${a[s]}" = "${b[s]}" ] || return 1
		done
		[ "${b[ps]}" -gt "${a[ps]}" ]
	}
	ktap_test_result "$c: idle, the device is in ps${deepest[$c]} and entered no deeper state" \
		idle_in_deepest
done

ktap_finished

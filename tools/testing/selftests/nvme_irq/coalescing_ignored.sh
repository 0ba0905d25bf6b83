#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Feature 08h accepted is not Feature 08h applied.  The project's QEMU with
# x-irq-coalescing-ignored=1 takes 08h and reads it back but signals every
# completion.  Under a QD4 load on the first named namespace's controller
# (the thresholds at 0: any load engages; rounds of it until the verdict,
# at most eight), adaptive coalescing judges 08h
# by the handler runs per completion of the queue it carries, finds no
# effect, says "feature_08h: ignored" and logs it once, switches the
# controller's 08h back to 0 (read back from the device) and has genirq
# moderate the busy queue; verify is clean.  After a controller reset with
# the property back at 0, 08h is tried and judged again, and the
# controller carries the queue.  The controller is reset twice.

DIR=$(dirname "$0")
. "$DIR/../kselftest/ktap_helpers.sh"
. "$DIR/lib.sh"

WORK=${TMPDIR:-/tmp}/nvme_irq_coalescing_ignored
DBG=/sys/kernel/debug/nvme_pci
SWITCH=/sys/module/nvme/parameters/adaptive_coalescing

ALL_TESTS="
	ignored_fio_clean
	ignored_found
	ignored_logged_once
	ignored_switched_off
	ignored_genirq_carries
	reset_fio_clean
	reset_applied
"

key() {		# key KEY: the controller's KEY in its coalescing file
	awk -v k="$1:" '$1 == k { print $2 }' "$DBG/$CTRL/coalescing"
}

ignore() {	# ignore 0|1: the device ignores Feature 08h
	"$NVME_IRQ_QMP" set "$dev" x-irq-coalescing-ignored "$1"
}

reset_ctrl() {	# reset the controller, wait until it is live again
	echo 1 > "/sys/class/nvme/$CTRL/reset_controller" && wait_ctrl_live "$CTRL"
}

# round NAME: QD4 random writes over $NS, read back and verified; the
# largest genirq delay of this code on a queue once 08h was found ignored,
# and every actuator seen meanwhile, sampled into max_delay and actuators.
# At QD4 under TCG a handler run finds about one completion without
# coalescing, so that 08h's effect on the runs would show; at QD32 each run
# already reaps more than 08h would gather, and the driver rightly cannot
# tell
round() {
	local pid d a

	fio_json "$1" --name=w16 --filename="$NS" --rw=randwrite --bs=4k \
		--size=32m --ioengine=libaio --direct=1 --iodepth=4 \
		--verify=crc32c --verify_fatal=1 > "$WORK/$1.out" &
	pid=$!
	while kill -0 "$pid" 2> /dev/null; do
		d=$(awk '$1 == "feature_08h:" { on = $2 == "ignored" }
			on && $1 ~ /^q[0-9]+\.irq_delay_us:$/ && $2 > m { m = $2 }
			END { print m + 0 }' "$DBG/$CTRL/coalescing")
		[ "$d" -gt "$max_delay" ] && max_delay=$d
		a=$(key actuator)
		case " $actuators " in *" $a "*) ;; *) actuators+=" $a" ;; esac
		pause 0.2
	done
	wait "$pid"
}

# loaded NAME DONE: rounds of load until the shell test DONE holds, at most
# ROUNDS of them: a verdict needs three judged periods, and a fast host
# finishes one round in fewer.  Fails if any round's verify did.
ROUNDS=8
loaded() {
	local n rc=0

	max_delay=0 actuators=
	for ((n = 1; n <= ROUNDS; n++)); do
		round "$1" || rc=1
		ktap_print_msg "$1, round $n: $(sed -n 's/^# //p' "$WORK/$1.out");" \
			"feature_08h: $(key feature_08h)," \
			"effect: $(key feature_08h_effect), lead: $(key feature_08h_lead)," \
			"actuators seen:$actuators, largest genirq delay once ignored $max_delay us"
		eval "$2" && break
	done
	return $rc
}

ignored_run() {
	mark_dmesg
	ignore 1 && reset_ctrl || return 1
	loaded ignored '[ "$(key feature_08h)" = ignored ] && [ "$max_delay" -gt 0 ]'
	ignored_fio=$?
	ignored_feat=$(key feature_08h)
	ignored_actuator=$(key actuator)
	ignored_dw11=$(key feature_08h_dw11)
	ignored_dev=$(feat "$CTRL" -f 8)
	ignored_delay=$max_delay
	ignored_logs=$(dmesg_since |
		grep -c "$CTRL: interrupt coalescing: Feature 08h .* accepted but not applied")
	ktap_print_msg "08h in the driver $ignored_dw11, read back $ignored_dev;" \
		"$ignored_logs message(s)"
	dmesg_since | grep "accepted but not applied" | sed 's/^/# /'
}

ignored_fio_clean() {
	once ignored_run
	ktap_test_result "08h ignored: QD4 random writes verify clean" [ "${ignored_fio:-1}" = 0 ]
}

ignored_found() {
	once ignored_run
	ktap_test_result "08h ignored: feature_08h: ignored, actuator: genirq" \
		[ "${ignored_feat:-}:${ignored_actuator:-}" = ignored:genirq ]
}

ignored_logged_once() {
	once ignored_run
	ktap_test_result "08h ignored: one info line" [ "${ignored_logs:-0}" = 1 ]
}

ignored_switched_off() {
	once ignored_run
	ktap_test_result "08h ignored: switched back to 0, in the driver and on the device" \
		[ "${ignored_dw11:-}:${ignored_dev:-}" = 0x0:0 ]
}

ignored_genirq_carries() {
	once ignored_run
	ktap_test_result "08h ignored: then genirq moderated the busy queue" \
		[ "${ignored_delay:-0}" -gt 0 ]
}

reset_run() {
	once ignored_run
	ignore 0 && reset_ctrl || return 1
	reset_feat_before=$(key feature_08h)
	loaded applied '[ "$(key feature_08h_effect)" = seen ]'
	reset_fio=$?
	reset_feat=$(key feature_08h)
	reset_effect=$(key feature_08h_effect)
	reset_actuators=$actuators
}

reset_fio_clean() {
	once reset_run
	ktap_test_result "applied after a reset: QD4 random writes verify clean" \
		[ "${reset_fio:-1}" = 0 ]
}

device_carried() {
	[ "$reset_feat_before" = untried ] && [ "$reset_feat" = accepted ] &&
		[ "$reset_effect" = seen ] && [[ " $reset_actuators " == *" device "* ]]
}

reset_applied() {
	once reset_run
	ktap_test_result "after a reset: 08h tried again, effect seen, the device carries it" \
		device_carried
}

cleanup() {
	ignore 0 > /dev/null 2>&1
}

ktap_print_header
require_root
require_test_devs
NS=$(first_ns)
CTRL=$(ns_ctrl "${NS#/dev/}")
if [ ! -e "$SWITCH" ] || [ ! -r "$DBG/$CTRL/coalescing" ] || ! command -v nvme > /dev/null; then
	ktap_skip_all "needs debugfs, adaptive coalescing in nvme-pci and nvme-cli"
	exit "$KSFT_SKIP"
fi
if [ "$(cmdline_value nvme.adaptive_coalescing 1)" = 0 ] ||
   grep -qw noirqmoderation /proc/cmdline; then
	ktap_skip_all "adaptive coalescing or genirq moderation is off on the command line"
	exit "$KSFT_SKIP"
fi
if [ -z "${NVME_IRQ_QMP:-}" ] || ! dev=$("$NVME_IRQ_QMP" dev "$CTRL" 2> /dev/null) ||
   ! "$NVME_IRQ_QMP" get "$dev" x-irq-coalescing-ignored > /dev/null 2>&1; then
	ktap_skip_all "needs the project's QEMU, which can ignore Feature 08h (NVME_IRQ_QMP)"
	exit "$KSFT_SKIP"
fi
# Get Features 08h, supported capabilities: changeable (QEMU's
# irq-coalescing=on) or not
cap=$(feat "$CTRL" -f 8 -s 3)
if [ $((cap & 4)) -eq 0 ] || [ "$cap" -lt 0 ]; then
	ktap_skip_all "$CTRL does not let Feature 08h be changed (QEMU without irq-coalescing=on)"
	exit "$KSFT_SKIP"
fi
mkdir -p "$WORK" || exit 1
at_exit cleanup
# thresholds any load passes: the load, not the depth, engages the queues
echo 1 > "$SWITCH"
echo 50 > "$DBG/coalescing_period_ms"
echo 1 > "$DBG/high_io_delta"
echo 0 > "$DBG/avg_qd_threshold"
echo 0 > "$DBG/total_inflight_io_threshold"
echo 1000 > "$DBG/coalescing_max_delay_us"
ktap_print_msg "$NS on $CTRL"
run_tests

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Lost completion interrupts: the fail_lost_irq injector drops I/O queue
# interrupts; with the poller on, I/O completes and verifies, nothing times
# out, the counters and the tracepoint show the recoveries and one warning
# per controller names the vector.  With the poller off, an I/O hit by the
# injector stalls until io_timeout and ends in "completion polled", as in
# the field.  Bad parameter values are rejected; controller resets during
# injected loss do not hang or lose data.  Only MSI/MSI-X vectors are
# dropped: an INTx line left asserted would storm its CPU.

DIR=$(dirname "$0")
. "$DIR/../kselftest/ktap_helpers.sh"
. "$DIR/lib.sh"

DBG=/sys/kernel/debug/nvme_pci
FAIL=$DBG/fail_lost_irq
PARAM=/sys/module/nvme/parameters/lost_irq_poll_ms
DEADLINE=/sys/module/nvme/parameters/lost_irq_deadline_ms
WORK=${TMPDIR:-/tmp}/nvme_irq_lost
WARNING="no completion interrupt arrived on queue"
FPARAM=/sys/module/nvme/parameters/fail_lost_irq

ALL_TESTS="
	loss_q1_fio_clean
	loss_half_fio_clean
	loss_counted
	loss_traced
	loss_work_rescued
	loss_no_timeout
	loss_warned_once
	poll_ms_rejects_negative
	poll_ms_rejects_text
	poll_ms_rejects_too_big
	poll_ms_rejects_overflow
	poll_ms_rejects_empty
	deadline_rejects_bad
	poll_always_rejects_bad
	armed_rejects_bad
	fail_qid_rejects_too_big
	fail_param_rejects_trailing_text
	fail_param_rejects_percentage
	fail_param_rejects_three_fields
	fail_param_rejects_five_fields
	fail_param_rejects_zero_interval
	fail_param_rejects_negative_space
	fail_param_rejects_wide_space
	fail_param_rejects_times_below_no_limit
	fail_param_takes_valid
	poller_off_read_completes
	poller_off_completion_polled
	resets_all_started
	resets_fio_clean
	resets_ctrl_live
	resets_no_timeout
	removal_debugfs_gone
	removal_rescan_back
	removal_no_timeout
"

inject() {	# inject QID PROBABILITY: 0 0 turns it off
	echo "$1" > "$DBG/fail_lost_irq_qid"
	echo 0 > "$FAIL/verbose"
	echo 1 > "$FAIL/interval"
	echo -1 > "$FAIL/times"
	echo 0 > "$FAIL/space"
	echo "$2" > "$FAIL/probability"
}
cleanup() {
	inject 0 0
	echo "$default_ms" > "$PARAM"
}

counter() {	# counter CTRL KEY
	nvme_pci_key "$1" lost_irq "$2"
}
total_recoveries() {
	local c n=0

	for c in $ctrls; do
		n=$((n + $(counter "$c" recoveries)))
	done
	echo "$n"
}

# fio_verify NAME [extra fio options]: randrw with crc32c verify on every
# namespace, one job per drive and CPU; true if fio reports no error
fio_verify() {
	local name=$1
	shift
	fio_json "$name" --rw=randrw --bs=4k --ioengine=libaio --direct=1 \
		--iodepth=16 --size=8m --verify=crc32c --verify_fatal=1 \
		--numjobs=1 "$@" $(fio_all_drives)
}

timeouts_since_mark() {
	dmesg_since | grep -c timeout
}

# Every interrupt of queue 1 lost, then half of all I/O queues' ones.  The
# warning is printed once per controller: one that already printed it (a
# vCPU the host stalled for a poll interval can look like a lost interrupt,
# here at boot) prints no second one.
loss_run() {
	local c n before warned_before fresh=0

	warned_before=
	for c in $ctrls; do
		[ "$(counter "$c" warned)" = 1 ] && warned_before+=" $c"
	done
	mark_dmesg
	before=$(total_recoveries)
	inject 1 100
	fio_verify all-q1 --cpus_allowed=0-$(($(nproc) - 1)) --cpus_allowed_policy=split
	loss_q1=$?
	inject 0 50
	# and which workqueue the recovery work went to
	work_fn=$(awk '$3 == "lost_irq_work_fn" { print $1; exit }' /proc/kallsyms)
	[[ "$work_fn" =~ [1-9a-f] ]] || work_fn=	# hidden (kptr_restrict)
	trace-cmd start -e nvme_pci:nvme_lost_irq_recovered \
		-e workqueue:workqueue_queue_work -f "function == 0x$work_fn" \
		> /dev/null 2>&1
	fio_verify half-all
	loss_half=$?
	trace-cmd stop > /dev/null 2>&1
	trace-cmd show > "$WORK/trace.txt" 2> /dev/null
	trace-cmd reset > /dev/null 2>&1
	inject 0 0
	loss_recoveries=$(($(total_recoveries) - before))
	ktap_print_msg "recoveries: $before before, $((before + loss_recoveries)) after"
	loss_events=$(grep -c 'nvme_lost_irq_recovered:.*reaped=' "$WORK/trace.txt")
	ktap_print_msg "$loss_events nvme_lost_irq_recovered events traced"
	grep 'workqueue_queue_work:.*function=lost_irq_work_fn' "$WORK/trace.txt" \
		> "$WORK/work.txt"
	loss_work=$(wc -l < "$WORK/work.txt")
	loss_work_elsewhere=$(grep -vc 'workqueue=nvme-lost-irq ' "$WORK/work.txt")
	ktap_print_msg "recovery work queued $loss_work times," \
		"$loss_work_elsewhere not on nvme-lost-irq"
	loss_timeouts=$(timeouts_since_mark)
	loss_once=true
	for c in $ctrls; do
		n=$(dmesg_since | grep "$c: " | grep -c "$WARNING")
		[ "$(counter "$c" recoveries)" -gt 0 ] || continue
		[ "$(counter "$c" warned)" = 1 ] || loss_once=false
		if [[ " $warned_before " == *" $c "* ]]; then
			ktap_print_msg "$c: warned before this test, now $n more time(s)"
			[ "$n" -eq 0 ] || loss_once=false
		else
			ktap_print_msg "$c: warning printed $n time(s)"
			[ "$n" -eq 1 ] || loss_once=false
			fresh=$((fresh + 1))
		fi
	done
	# a fresh warning must name the vector and its chip
	loss_named=true
	if [ "$fresh" -gt 0 ] &&
	   ! dmesg_since | grep "$WARNING" | grep -q 'irq [0-9]* (chip '; then
		loss_named=false
	fi
	loss_fresh=$fresh
}

loss_q1_fio_clean() {
	once loss_run
	ktap_test_result "fio verify clean with every queue 1 interrupt lost" \
		[ "$loss_q1" = 0 ]
}

loss_half_fio_clean() {
	once loss_run
	ktap_test_result "fio verify clean with 50% of all I/O queue interrupts lost" \
		[ "$loss_half" = 0 ]
}

loss_counted() {
	once loss_run
	ktap_test_result "recovery counters grew" [ "$loss_recoveries" -gt 0 ]
}

loss_traced() {
	once loss_run
	ktap_test_result "tracepoint reported recoveries" [ "$loss_events" -gt 0 ]
}

# Recovery completes I/O that reclaim may wait for: its workqueue must have
# a rescuer (WQ_MEM_RECLAIM), whose thread is kworker/R-<workqueue>
loss_work_rescued() {
	local ok=false

	once loss_run
	if [ -z "$work_fn" ]; then
		ktap_test_skip "/proc/kallsyms hides addresses (kptr_restrict)"
		return
	fi
	[ "$loss_work" -gt 0 ] && [ "$loss_work_elsewhere" = 0 ] &&
		grep -qx 'kworker/R-nvme-lost-irq' /proc/[0-9]*/comm && ok=true
	ktap_test_result "recovery work queued only on nvme-lost-irq, which has a rescuer" $ok
}

loss_no_timeout() {
	once loss_run
	ktap_test_result "no I/O timed out" [ "$loss_timeouts" = 0 ]
}

loss_warned_once() {
	once loss_run
	if [ "$loss_fresh" -gt 0 ]; then
		ktap_test_result "one warning per controller, naming the vector" \
			[ "$loss_once:$loss_named" = true:true ]
	else
		ktap_test_result "one warning per controller (all printed it before this test)" \
			$loss_once
	fi
}

# Bad values of the parameter and the knob are rejected, value kept
poll_ms_rejects() {
	echo 7 > "$PARAM"
	ktap_test_result "lost_irq_poll_ms rejects '$1' and keeps 7" \
		rejects_keeps "$PARAM" "$1"
	echo "$default_ms" > "$PARAM"
}

poll_ms_rejects_negative() { poll_ms_rejects -1; }
poll_ms_rejects_text() { poll_ms_rejects abc; }
poll_ms_rejects_too_big() { poll_ms_rejects 1001; }
poll_ms_rejects_overflow() { poll_ms_rejects 99999999999999999999; }
# rejects_keeps with no value writes the empty string
poll_ms_rejects_empty() {
	echo 7 > "$PARAM"
	ktap_test_result "lost_irq_poll_ms rejects '' and keeps 7" \
		rejects_keeps "$PARAM"
	echo "$default_ms" > "$PARAM"
}

# the empty word in a function: ktap_test_result runs its command unquoted
deadline_rejects_all() {
	rejects_keeps "$DEADLINE" -1 abc 60001 1e3 ""
}

deadline_rejects_bad() {
	echo 700 > "$DEADLINE"
	ktap_test_result "lost_irq_deadline_ms rejects -1, abc, 60001, 1e3 and '' and keeps 700" \
		deadline_rejects_all
	echo "$default_deadline" > "$DEADLINE"
}

poll_always_rejects_bad() {
	local f=/sys/module/nvme/parameters/lost_irq_poll_always

	ktap_test_result "lost_irq_poll_always rejects 2, -1, yes and keeps its value" \
		rejects_keeps "$f" 2 -1 yes
}

armed_rejects_bad() {
	ktap_test_result "$first's lost_irq_armed rejects 2, -1, on and keeps its value" \
		rejects_keeps "$DBG/$first/lost_irq_armed" 2 -1 on
}

fail_qid_rejects_too_big() {
	echo 3 > "$DBG/fail_lost_irq_qid"
	ktap_test_result "fail_lost_irq_qid rejects 70000 and keeps 3" \
		rejects_keeps "$DBG/fail_lost_irq_qid" 70000
	echo 0 > "$DBG/fail_lost_irq_qid"
}

# nvme.fail_lost_irq takes four integers (an interval of at least 1, a
# percentage, a space of 0 to INT_MAX, times), nothing else; a rejected
# value leaves the injector as it was
fail_param_rejects() {
	echo 0 > "$FAIL/probability"
	if echo "$1" > "$FPARAM" 2> /dev/null; then
		ktap_test_fail "fail_lost_irq rejects '$1'"
	else
		ktap_test_result "fail_lost_irq rejects '$1', probability stays 0" \
			[ "$(cat "$FAIL/probability")" = 0 ]
	fi
}

fail_param_rejects_trailing_text() { fail_param_rejects 1,50,0,1junk; }
fail_param_rejects_percentage() { fail_param_rejects 1,101,0,1; }
fail_param_rejects_three_fields() { fail_param_rejects 1,50,0; }
fail_param_rejects_five_fields() { fail_param_rejects 1,50,0,1,9; }
fail_param_rejects_zero_interval() { fail_param_rejects 0,50,0,1; }
fail_param_rejects_negative_space() { fail_param_rejects 1,50,-1,1; }
fail_param_rejects_wide_space() { fail_param_rejects 1,50,4294967296,1; }
fail_param_rejects_times_below_no_limit() { fail_param_rejects 1,50,0,-2; }

# each field where it belongs (probability 0: nothing dropped), then the
# defaults back
fail_param_takes_valid() {
	local v got ok=0

	for v in 3,0,4096,7 1,0,0,-1; do
		if ! echo "$v" > "$FPARAM"; then
			ktap_print_msg "fail_lost_irq refused '$v'"
			ok=1
		else
			got=$(fail_lost_irq_setting)
			[ "$got" = "$v" ] ||
				{ ktap_print_msg "fail_lost_irq '$v' stored as '$got'"; ok=1; }
		fi
	done
	ktap_test_result "fail_lost_irq takes '3,0,4096,7' and '1,0,0,-1' as written" [ $ok = 0 ]
	inject 0 0
}

# Poller off, every interrupt of queue 1 lost, short timeout: the read
# stalls until io_timeout and is found by nvme_timeout(), as in the field
poller_off_run() {
	local dev cpu old_timeout start

	dev=$(ctrl_ns "$first")
	dev=${dev#/dev/}
	cpu=$(cut -d, -f1 "/sys/block/$dev/mq/0/cpu_list" | cut -d- -f1)
	old_timeout=$(cat "/sys/block/$dev/queue/io_timeout")
	echo 2000 > "/sys/block/$dev/queue/io_timeout"
	echo 0 > "$PARAM"
	echo 0 > "$DEADLINE"
	mark_dmesg
	inject 1 100
	start=$(date +%s%N)
	taskset -c "$cpu" dd if=/dev/$dev of=/dev/null bs=4k count=1 iflag=direct 2> /dev/null
	off_rc=$?
	off_ms=$((($(date +%s%N) - start) / 1000000))
	inject 0 0
	echo "$default_ms" > "$PARAM"
	echo "$default_deadline" > "$DEADLINE"
	echo "$old_timeout" > "/sys/block/$dev/queue/io_timeout"
	ktap_print_msg "read on CPU $cpu (queue 1) with the poller off took $off_ms ms"
	off_polled=false
	dmesg_since | grep -q 'QID 1 timeout, completion polled' && off_polled=true
}

poller_off_read_completes() {
	once poller_off_run
	ktap_test_result "poller off: the read still completes" [ "$off_rc" -eq 0 ]
}

poller_off_completion_polled() {
	once poller_off_run
	ktap_test_result "poller off: nvme_timeout() logs 'completion polled'" \
		$off_polled
}

# Controller resets in a loop during injected-loss I/O
resets_run() {
	local fio_pid i t

	mark_dmesg
	inject 0 30
	fio_verify reset --time_based --runtime=12 &
	fio_pid=$!
	resets=0
	for i in 1 2 3 4; do
		sleep 2
		echo 1 > "/sys/class/nvme/$first/reset_controller" && resets=$((resets + 1))
		for t in $(seq 50); do
			[ "$(cat "/sys/class/nvme/$first/state")" = live ] && break
			sleep 0.2
		done
	done
	wait $fio_pid
	resets_fio=$?
	inject 0 0
	ktap_print_msg "$resets resets of $first during the run"
	resets_state=$(cat "/sys/class/nvme/$first/state")
	resets_timeouts=$(timeouts_since_mark)
}

resets_all_started() {
	once resets_run
	ktap_test_result "resets during injected loss: all 4 resets were started" \
		[ "$resets" -eq 4 ]
}

resets_fio_clean() {
	once resets_run
	ktap_test_result "resets during injected loss: fio verify clean" \
		[ "$resets_fio" -eq 0 ]
}

resets_ctrl_live() {
	once resets_run
	ktap_test_result "resets during injected loss: $first is live" \
		[ "$resets_state" = live ]
}

resets_no_timeout() {
	once resets_run
	ktap_test_result "resets during injected loss: nothing timed out" \
		[ "$resets_timeouts" = 0 ]
}

# Remove the last controller's PCI function during injected-loss I/O (its
# I/O fails, nothing else may), then rescan the bus
removal_run() {
	local last pcidev fio_pid t subsys

	last=$(echo "$ctrls" | tail -n 1)
	pcidev=$(basename "$(readlink -f "/sys/class/nvme/$last/device")")
	nctrls=$(echo "$ctrls" | wc -w)
	mark_dmesg
	inject 0 30
	fio --name=gone --filename="$(ctrl_ns "$last")" --rw=randread --bs=4k \
		--ioengine=libaio --direct=1 --iodepth=16 --runtime=10 --time_based \
		> /dev/null 2>&1 &
	fio_pid=$!
	sleep 2
	subsys=$(ctrl_subsys "$last")
	echo 1 > "/sys/bus/pci/devices/$pcidev/remove"
	wait $fio_pid
	removal_gone=$([ -e "$DBG/$last" ] && echo present || echo removed)
	wait_subsys_gone "$subsys"
	echo 1 > /sys/bus/pci/rescan
	for t in $(seq 50); do
		[ "$(nvme_ctrls | wc -w)" -eq "$nctrls" ] && break
		sleep 0.2
	done
	inject 0 0
	ktap_print_msg "removed $pcidev ($last) during I/O; its debugfs directory: $removal_gone"
	removal_ctrls=$(nvme_ctrls | wc -w)
	removal_timeouts=$(timeouts_since_mark)
}

removal_debugfs_gone() {
	once removal_run
	ktap_test_result "removal during injected loss: debugfs directory removed" \
		[ "$removal_gone" = removed ]
}

removal_rescan_back() {
	once removal_run
	ktap_test_result "removal during injected loss: rescan brings $nctrls controllers back" \
		[ "$removal_ctrls" -eq "$nctrls" ]
}

removal_no_timeout() {
	once removal_run
	ktap_test_result "removal during injected loss: nothing timed out" \
		[ "$removal_timeouts" = 0 ]
}

ktap_print_header
require_root
require_test_devs
if [ ! -w "$PARAM" ] || [ ! -w "$DEADLINE" ] || [ ! -d "$FAIL" ]; then
	ktap_skip_all "needs nvme.lost_irq_poll_ms and CONFIG_FAULT_INJECTION_DEBUG_FS"
	exit "$KSFT_SKIP"
fi
ctrls=$(nvme_ctrls)
if [ -z "$ctrls" ]; then
	ktap_skip_all "no NVMe controller"
	exit "$KSFT_SKIP"
fi
first=$(echo "$ctrls" | head -n 1)
mkdir -p "$WORK"
default_ms=$(cat "$PARAM")
default_deadline=$(cat "$DEADLINE")
# the poller from the start, as on a platform known to lose interrupts:
# each loss waits milliseconds, not a deadline (lost_msix.sh tests those)
poll_always
at_exit cleanup
run_tests

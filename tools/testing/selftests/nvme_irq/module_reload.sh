#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# nvme built as a module, as distributions build it: loaded with every I/O
# vector moderated at the longest delay and the poller on, it serves I/O
# with interrupts held; unloaded at once under I/O, while a moderated
# vector holds an interrupt, and loaded again, it verifies I/O.  With
# kmemleak, nothing leaked: the moderation state of the freed vectors
# included (their descriptors go with the MSI-X vectors, so a reloaded
# driver gets fresh ones whatever happened to the old state; the KUnit case
# dropped_with_the_handler_that_set_it covers a descriptor that stays).
# Skipped when nvme is built in.  NVME_IRQ_MODROOT names the module tree
# (an INSTALL_MOD_PATH) if the modules are not under /lib/modules.

DIR=$(dirname "$0")
. "$DIR/../kselftest/ktap_helpers.sh"
. "$DIR/lib.sh"

WORK=${TMPDIR:-/tmp}/nvme_irq_module_reload
KML=/sys/kernel/debug/kmemleak

ALL_TESTS="
	loads_moderated
	io_with_interrupts_held
	unload_under_io
	reload_ctrls_back
	reload_verified_io
	kmemleak_nothing
"

# unnamed_ctrls: the PCIe controllers NVME_IRQ_TEST_DEVS does not name
unnamed_ctrls() {
	local c named=" $(echo $(nvme_ctrls)) "

	for c in /sys/bus/pci/drivers/nvme/*/nvme/nvme*; do
		[ -e "$c" ] || continue
		c=$(basename "$c")
		case "$named" in
		*" $c "*) ;;
		*) echo "$c" ;;
		esac
	done
}
# ns_ids: "serial nsid" of every named namespace, sorted: what the names
# stand for
ns_ids() {
	local dev c

	for dev in $NVME_IRQ_TEST_DEVS; do
		c=$(ns_ctrl "${dev#/dev/}")
		echo "$(tr -d ' ' < "/sys/class/nvme/$c/serial" 2> /dev/null)" \
			"$(cat "/sys/block/${dev#/dev/}/nsid" 2> /dev/null)"
	done | sort
}
# wait_drives: every named namespace there and its controller live; prints
# how many are
wait_drives() {
	local t c n dev

	for t in $(seq 100); do
		n=0
		for dev in $NVME_IRQ_TEST_DEVS; do
			c=$(ns_ctrl "${dev#/dev/}")
			[ -b "$dev" ] && [ -n "$c" ] &&
				[ "$(cat "/sys/class/nvme/$c/state" 2> /dev/null)" = live ] &&
				n=$((n + 1))
		done
		[ "$n" -eq "$(echo $NVME_IRQ_TEST_DEVS | wc -w)" ] && break
		sleep 0.2
	done
	echo "$n"
}
held_sum() {
	local irq s=0

	for irq in $(nvme_io_irqs); do
		s=$((s + $(awk '$1 == "held:" { print $2 }' \
			"/proc/irq/$irq/moderation_stats" 2> /dev/null || echo 0)))
	done
	echo "$s"
}
moderated_vectors() {
	local irq n=0

	for irq in $(nvme_io_irqs); do
		[ "$(cat "/proc/irq/$irq/moderation_us" 2> /dev/null || echo 0)" = 0 ] ||
			n=$((n + 1))
	done
	echo "$n"
}

loads_moderated() {
	ktap_test_result "nvme loads with its I/O vectors moderated" \
		[ "$loaded_n" -gt 0 -a "$loaded_m" -gt 0 ]
}

held_run() {
	fio_json held --rw=randread --bs=4k --ioengine=libaio --direct=1 \
		--iodepth=32 --time_based --runtime=3 $(fio_all_drives) > /dev/null
	held_fio=$?
	held=$(held_sum)
	ktap_print_msg "interrupts held: $held"
}

io_with_interrupts_held() {
	once held held_run
	ktap_test_result "I/O completes with interrupts held" \
		[ "$held_fio" -eq 0 -a "$held" -gt 0 ]
}

# unload under I/O: a moderated vector holds an interrupt as it is freed
unload_run() {
	local pid

	once held held_run
	fio --name=gone --rw=randread --bs=4k --ioengine=libaio --direct=1 \
		--iodepth=32 --time_based --runtime=5 $(fio_all_drives) > /dev/null 2>&1 &
	pid=$!
	sleep 0.5
	nvme_modprobe -r nvme
	unload_rc=$?
	wait $pid
	unload_gone=$([ -d /sys/module/nvme ] && echo no || echo yes)
}

unload_under_io() {
	once unload unload_run
	ktap_test_result "unloaded under I/O with interrupts held" \
		[ "$unload_rc:$unload_gone" = 0:yes ]
}

reload_run() {
	once unload unload_run
	nvme_modprobe nvme
	reload_n=$(wait_drives)
	ktap_print_msg "loaded again: $reload_n drive(s), $(moderated_vectors) moderated vector(s)"
}

reload_ctrls_back() {
	once reload reload_run
	ktap_test_result "loaded again: every controller back" [ "$reload_n" -gt 0 ]
}

# the probes may finish in another order: write only if every name is
# still the same drive's namespace
reload_verified_io() {
	once reload reload_run
	if [ "$(ns_ids)" != "$ids" ]; then
		ktap_print_msg "names now: $(echo $(ns_ids)); before: $(echo $ids)"
		ktap_test_fail "loaded again: a name is another drive's now, not written"
		return
	fi
	fio_json verify --rw=randwrite --bs=4k --ioengine=libaio --direct=1 \
		--iodepth=16 --size=8m --verify=crc32c --verify_fatal=1 \
		$(fio_all_drives) > /dev/null
	ktap_test_result "loaded again: verified I/O" [ $? -eq 0 ]
}

# kmemleak reports objects unreferenced for 5 s, found by two scans
kmemleak_nothing() {
	local leaks

	if [ ! -w "$KML" ]; then
		ktap_test_skip "kmemleak not in this kernel"
		return
	fi
	once reload reload_run
	sleep 6
	echo scan > "$KML"
	echo scan > "$KML"
	cat "$KML" > "$WORK/kmemleak.txt"
	leaks=$(grep -c '^unreferenced object' "$WORK/kmemleak.txt")
	ktap_print_msg "kmemleak: $leaks unreferenced object(s) since the first load"
	[ "$leaks" -eq 0 ] || head -40 "$WORK/kmemleak.txt" | sed 's/^/# /'
	ktap_test_result "kmemleak: nothing leaked by load, I/O, unload, reload" \
		[ "$leaks" -eq 0 ]
}

ktap_print_header
require_root
require_test_devs unloaded
if [ -d /sys/module/nvme ] && [ ! -e /sys/module/nvme/initstate ]; then
	ktap_skip_all "nvme is built in"
	exit "$KSFT_SKIP"
fi
if ! nvme_modprobe -n nvme 2> /dev/null; then
	ktap_skip_all "needs the nvme module"
	exit "$KSFT_SKIP"
fi
# unloading nvme detaches every controller it drives, named or not
if [ -n "$(unnamed_ctrls)" ]; then
	ktap_skip_all "unloading nvme would detach $(echo $(unnamed_ctrls))," \
		"which NVME_IRQ_TEST_DEVS does not name"
	exit "$KSFT_SKIP"
fi
check_tests
mkdir -p "$WORK"

# TESTS= may end before the reload: leave nvme loaded with its defaults
restore_module() {
	if [ ! -d /sys/module/nvme ] ||
	   [ "$(cat /sys/module/nvme/parameters/irq_moderation_us)" != 0 ]; then
		nvme_modprobe -r nvme 2> /dev/null
		nvme_modprobe nvme
	fi
}
at_exit restore_module
[ -w "$KML" ] && echo clear > "$KML"
if [ -d /sys/module/nvme ] && ! nvme_modprobe -r nvme; then
	ktap_print_msg "nvme is loaded and in use: it cannot be reloaded here"
	ktap_exit_fail_msg "nvme cannot be unloaded before the test"
fi
nvme_modprobe nvme irq_moderation_us=10000 lost_irq_poll_ms=5
loaded_n=$(wait_drives)
loaded_m=$(moderated_vectors)
# loaded here: the names are checked now that they exist
if [ -n "$(unnamed_ctrls)" ] ||
   [ "$loaded_n" -ne "$(echo $NVME_IRQ_TEST_DEVS | wc -w)" ]; then
	ktap_skip_all "after loading nvme: $(echo $(unnamed_ctrls)) not named, or" \
		"not every name in NVME_IRQ_TEST_DEVS is there"
	nvme_modprobe -r nvme
	exit "$KSFT_SKIP"
fi
ids=$(ns_ids)
ktap_print_msg "loaded with irq_moderation_us=10000: $loaded_n drive(s)," \
	"$loaded_m moderated vector(s)"
run_tests

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check: build what is missing (the project's QEMU, the kernel tree,
# the test and sanitizer kernels, the exported series),
# boot the test kernel (lockdep, atomic-sleep, timer-object and lockup
# debugging, KCSAN on the interrupt paths) and the sanitizer kernel on the
# project's QEMU, collect the KTAP of the series' KUnit
# suites (run at boot) and of the nvme_irq kselftests (run in the guest),
# run the static checks, then the 6.12
# backport's build, boot and static checks; print one line per failed case, the time each phase took (also in out/check/phases.txt) and
# end with "N passed, N failed, N skipped".
set -uo pipefail
. "$(dirname "$0")/lib.sh"
[ "$BASE" = 7.3 ] || die "make check runs mainline and then the 6.12 backport: run it without BASE="

dir=$OUT/check
rm -rf "$dir"
mkdir -p "$dir"
results=$dir/results.txt
: > "$results"
phases=$dir/phases.txt
: > "$phases"
ksft=$SRC/tools/testing/selftests
check_start=$(date +%s)

# phase NAME CMD...: run CMD, its duration a line of $phases
phase() {
	local name=$1 start rc
	shift
	start=$(date +%s)
	"$@"
	rc=$?
	echo "$name $(($(date +%s) - start))" >> "$phases"
	return $rc
}

# print_phases: the phases, their minutes and the total
print_phases() {
	echo
	echo "time per phase (also in $phases):"
	awk -v total=$(($(date +%s) - check_start)) '
		{ printf "  %-28s %5d s %5.1f min\n", $1, $2, $2 / 60 }
		END { printf "  %-28s %5d s %5.1f min\n", "total", total, total / 60 }' "$phases"
}

# 0. what the checks need.  QEMU builds beside the tree's materialisation
# (tar, git: one core) and the first kernel; nothing boots before it is
# done.  A failed build ends the run: nothing after it could be checked.
built() {
	"$@" || { print_phases; die "$* failed: nothing can be checked"; }
}
built phase deps "$TOP/scripts/deps.sh"
# (a process group of its own, so that a run that ends early takes the
# QEMU build with it)
set -m
( phase qemu "$TOP/scripts/qemu.sh" > "$dir/qemu.log" 2>&1 ) &
qemu_pid=$!
set +m
trap 'kill -- -$qemu_pid 2> /dev/null' EXIT
built phase tree "$TOP/scripts/tree.sh"
# the 6.12 backport's tree, export and test kernel (a checkout of its
# pristine base and the patches applied, mostly the disk and one core; the
# kernel mostly from its cached build folder) beside mainline's export and
# kernels; its boots and checks come after mainline's (9.)
set -m
( BASE=6.12 phase tree-6.12 "$TOP/scripts/tree.sh" &&
  BASE=6.12 phase series-6.12 "$TOP/scripts/series.sh" &&
  BASE=6.12 phase kernel-test-6.12 "$TOP/scripts/kernel.sh" test ) > "$dir/tree-6.12.log" 2>&1 &
tree_b_pid=$!
set +m
trap 'kill -- -$qemu_pid -$tree_b_pid 2> /dev/null' EXIT
built phase series "$TOP/scripts/series.sh"
built phase kernel-test "$TOP/scripts/kernel.sh" test
# nvme-coal (tools/nvme) for nvme_coal.sh: a warning fails it, not the run
phase tools build_nvme_coal ||
	echo "fail build: nvme-coal (make -C build/linux/tools nvme CFLAGS=-Werror)" >> "$results"
wait $qemu_pid || { cat "$dir/qemu.log" >&2; print_phases; die "make qemu failed"; }
built phase kernel-sanitize "$TOP/scripts/kernel.sh" sanitize
# nothing boots beside it
wait $tree_b_pid
tree_b_rc=$?
trap - EXIT

# why_vm_failed DIR: the first report line scripts/vm found on the
# console, else its own last words
why_vm_failed() {
	local line

	line=$(grep -m 1 -hE -f <(grep -v '^#' "$TOP/scripts/splat/patterns") \
		"$1/console.log" 2> /dev/null)
	[ -n "$line" ] || line=$(grep '^scripts/vm:' "$1.vm.err" 2> /dev/null | tail -n 1)
	echo "${line:-no reason given}" | tr -d '\r' | cut -c 1-200
}

# boot NAME VM-OPTIONS... -- COMMAND: one guest run, its status a result too
boot() {
	local name=$1 rc start
	shift
	note "guest run '$name'"
	start=$(date +%s)
	# scripts/vm's verdict (the splat's first lines, the console's tail)
	# to the terminal and to a file: the summary quotes it, since CI keeps
	# only the end of the output
	"$TOP/scripts/vm" --results "$dir/$name" "$@" 2> >(tee "$dir/$name.vm.err" >&2)
	rc=$?
	wait $!
	echo "boot-$name $(($(date +%s) - start))" >> "$phases"
	if [ $rc -eq 0 ]; then
		echo "pass vm: $name: guest ran clean (no splat, no hang)" >> "$results"
	else
		echo "fail vm: $name: scripts/vm exited $rc: $(why_vm_failed "$dir/$name")" >> "$results"
	fi
}

# The drives are the project's hardware-like QEMU controllers (scripts/vm's
# defaults: a message per completion, Features 08h/09h, APST, lost MSI-X on
# request).
# 1. default parameters: KUnit at boot, then the whole kselftest suite the
# way the kernel's own runner runs it; first without NVME_IRQ_TEST_DEVS, as
# on a machine whose owner named no drive: every test skips, nothing written
nodevs='w0=$(awk '"'"'$3 ~ /^nvme/ { s += $10 } END { print s + 0 }'"'"' /proc/diskstats)'
nodevs+="; env -u NVME_IRQ_TEST_DEVS make -s -C $ksft TARGETS=nvme_irq run_tests > \$RESULTS/nodevs.txt 2>&1"
nodevs+='; echo "sectors written: $(($(awk '"'"'$3 ~ /^nvme/ { s += $10 } END { print s + 0 }'"'"' /proc/diskstats) - w0))" >> $RESULTS/nodevs.txt'
# and the knobs as they were before the suite and after it
knobs="bash -c '. $ksft/nvme_irq/lib.sh; for f in \$(knob_files); do echo \"\$f=\$(< \$f)\"; done 2> /dev/null'"
# the whole suite takes about 15 min under TCG on a busy host: more than
# scripts/vm's default hang timeout
# then TESTS= subsets: two named tests, and a name no script has
subset="TESTS='budget_rejects_text moderation_rejects_empty' $ksft/nvme_irq/drain.sh > \$RESULTS/subset.txt 2>&1"
subset+="; TESTS=no_such_test $ksft/nvme_irq/drain.sh > \$RESULTS/subset-bad.txt 2>&1 || true"
# Five CPU hot-unplug cycles in drain.sh (2.7 s each), not its ten.
cycles=NVME_IRQ_HOTPLUG_CYCLES=5
boot default --timeout 1800 -- "$nodevs; $knobs > \$RESULTS/knobs.before; $cycles NVME_COAL=$(nvme_coal_bin) make -s -C $ksft TARGETS=nvme_irq run_tests 2>&1 | tee \$RESULTS/kselftest.txt; $knobs > \$RESULTS/knobs.after; $subset; cat /sys/kernel/debug/kcsan > \$RESULTS/kcsan.txt"
python3 "$TOP/scripts/ktap.py" kunit "$dir/default/console.log" >> "$results"
python3 "$TOP/scripts/ktap.py" kselftest "$dir/default/kselftest.txt" >> "$results"
f=$dir/default/nodevs.txt
# the programs run_tests runs: TEST_PROGS and its continuation lines
progs=$(awk '/^TEST_PROGS :=/ { on = 1 } on { print; if (!/\\$/) exit }' "$ksft/nvme_irq/Makefile" |
	grep -o '[a-z_0-9]*\.sh')
n=$(echo "$progs" | wc -l)
skipped=$(grep -c '^ok [0-9]* selftests: nvme_irq: .* # SKIP$' "$f" 2> /dev/null)
said=$(grep -c '^# 1\.\.0 # SKIP NVME_IRQ_TEST_DEVS is not set' "$f" 2> /dev/null)
if [ "${n:-0}" -gt 0 ] && [ "$skipped:$said" = "$n:$n" ] && grep -qx 'sectors written: 0' "$f"; then
	echo "pass harness: without NVME_IRQ_TEST_DEVS all $n tests skip, saying why, and nothing is written" >> "$results"
else
	echo "fail harness: without NVME_IRQ_TEST_DEVS: $skipped of ${n:-?} tests skipped, $said said why (see $f)" >> "$results"
fi

f=$dir/default/subset.txt
if grep -qx '1..2' "$f" 2> /dev/null && grep -q '^ok 1 irq_budget rejects .abc.' "$f" &&
   grep -q '^ok 2 irq_moderation_us rejects' "$f" && grep -q '^# Totals: pass:2 fail:0' "$f"; then
	echo "pass harness: TESTS= runs the two named tests, plan 1..2" >> "$results"
else
	echo "fail harness: TESTS= subset of drain.sh (see $f)" >> "$results"
fi
if grep -q "^Bail out!.*no test 'no_such_test'" "$dir/default/subset-bad.txt" 2> /dev/null; then
	echo "pass harness: TESTS= naming no test is refused" >> "$results"
else
	echo "fail harness: TESTS=no_such_test was not refused (see $dir/default/subset-bad.txt)" >> "$results"
fi

kb=$dir/default/knobs.before
if [ "$(wc -l < "$kb" 2> /dev/null)" -gt 10 ] 2> /dev/null && cmp -s "$kb" "$dir/default/knobs.after"; then
	echo "pass harness: the suite left all $(wc -l < "$kb") knobs as it found them" >> "$results"
else
	echo "fail harness: knobs changed by the suite: $(diff "$kb" "$dir/default/knobs.after" 2>&1 | grep '^[<>]' | tr '\n' ' ')" >> "$results"
fi

# KCSAN watched the default boot's whole suite: any data race report fails
# the boot (the splat matcher) and this count; the detector must have set
# watchpoints
kcsan_count() {	# kcsan_count KEY: a counter of the guest's /sys/kernel/debug/kcsan
	awk -F': ' -v k="$1" '$1 == k { print $2 }' "$dir/default/kcsan.txt" 2> /dev/null || echo '?'
}
if [ "$(kcsan_count setup_watchpoints)" -gt 0 ] 2> /dev/null &&
   [ "$(kcsan_count data_races)" = 0 ] && [ "$(kcsan_count races_unknown_origin)" = 0 ] &&
   [ "$(kcsan_count assert_failures)" = 0 ] && [ -f "$dir/default/console.log" ] && ! grep -q 'BUG: KCSAN' "$dir/default/console.log"; then
	echo "pass kcsan: $(kcsan_count setup_watchpoints) watchpoints over the whole suite, no data race reported" >> "$results"
else
	# data_races counts every race a thread found on another's watchpoint;
	# report_races those it found but could not claim (the watcher had
	# removed it, and prints a report of unknown origin only if the value
	# changed, or a third thread claimed it): so a race can be counted
	# with nothing on the console to say where
	echo "fail kcsan: setup_watchpoints $(kcsan_count setup_watchpoints)," \
	     "data_races $(kcsan_count data_races) (found but not claimed:" \
	     "$(kcsan_count report_races)), races_unknown_origin" \
	     "$(kcsan_count races_unknown_origin), assert_failures" \
	     "$(kcsan_count assert_failures), reports on the console" \
	     "$(if [ -f "$dir/default/console.log" ]; then grep -c 'BUG: KCSAN' "$dir/default/console.log"; else echo '? (no console log)'; fi)" \
	     "(see $dir/default)" >> "$results"
fi

# no_skip NAME FILE SCRIPT...: the project's controllers have what these
# scripts need (QMP, APST, Features 08h/09h, lost MSI-X): a skip in them is
# the harness failing, not a missing feature.
no_skip() {
	local name=$1 file=$2 t
	shift 2
	for t; do
		if ! grep -qx "# selftests: nvme_irq: $t" "$file"; then
			echo "fail harness: $name: $t did not run" >> "$results"
		elif sed -n "/^# selftests: nvme_irq: $t\$/,/selftests: nvme_irq: $t\$/p" "$file" |
		     grep -q '# SKIP'; then
			echo "fail harness: $name: $t skipped a case on the project's QEMU" >> "$results"
		else
			echo "pass harness: $name: $t ran every case on the project's QEMU" >> "$results"
		fi
	done
}
no_skip default "$dir/default/kselftest.txt" apst_default.sh lost_msix.sh coalescing.sh \
	timeout_inject.sh coalescing_ignored.sh early_msix.sh nvme_coal.sh

# 2. non-default values of the series' parameters on the kernel command line
params="nvme_core.default_ps_max_latency_us=100000 nvme.lost_irq_poll_ms=9"
params+=" nvme.lost_irq_deadline_ms=700 nvme.lost_irq_poll_always=1"
params+=" nvme.fail_lost_irq=1000,0,0,-1 nvme.irq_budget=32 nvme.irq_moderation_us=50"
params+=" nvme.adaptive_coalescing=0"
boot params --append "$params" -- \
	"for t in apst_default boot_params moderation coalescing; do $ksft/nvme_irq/\$t.sh > \$RESULTS/\$t.txt; done; cat \$RESULTS/*.txt"
for t in apst_default boot_params moderation coalescing; do
	python3 "$TOP/scripts/ktap.py" "kselftest (boot parameters)" "$dir/params/$t.txt" >> "$results"
done
for t in apst_default coalescing; do
	if [ -s "$dir/params/$t.txt" ] && ! grep -q '# SKIP' "$dir/params/$t.txt"; then
		echo "pass harness: params: $t.sh ran every case on the project's QEMU" >> "$results"
	else
		echo "fail harness: params: $t.sh skipped a case or wrote nothing" >> "$results"
	fi
done

# 3. moderation switched off on the command line, nvme asking for it anyway,
# on controllers that refuse Feature 08h (so nothing can moderate)
boot noirqmoderation --device-coalescing off --append "noirqmoderation nvme.irq_moderation_us=50" -- \
	"for t in moderation coalescing; do $ksft/nvme_irq/\$t.sh > \$RESULTS/\$t.txt; done; cat \$RESULTS/*.txt"
for t in moderation coalescing; do
	python3 "$TOP/scripts/ktap.py" "kselftest (noirqmoderation)" "$dir/noirqmoderation/$t.txt" >> "$results"
done
# the KUnit suites of that boot: irq_moderation skips every case, the rest pass
python3 "$TOP/scripts/ktap.py" "kunit (noirqmoderation)" "$dir/noirqmoderation/console.log" >> "$results"
if grep -q '# irq_moderation: pass:0 fail:0 skip:[1-9]' "$dir/noirqmoderation/console.log"; then
	echo "pass harness: noirqmoderation: the irq_moderation suite skipped, not failed" >> "$results"
else
	echo "fail harness: noirqmoderation: the irq_moderation suite did not skip every case" >> "$results"
fi

# 3b. every handler forced into a thread (threadirqs, as on PREEMPT_RT):
# genirq refuses to moderate a threaded handler; the KUnit suites pass or
# skip (irq_moderation_forced_threads shows the refusal) and nvme's I/O
# vectors refuse root's writes
boot threadirqs --append threadirqs -- \
	"$ksft/nvme_irq/moderation.sh > \$RESULTS/moderation.txt; cat \$RESULTS/moderation.txt"
python3 "$TOP/scripts/ktap.py" "kselftest (threadirqs)" "$dir/threadirqs/moderation.txt" >> "$results"
python3 "$TOP/scripts/ktap.py" "kunit (threadirqs)" "$dir/threadirqs/console.log" >> "$results"
if grep -qE '^\[[ 0-9.]+\] +ok [0-9]+ forced_thread_is_refused[[:cntrl:]]*$' "$dir/threadirqs/console.log"; then
	echo "pass harness: threadirqs: irq_moderation_forced_threads ran its case" >> "$results"
else
	echo "fail harness: threadirqs: irq_moderation_forced_threads did not pass its case" >> "$results"
fi

# script_boot NAME SELFTESTS SCRIPT LABEL VM-OPTIONS...: a boot that runs
# one script of the suite (SELFTESTS: the base's selftests folder), its KTAP
# results, and a harness line: the project's QEMU has what the script
# needs, so a skipped case, or nothing written, is a failure
script_boot() {
	local name=$1 selftests=$2 script=$3 label=$4 f
	shift 4
	f=$dir/$name/${script%.sh}.txt
	boot "$name" "$@" -- \
		"$selftests/nvme_irq/$script > \$RESULTS/${script%.sh}.txt; cat \$RESULTS/${script%.sh}.txt"
	python3 "$TOP/scripts/ktap.py" "kselftest ($label)" "$f" >> "$results"
	if [ -s "$f" ] && ! grep -q '# SKIP' "$f"; then
		echo "pass harness: $name: $script ran every case on the project's QEMU" >> "$results"
	else
		echo "fail harness: $name: $script skipped a case or wrote nothing" >> "$results"
	fi
}

# 3c. one I/O queue per drive, so that queue 1 serves a CPU its vector does
# not target: the host stops the vector's vCPU alone (cpu_stall.sh), and
# the recoveries are blamed on that CPU, not on a lost interrupt; then the
# device drops the queue's messages, and they are
script_boot cpustall "$ksft" cpu_stall.sh "vCPU stall" --queues 1

# 3d. INTx (pci=nomsi): every queue of a controller on its one
# level-triggered line; the device loses a quarter of the I/O queue's
# assertions that would raise it, then raises it before its entries
script_boot intx "$ksft" intx.sh INTx --append pci=nomsi

# 3e. a suspend to idle (pm_test=platform) under load with a moderated
# queue: the drives and the 9p file systems behind root ports (ASPM on the
# drives' links, so that nvme keeps the controllers on; No_Soft_Reset on
# the 9p devices, so that the resume leaves them alone)
suspend_args=(--root-ports --append 'pcie_aspm=force pcie_aspm.policy=powersave')
script_boot suspend "$ksft" suspend.sh suspend "${suspend_args[@]}"

# 4. controllers that refuse Feature 08h, as stock QEMU's: adaptive
# coalescing falls back to genirq moderation
boot genirq --device-coalescing off -- \
	"$ksft/nvme_irq/coalescing.sh > \$RESULTS/coalescing.txt; cat \$RESULTS/coalescing.txt"
python3 "$TOP/scripts/ktap.py" "kselftest (Feature 08h refused)" "$dir/genirq/coalescing.txt" >> "$results"

# 5. the sanitizer kernel: KASAN and kmemleak, nvme and its KUnit suites as
# modules.  First the module test (load, I/O with interrupts held, unload
# under I/O, reload, kmemleak), then the KUnit suites as their modules load
# (they pin nvme), then the kselftests of the poller (resets and removal
# under injected loss) and the drain (CPU hot-unplug in irq_poll);
# kmemleak is scanned at the end.  Moderation's state is allocated and
# freed under KASAN by its KUnit suite at boot and by the module test
# (unloaded with interrupts held); its kselftest runs in the other boots.
# coalescing.sh is not run here: at KASAN's I/O rate under TCG its QD32
# load does not engage the policy.  Any KASAN, kmemleak or lockdep report
# fails the boot.  Four CPU hot-unplug cycles in the drain's test (six
# seconds each under KASAN; the default boots run five, the test alone ten).
san_tests="lost_irq drain"
boot sanitize --sanitize --timeout 1800 -- \
	"export NVME_IRQ_MODROOT=$(kbuild_dir sanitize)/modules; $ksft/nvme_irq/module_reload.sh > \$RESULTS/module_reload.txt 2>&1; for m in apst_kunit pci_lost_irq_kunit pci_drain_kunit pci_coalesce_policy_kunit pci_coalesce_kunit; do modprobe -d \$NVME_IRQ_MODROOT \$m || echo \"modprobe \$m failed\"; done; for t in $san_tests; do NVME_IRQ_HOTPLUG_CYCLES=4 $ksft/nvme_irq/\$t.sh > \$RESULTS/\$t.txt 2>&1; done; cat \$RESULTS/*.txt; sleep 6; echo scan > /sys/kernel/debug/kmemleak; echo scan > /sys/kernel/debug/kmemleak; cat /sys/kernel/debug/kmemleak > \$RESULTS/kmemleak.txt"
python3 "$TOP/scripts/ktap.py" "kunit (sanitizer)" "$dir/sanitize/console.log" >> "$results"
for t in module_reload $san_tests; do
	python3 "$TOP/scripts/ktap.py" "kselftest (sanitizer)" "$dir/sanitize/$t.txt" >> "$results"
done
if [ -f "$dir/sanitize/kmemleak.txt" ] && ! grep -q '^unreferenced object' "$dir/sanitize/kmemleak.txt"; then
	echo "pass sanitizer: kmemleak reports nothing after the whole boot" >> "$results"
else
	echo "fail sanitizer: kmemleak reported leaks or did not run (see $dir/sanitize/kmemleak.txt)" >> "$results"
fi
if [ -s "$dir/sanitize/module_reload.txt" ] && ! grep -q '# SKIP' "$dir/sanitize/module_reload.txt"; then
	echo "pass harness: sanitizer: module_reload.sh ran every case (nvme as a module, kmemleak)" >> "$results"
else
	echo "fail harness: sanitizer: module_reload.sh skipped a case or wrote nothing" >> "$results"
fi

# 6. regression test of the project's QEMU: one vCPU, four drives at QD128.
# QEMU 7.2 under TCG dropped a single vCPU's memory barriers and the shadow
# doorbell protocol lost submissions: I/O timeouts every few seconds, on
# stock 6.12 too (qemu/patches/0001 backports the upstream fix).  The test
# kernel with every feature of the series off (the bench's series-off
# mode), so that nothing of it can end a stall: the device's behaviour is
# what is tested, and no stock kernel is built for it.
off="nvme.lost_irq_poll_ms=0 nvme.lost_irq_deadline_ms=0 nvme.irq_budget=0"
off+=" nvme.adaptive_coalescing=0 nvme.early_irq_recheck_us=0"
flood="fio --rw=randread --bs=4k --iodepth=128 --ioengine=libaio --direct=1"
flood+=" --runtime=20 --time_based --output-format=terse"
flood+=' $(for d in /dev/nvme*n1; do echo --name=${d##*/} --filename=$d; done)'
# The same boot shows the series' parameters taking effect at boot: with
# every reader of the interrupt handler's counts off, it keeps none
# (counting 0 and no handler run counted on any controller after the flood).
boot flood --cpus 1 --drives 4 --append "$off" -- \
	"$flood > \$RESULTS/fio.txt && ! dmesg | grep -q 'timeout';" \
	"rc=\$?; cat /sys/kernel/debug/nvme_pci/nvme*/drain > \$RESULTS/drain.txt; exit \$rc"
if [ -s "$dir/flood/fio.txt" ] && [ -s "$dir/flood/dmesg.txt" ] &&
   ! grep -q 'timeout' "$dir/flood/dmesg.txt"; then
	echo "pass qemu: flood of one vCPU by four drives at QD128: no I/O timeout" >> "$results"
else
	echo "fail qemu: flood of one vCPU by four drives at QD128: I/O timeouts (see $dir/flood)" >> "$results"
fi
if [ "$(grep -c '^counting: 0$' "$dir/flood/drain.txt" 2> /dev/null)" = 4 ] &&
   [ "$(awk '$1 == "irq_runs:" { s += $2 } END { print s + 0 }' "$dir/flood/drain.txt")" = 0 ]; then
	echo "pass boot: every reader of the handler's counts off at boot: four controllers flooded, no handler run counted" >> "$results"
else
	echo "fail boot: every reader of the handler's counts off at boot: counting on, or handler runs counted (see $dir/flood/drain.txt)" >> "$results"
fi

# 7. (the benchmark's smoke run, make bench QUICK=1, checks its own
# results with scripts/bench-validate.py; it is not part of make check,
# which asserts the series' behaviour and keeps no figure)

# 8. static checks of the exported series, and of the QEMU patches
note "static checks of out/series"
phase static bash "$TOP/scripts/static-checks.sh" >> "$results" ||
	echo "fail static: scripts/static-checks.sh ended early (exit $?)" >> "$results"
qs=$(phase qemu-series bash "$TOP/scripts/qemu-series.sh" 2> "$dir/qemu-series.log")
if [ -n "$qs" ]; then
	echo "$qs" >> "$results"
else
	echo "fail static: make qemu-series checked nothing (see $dir/qemu-series.log)" >> "$results"
fi

# 9. the 6.12 LTS backport (BASE=6.12): its tree, its export and its test
# kernel (made beside mainline's export and kernels, above), one boot
# with every KUnit suite at boot and the kselftest suite (below, what it
# leaves out), one with cpu_stall.sh, one with suspend.sh, and the static
# checks of its export.  Mainline's checks above cover the rest: the
# backport's new files are mainline's (its compat delta aside), and its
# hunks are the upstream hooks the suite exercises.
b=6.12
[ $tree_b_rc -eq 0 ] || cat "$dir/tree-$b.log" >&2
if [ $tree_b_rc -eq 0 ]; then
	echo "pass build ($b): the backport's tree, export and test kernel" >> "$results"
	ksft_b=$(BASE=$b; . "$TOP/scripts/lib.sh"; echo "$SRC/tools/testing/selftests")
	# nvme-coal compiles against 6.12's tools/include too; nvme_coal.sh,
	# which runs it as user space does, runs on 7.3 only and skips here
	BASE=$b phase "tools-$b" bash -c ". '$TOP/scripts/lib.sh'; build_nvme_coal" ||
		echo "fail build ($b): nvme-coal" >> "$results"
	# the suite as the kernel's runner runs it, but for the scripts whose
	# code has no 6.12 difference beyond its hunks' context: APST's
	# default (core.c as on 7.3; its KUnit suite runs at boot) and
	# nvme-coal (user space)
	progs_b=$(echo $progs | tr ' ' '\n' |
		grep -vxE 'apst_default\.sh|nvme_coal\.sh' | paste -sd' ')
	BASE=$b boot "default-$b" --timeout 1800 -- \
		"$cycles make -s -C $ksft_b TARGETS=nvme_irq TEST_PROGS='$progs_b' run_tests 2>&1 | tee \$RESULTS/kselftest.txt"
	python3 "$TOP/scripts/ktap.py" "kunit ($b)" "$dir/default-$b/console.log" >> "$results"
	python3 "$TOP/scripts/ktap.py" "kselftest ($b)" "$dir/default-$b/kselftest.txt" >> "$results"
	no_skip "default-$b" "$dir/default-$b/kselftest.txt" lost_msix.sh \
		coalescing.sh timeout_inject.sh coalescing_ignored.sh early_msix.sh
	# the vCPU stall: 6.12's hrtimers migrate to other CPUs unless pinned
	BASE=$b script_boot "cpustall-$b" "$ksft_b" cpu_stall.sh "$b, vCPU stall" --queues 1
	BASE=$b script_boot "suspend-$b" "$ksft_b" suspend.sh "$b, suspend" "${suspend_args[@]}"
	BASE=$b phase "static-$b" bash "$TOP/scripts/static-checks.sh" >> "$results" ||
		echo "fail static ($b): scripts/static-checks.sh ended early (exit $?)" >> "$results"
else
	echo "fail build ($b): the backport's tree, export or test kernel (see above)" >> "$results"
fi

print_phases
passed=$(grep -c '^pass ' "$results")
failed=$(grep -c '^fail ' "$results")
skipped=$(grep -c '^skip ' "$results")
echo
grep '^fail ' "$results" | sed 's/^fail /FAILED: /'
# CI keeps only the end of the output: the first report of each boot that
# failed on one, with the 30 lines after it (RIP, call trace), goes last
for f in "$dir"/*/console.log; do
	grep -q "^fail vm: $(basename "$(dirname "$f")"): " "$results" || continue
	n=$(grep -m 1 -nE -f <(grep -v '^#' "$TOP/scripts/splat/patterns") "$f" | cut -d: -f1)
	[ -n "$n" ] || continue
	echo "--- $(basename "$(dirname "$f")"): console from line $n"
	sed -n "$((n > 5 ? n - 5 : 1)),$((n + 30))p" "$f" | tr -d '\r' | cut -c 1-160
done
echo "details: $results"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]

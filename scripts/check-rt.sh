#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check-rt: the series on PREEMPT_RT.  Builds the rt kernel (the test
# options without KCSAN, + scripts/config/rt.config: lockdep with
# PROVE_RAW_LOCK_NESTING) and boots it once: every KUnit suite runs, and
# the guest must run clean (no lockdep report, no sleeping in atomic
# context, no hang).  Every handler is a thread there, which genirq does
# not moderate: the moderation suite skips, its forced-thread suite and
# the nvme suites run.  Not part of make check (a fourth cold kernel);
# prints one pass/fail/skip line per result and the totals.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

dir=$TOP/out/check-rt
rm -rf "$dir"
mkdir -p "$dir"
"$TOP/scripts/kernel.sh" rt || die "the rt kernel did not build"
rc=0
"$TOP/scripts/vm" --kernel "$(kbuild_dir rt)/arch/x86/boot/bzImage" \
	--results "$dir/boot" --timeout 900 -- true 2> "$dir/vm.err" || rc=$?
{
	if [ $rc -eq 0 ]; then
		echo "pass vm: rt: guest ran clean (no splat, no hang)"
	else
		echo "fail vm: rt: scripts/vm exited $rc: $(tail -n 1 "$dir/vm.err")"
	fi
	# the banner: a skip message names PREEMPT_RT too
	if grep -qE 'Linux version .* PREEMPT_RT' "$dir/boot/console.log" 2> /dev/null; then
		echo "pass rt: the kernel booted is PREEMPT_RT"
	else
		echo "fail rt: the kernel booted is not PREEMPT_RT"
	fi
	python3 "$TOP/scripts/ktap.py" "kunit (rt)" "$dir/boot/console.log"
} > "$dir/results.txt"
cat "$dir/results.txt"
passed=$(grep -c '^pass ' "$dir/results.txt")
failed=$(grep -c '^fail ' "$dir/results.txt")
skipped=$(grep -c '^skip ' "$dir/results.txt")
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ "$passed" -gt 2 ]

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check: boot the test kernel (lockdep, atomic-sleep, timer-object and
# lockup debugging on), collect the KTAP of the series' KUnit suites (run at
# boot) and of the nvme_irq kselftests (run in the guest), run the static
# checks, print one line per failed case and end with "N passed, N failed".
set -uo pipefail
. "$(dirname "$0")/lib.sh"

dir=$OUT/check
rm -rf "$dir"
mkdir -p "$dir"
results=$dir/results.txt
: > "$results"
ksft=$SRC/tools/testing/selftests

# boot NAME VM-OPTIONS... -- COMMAND: one guest run, its status a result too
boot() {
	local name=$1 rc
	shift
	note "guest run '$name'"
	"$TOP/scripts/vm" --results "$dir/$name" "$@"
	rc=$?
	if [ $rc -eq 0 ]; then
		echo "pass vm: $name: guest ran clean (no splat, no hang)" >> "$results"
	else
		echo "fail vm: $name: scripts/vm exited $rc" >> "$results"
	fi
}

# 1. default parameters: KUnit at boot, then the whole kselftest suite the
# way the kernel's own runner runs it
boot default -- "make -s -C $ksft TARGETS=nvme_irq run_tests 2>&1 | tee \$RESULTS/kselftest.txt"
python3 "$TOP/scripts/ktap.py" kunit "$dir/default/dmesg.txt" >> "$results"
python3 "$TOP/scripts/ktap.py" kselftest "$dir/default/kselftest.txt" >> "$results"

# 2. the APST bound from the kernel command line
boot apst-100ms --append nvme_core.default_ps_max_latency_us=100000 -- \
	"$ksft/nvme_irq/apst_default.sh | tee \$RESULTS/apst.txt"
python3 "$TOP/scripts/ktap.py" "kselftest (default_ps_max_latency_us=100000)" \
	"$dir/apst-100ms/apst.txt" >> "$results"

# 3. static checks of the exported series
note "static checks of out/series"
bash "$TOP/scripts/static-checks.sh" >> "$results"

passed=$(grep -c '^pass ' "$results")
failed=$(grep -c '^fail ' "$results")
skipped=$(grep -c '^skip ' "$results")
echo
grep '^fail ' "$results" | sed 's/^fail /FAILED: /'
echo "details: $results"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]

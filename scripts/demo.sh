#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make demo: boot the patched kernel on emulated drives and report what the
# series does there.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

res=$OUT/demo
"$TOP/scripts/vm" --results "$res" -- "$TOP/scripts/guest/demo.sh | tee \$RESULTS/demo.txt"
python3 "$TOP/scripts/ktap.py" kunit "$res/console.log" > "$res/kunit.txt"
echo "== KUnit suites of the series (run at boot)"
for s in pass fail skip; do
	printf '%s: %d  ' "$s" "$(grep -c "^$s " "$res/kunit.txt")"
done
echo
grep '^fail ' "$res/kunit.txt" || true
echo
python3 - "$res/demo.txt" <<'PY'
import json, sys
rows = [l.split(': ', 1) for l in open(sys.argv[1]) if l.startswith(('QD', 'LOST', 'MOD', 'ADAPT'))]
if rows:
    print(f"{'':15}{'IOPS':>10}{'irqs/IO':>10}{'p50 us':>9}{'p99 us':>9}")
    for qd, js in rows:
        r = json.loads(js)
        print(f"{qd:15}{r['iops']:>10.0f}{r['irqs_per_io']:>10.3f}{r['clat_p50_us']:>9}{r['clat_p99_us']:>9}")
    print("(QEMU under TCG: compare ratios side by side, not absolute figures)")
PY
echo "console log and dmesg: $res/"

# the latest benchmark, if any (make bench)
for md in "$OUT/bench/results.md" "$TOP/bench/results/results.md"; do
	[ -f "$md" ] || continue
	echo
	echo "== latest make bench results ($md)"
	awk '/^## /{p=1} p && /^!\[/{exit} p' "$md" | cut -c1-220 | head -24
	break
done

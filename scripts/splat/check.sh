#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The console matcher of scripts/vm against real report headers: every line
# of corpus must match scripts/splat/patterns, no line of benign may.
set -uo pipefail
dir=$(dirname "$0")
pat=$dir/patterns
ok=1
while IFS= read -r line; do
	if ! printf '%s\n' "$line" | grep -qE -f <(grep -v '^#' "$pat"); then
		echo "not matched: $line" >&2
		ok=0
	fi
done < "$dir/corpus"
while IFS= read -r line; do
	if printf '%s\n' "$line" | grep -qE -f <(grep -v '^#' "$pat"); then
		echo "matched, but benign: $line" >&2
		ok=0
	fi
done < "$dir/benign"
if [ $ok = 1 ]; then
	echo "pass static: splat matcher: $(wc -l < "$dir/corpus") report headers matched, $(wc -l < "$dir/benign") benign lines not"
else
	echo "fail static: splat matcher (lines above)"
fi

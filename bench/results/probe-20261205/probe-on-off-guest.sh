#!/bin/bash
# The QD1 case four times, probe off and on alternately (measured with a
# copy of bench-run without the probe's two lines; bench-run now does the
# same for a job without "sample": "coal")
D=$(dirname "$0")
B=$D/../../../scripts/guest/bench-run
$B "$D/jobs-qd1.json" "$RESULTS/ns.jsonl"
$B "$D/jobs-qd1-probe.json" "$RESULTS/s.jsonl"
$B "$D/jobs-qd1.json" "$RESULTS/ns.jsonl"
$B "$D/jobs-qd1-probe.json" "$RESULTS/s.jsonl"

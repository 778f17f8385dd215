#!/bin/sh
# Probe timing accuracy: a server in a child process logs the instant it
# flushes each token event; the probe's TTFT, ITL and TPOT are compared
# with those instants (median of 3 runs). Also prints the probe's CPU
# (cores, from getrusage of the probe process only) and memory per stream
# at 500 concurrent streams. A "floor" run (raw TCP reader, no HTTP
# client, no JSON) under the same load shows what the machine itself
# allows: on a shared, loaded machine the tails are the machine's.
#
# usage: bench/probe_accuracy.sh [runs]
set -eu
cd "$(dirname "$0")/.."
TTFTOP_PROBE_BENCH=1 TTFTOP_PROBE_BENCH_RUNS="${1:-3}" \
	go test -count=1 -timeout 20m -run '^TestProbeAccuracy$' -v ./bench/ |
	grep -vE '^(=== RUN|PASS$)'

#!/usr/bin/env bash
# What SSH viewers cost the serving process: `ttftop serve --ssh`'s
# server (sshserve, default view options) over one monitor of 20 endpoints
# updated every second, watched by 1 and then by 10 viewers (160x50
# xterm-256color ptys). The viewers are SSH clients in a child process, so
# their CPU is not counted; the figure is getrusage(RUSAGE_SELF) of the
# serving process over each window, after a warm-up. Three runs, median.
# Target: ten viewers cost under 2x the CPU of one.
#
# Two feeds, because the ratio depends on what the monitor itself costs:
#   sim     real probes (32 tokens, every second) and /metrics scrapes of a
#           20-model simulator running in another child process;
#   script  observations written in-process: a near-free monitor, so the
#           ratio is almost all viewer cost (the strict case).
#
# Usage: bench/ssh_viewers.sh [measure] [runs] [feeds]   (20s 3 "sim script")
set -euo pipefail
cd "$(dirname "$0")/.."
measure=${1:-20s}
runs=${2:-3}
feeds=${3:-sim script}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

go build -o "$tmp/ssh_viewers" ./bench/ssh_viewers
fail=0
for feed in $feeds; do
	out=$("$tmp/ssh_viewers" -feed "$feed" -measure "$measure" -runs "$runs")
	echo "$out"
	ratio=$(sed -nE 's/^median ratio .*: ([0-9.]+)$/\1/p' <<<"$out")
	if awk -v r="$ratio" 'BEGIN { exit !(r < 2) }'; then
		echo "feed=$feed: median ratio $ratio < 2: PASS"
	else
		echo "feed=$feed: median ratio $ratio >= 2: FAIL"
		fail=1
	fi
	echo
done
exit $fail

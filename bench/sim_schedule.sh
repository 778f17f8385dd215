#!/usr/bin/env bash
# Measures the simulator's own token schedule error (flush time − step
# deadline) with 1,000 concurrent streams at 50 tokens/s each, clients in
# the same process, and prints p50/p99 per run and the median p99.
# Usage: bench/sim_schedule.sh [runs] [mode]
#   mode: inprocess (Go API, engine → consumer hand-off), http (HTTP/1.1
#   SSE, 1,000 sockets), both (default), floor (no simulator: 1,000 raw
#   loopback sockets written at the same instants, the machine's lower
#   bound for the HTTP figure), or all (both, then HTTP with 200 streams,
#   1,000 streams over 10 models, and the floor).
# The machine should be otherwise idle: other processes' CPU use shows up
# directly as schedule error.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
mode=${2:-both}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go test -c -o "$tmp/sim.test" ./internal/sim

bench() { # name regexp
	local name=$1 re=$2 p99s=()
	echo "== $name: $runs runs (load average before: $(cut -d' ' -f1-3 /proc/loadavg))"
	for ((i = 1; i <= runs; i++)); do
		out=$("$tmp/sim.test" -test.run '^$' -test.bench "$re" -test.benchtime 1x 2>&1)
		line=$(grep -o 'schedule error over.*' <<<"$out" || true)
		if [[ -z $line ]]; then
			echo "$out"
			exit 1
		fi
		echo "  run $i: $line"
		p99s+=("$(awk '{for (i = 1; i <= NF; i++) if ($i == "p99-ms") print $(i - 1)}' <<<"$out")")
	done
	printf '%s\n' "${p99s[@]}" | sort -g | awk '{v[NR] = $1} END {printf "  median p99: %s ms\n", v[int((NR + 1) / 2)]}'
}

case $mode in
inprocess) bench "in-process (Go API)" 'Schedule1000StreamsInProcess$' ;;
http) bench "HTTP/1.1 SSE" 'Schedule1000Streams$' ;;
floor) bench "raw TCP floor (no simulator)" 'ScheduleFloor1000$' ;;
both | all)
	bench "in-process (Go API)" 'Schedule1000StreamsInProcess$'
	bench "HTTP/1.1 SSE" 'Schedule1000Streams$'
	if [[ $mode == all ]]; then
		bench "HTTP/1.1 SSE, 200 streams" 'Schedule200Streams$'
		bench "HTTP/1.1 SSE, 10 models x 100 streams" 'Schedule1000Streams10Models$'
		bench "raw TCP floor (no simulator)" 'ScheduleFloor1000$'
	fi
	;;
*)
	echo "unknown mode $mode" >&2
	exit 2
	;;
esac

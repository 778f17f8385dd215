#!/usr/bin/env bash
# CPU % of one core used by `ttftop demo` (simulator, probes, scrapes
# and TUI in one process) on its main screen in a 160x50 pty: case 1 of
# bench/tui_bandwidth.sh on its own, with the load average before each
# run (the figure is utime+stime from /proc, so a loaded machine reads
# high) and, with PROFILE=FILE, a CPU profile of one more run written by
# the demo itself (TTFTOP_DEMO_CPUPROFILE) and its top entries.
#
# Usage: bench/demo_cpu.sh      (WARMUP=10s MEASURE=30s RUNS=3 PROFILE=)
# Target (issue 12): <= 3 % of one core.
set -euo pipefail
cd "$(dirname "$0")/.."
warmup=${WARMUP:-10s}
measure=${MEASURE:-30s}
runs=${RUNS:-3}
profile=${PROFILE:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

go build -o "$tmp/tui_pty" ./bench/tui_pty
go build -o "$tmp/ttftop" ./cmd/ttftop
cpu=()
for ((i = 0; i < runs; i++)); do
	load=$(cut -d' ' -f1-3 /proc/loadavg)
	out=$("$tmp/tui_pty" -cols 160 -rows 50 -warmup "$warmup" -measure "$measure" -- "$tmp/ttftop" demo)
	eval "$out" # bytes=N seconds=S bytes_per_s=B cpu_pct=C
	echo "run $((i + 1)): $cpu_pct % CPU, $bytes_per_s B/s (load before: $load)"
	cpu+=("$cpu_pct")
done
median=$(printf '%s\n' "${cpu[@]}" | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
echo "ttftop demo, 160x50: median $median % of one core over $runs runs on $(nproc) cores (target <= 3 %)"
if [[ -n $profile ]]; then
	TTFTOP_DEMO_CPUPROFILE=$profile "$tmp/tui_pty" -cols 160 -rows 50 -warmup "$warmup" -measure "$measure" -- "$tmp/ttftop" demo >/dev/null
	go tool pprof -top -cum -nodecount=40 "$tmp/ttftop" "$profile"
fi

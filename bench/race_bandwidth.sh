#!/usr/bin/env bash
# Measures what `ttftop race` costs over SSH, as bench/tui_bandwidth.sh
# does for the dashboard: bytes written per second and CPU % of one core
# in a 160x50 pty (TERM=xterm-256color, no COLORTERM), while two racers
# stream 300 tok/s each (bench/race_pace on loopback, words of ~4.5
# characters). Each case runs RUNS times; the verdict is on the medians.
# Target: <= 8000 B/s.
#
# Usage: bench/race_bandwidth.sh      (WARMUP=5s MEASURE=30s RUNS=3 TPS=300)
set -euo pipefail
cd "$(dirname "$0")/.."
warmup=${WARMUP:-5s}
measure=${MEASURE:-30s}
runs=${RUNS:-3}
tps=${TPS:-300}
max_bps=8000
tmp=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	rm -rf "$tmp"
}
trap cleanup EXIT

go build -o "$tmp/tui_pty" ./bench/tui_pty
go build -o "$tmp/ttftop" ./cmd/ttftop
go build -o "$tmp/race_pace" ./bench/race_pace
"$tmp/race_pace" -listen 127.0.0.1:18511 -tps "$tps" -tokens 100000 & pids+=($!)
"$tmp/race_pace" -listen 127.0.0.1:18512 -tps "$tps" -tokens 100000 & pids+=($!)
sleep 1 # the servers' start-up, before the first request
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
bps=() cpu=()
for ((i = 0; i < runs; i++)); do
	out=$("$tmp/tui_pty" -cols 160 -rows 50 -warmup "$warmup" -measure "$measure" -- \
		"$tmp/ttftop" race http://127.0.0.1:18511 http://127.0.0.1:18512 --model m --max-tokens 100000 --timeout 10m)
	eval "$out" # bytes=N seconds=S bytes_per_s=B cpu_pct=C
	bps+=("$bytes_per_s")
	cpu+=("$cpu_pct")
done
mb=$(printf '%s\n' "${bps[@]}" | median)
mc=$(printf '%s\n' "${cpu[@]}" | median)
verdict=PASS
awk -v b="$mb" -v m="$max_bps" 'BEGIN { exit !(b <= m) }' || verdict=FAIL
printf 'race, 2 racers at %s tok/s, 160x50: median %.0f B/s (target <= %d)  %.2f %% CPU  %s   runs: %s B/s, %s %%; load %s on %s cores\n' \
	"$tps" "$mb" "$max_bps" "$mc" "$verdict" "$(IFS=/; echo "${bps[*]}")" "$(IFS=/; echo "${cpu[*]}")" \
	"$(cut -d' ' -f1-3 /proc/loadavg)" "$(nproc)"
[ "$verdict" = PASS ]

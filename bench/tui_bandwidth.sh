#!/usr/bin/env bash
# Measures what the TUI costs over SSH: bytes written per second and CPU %
# of one core, in a 160x50 pty with TERM=xterm-256color and no COLORTERM
# (what OpenSSH sessions look like), over a steady state after a warm-up.
# Each case runs RUNS times; the verdict is on the medians.
# Targets: <= 4000 B/s and <= 3 % of one core.
#
# Usage: bench/tui_bandwidth.sh            (WARMUP=10s MEASURE=60s RUNS=3)
# Runs, in order:
#   1. `ttftop demo` (built from ./cmd/ttftop): the whole program,
#      simulator, probes and scrapes included, main screen and detail;
#   2. the TUI alone over a synthetic demo-shaped feed (bench/tui_pty:
#      3 endpoints, 1m window, no network), main screen and detail.
# The CPU figure is utime+stime of the measured process from
# /proc/<pid>/stat (the client side of nothing: a local process), so on a
# loaded machine it runs high; compare cases measured together.
set -euo pipefail
cd "$(dirname "$0")/.."
warmup=${WARMUP:-10s}
measure=${MEASURE:-60s}
runs=${RUNS:-3}
max_bps=4000
max_cpu=3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

go build -o "$tmp/tui_pty" ./bench/tui_pty
go build -o "$tmp/ttftop" ./cmd/ttftop
fail=0
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
run() {
	local label=$1
	shift
	local bps=() cpu=() out
	for ((i = 0; i < runs; i++)); do
		if ! out=$("$tmp/tui_pty" -cols 160 -rows 50 -warmup "$warmup" -measure "$measure" "$@"); then
			echo "$label: measurement failed"
			fail=1
			return
		fi
		# out: bytes=N seconds=S bytes_per_s=B cpu_pct=C
		eval "$out"
		bps+=("$bytes_per_s")
		cpu+=("$cpu_pct")
	done
	local mb mc verdict=PASS
	mb=$(printf '%s\n' "${bps[@]}" | median)
	mc=$(printf '%s\n' "${cpu[@]}" | median)
	if ! awk -v b="$mb" -v c="$mc" -v mb="$max_bps" -v mc="$max_cpu" 'BEGIN { exit !(b <= mb && c <= mc) }'; then
		verdict=FAIL
		fail=1
	fi
	printf '%-34s median %6.0f B/s (%.2f of target)  %5.2f %% CPU (%.2f of target)  %s   runs: %s B/s, %s %%\n' \
		"$label" "$mb" "$(awk -v b="$mb" -v m="$max_bps" 'BEGIN { print b / m }')" \
		"$mc" "$(awk -v c="$mc" -v m="$max_cpu" 'BEGIN { print c / m }')" "$verdict" \
		"$(IFS=/; echo "${bps[*]}")" "$(IFS=/; echo "${cpu[*]}")"
}

echo "160x50, TERM=xterm-256color, warm-up $warmup, measured $measure, $runs runs; targets <= $max_bps B/s, <= $max_cpu % CPU; load $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
run "ttftop demo (main screen)" -- "$tmp/ttftop" demo
run "ttftop demo (detail, live)" -keys $'\r' -- "$tmp/ttftop" demo
run "TUI alone, synthetic (main)" -synthetic
run "TUI alone, synthetic (detail, live)" -synthetic -keys $'\r'
exit "$fail"

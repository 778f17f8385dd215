#!/usr/bin/env bash
# Measures what the TUI costs over SSH: bytes written per second and CPU %
# of one core, in a 160x50 pty with TERM=xterm-256color and no COLORTERM
# (what OpenSSH sessions look like), over a steady state after a warm-up.
# Targets: < 8 KB/s and < 3 % of one core.
#
# Usage: bench/tui_bandwidth.sh            (WARMUP=10s MEASURE=60s)
# Runs, in order:
#   1. `tokentop demo` (built from ./cmd/tokentop), if the demo command
#      exists: the whole program, simulator and probes included;
#   2. the TUI alone over a synthetic demo-shaped feed (bench/tui_pty);
#   3. the same with the detail view open (live token pane streaming).
set -euo pipefail
cd "$(dirname "$0")/.."
warmup=${WARMUP:-10s}
measure=${MEASURE:-60s}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

go build -o "$tmp/tui_pty" ./bench/tui_pty
fail=0
run() {
	local label=$1
	shift
	local out
	if ! out=$("$tmp/tui_pty" -cols 160 -rows 50 -warmup "$warmup" -measure "$measure" "$@"); then
		echo "$label: measurement failed"
		fail=1
		return
	fi
	# out: bytes=N seconds=S bytes_per_s=B cpu_pct=C
	eval "$out"
	local verdict=PASS
	if ! awk -v b="$bytes_per_s" -v c="$cpu_pct" 'BEGIN { exit !(b < 8000 && c < 3) }'; then
		verdict=FAIL
		fail=1
	fi
	printf '%-34s %8.0f B/s  %5.2f %% CPU  (%d bytes in %.0f s)  %s\n' \
		"$label" "$bytes_per_s" "$cpu_pct" "$bytes" "$seconds" "$verdict"
}

echo "160x50, TERM=xterm-256color, warm-up $warmup, measured $measure; targets < 8000 B/s, < 3 % CPU"
demo_help=""
if go build -o "$tmp/tokentop" ./cmd/tokentop 2>"$tmp/build.log"; then
	demo_help=$("$tmp/tokentop" demo --help 2>&1 || true)
fi
if [[ -x "$tmp/tokentop" && $demo_help != *"unknown command"* ]]; then
	run "tokentop demo (main screen)" -- "$tmp/tokentop" demo
	run "tokentop demo (detail, live)" -keys $'\r' -- "$tmp/tokentop" demo
else
	echo "tokentop demo: not available yet (build log: $(head -c 200 "$tmp/build.log"))"
fi
run "TUI alone, synthetic (main)" -synthetic
run "TUI alone, synthetic (detail, live)" -synthetic -keys $'\r'
exit "$fail"

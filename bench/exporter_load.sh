#!/usr/bin/env bash
# Measures an exporter process feeding 100 endpoints probed every 5 s and
# scraped every second: CPU % and RSS from /proc, plus scrape size and time.
# Usage: bench/exporter_load.sh [endpoints] [interval] [seconds]
# Runs bench/exporter_load (a stand-in for `ttftop exporter` that feeds
# the probe Runner's observation pattern without network probes).
set -euo pipefail
cd "$(dirname "$0")/.."
endpoints=${1:-100}
interval=${2:-5s}
seconds=${3:-60}
warmup=${WARMUP:-10}
addr=127.0.0.1:${PORT:-19464}
tmp=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

go build -o "$tmp/exporter_load" ./bench/exporter_load
"$tmp/exporter_load" -endpoints "$endpoints" -interval "$interval" -listen "$addr" 2>"$tmp/log" &
pid=$!
pids+=("$pid")

# Scrape every second, as a Prometheus with scrape_interval: 1s would.
(
	while sleep 1; do
		curl -s -o /dev/null -w '%{time_total} %{size_download}\n' "http://$addr/metrics" >>"$tmp/scrapes" || true
	done
) &
pids+=("$!")

ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
sleep "$warmup"
t0=$(ticks)
s0=$(date +%s.%N)
sleep "$seconds"
t1=$(ticks)
s1=$(date +%s.%N)
hz=$(getconf CLK_TCK)
rss=$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status")
hwm=$(awk '/^VmHWM/ {print $2}' "/proc/$pid/status")
cpu=$(awk -v a="$t0" -v b="$t1" -v hz="$hz" -v s0="$s0" -v s1="$s1" 'BEGIN {printf "%.2f", (b - a) / hz / (s1 - s0) * 100}')
scrape=$(awk '{t += $1; b = $2; n++} END {if (n) printf "%d scrapes, mean %.1f ms, %d bytes", n, t / n * 1000, b}' "$tmp/scrapes")
series=$(curl -s "http://$addr/metrics" | grep -c '^ttftop_probe_' || true)

echo "exporter load: $endpoints endpoints every $interval, scraped every 1 s, measured ${seconds}s after ${warmup}s warm-up"
echo "  CPU:    ${cpu}% of one core"
echo "  RSS:    $((rss / 1024)) MiB (peak $((hwm / 1024)) MiB)"
echo "  scrape: $scrape, $series ttftop_probe_* samples"

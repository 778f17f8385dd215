#!/usr/bin/env bash
# CPU cost of direct scraping: 50 targets (a separate process serving a
# ~500-line vLLM V1 page each, counters growing) scraped every second by
# 50 scrape.Scrapers in one process; CPU from getrusage of the scraping
# process over a 30 s window after 5 s of warm-up. Three runs, median.
# Target: under 5 % of one core.
# Usage: bench/scrape_cpu.sh [targets] [measure] [runs]
set -euo pipefail
cd "$(dirname "$0")/.."
targets=${1:-50}
measure=${2:-30s}
runs=${3:-3}
tmp=$(mktemp -d)
pid=
cleanup() {
	if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
	rm -rf "$tmp"
}
trap cleanup EXIT

go build -o "$tmp/scrape_cpu" ./bench/scrape_cpu
"$tmp/scrape_cpu" -serve "$targets" -urls "$tmp/urls" &
pid=$!
for _ in $(seq 100); do [ -s "$tmp/urls" ] && break; sleep 0.1; done
[ -s "$tmp/urls" ] || { echo "targets did not start" >&2; exit 1; }
lines=$(curl -s "$(head -1 "$tmp/urls")/metrics" | wc -l || true)
echo "targets=$targets page_lines=${lines:-?} measure=$measure runs=$runs (nproc=$(nproc), load: $(cut -d' ' -f1-3 /proc/loadavg))"

results=()
for i in $(seq "$runs"); do
	out=$("$tmp/scrape_cpu" -scrape -urls "$tmp/urls" -measure "$measure")
	echo "run $i: $out"
	grep -q 'failures in window=0' <<<"$out" || echo "warning: run $i had failed scrapes (overloaded machine?); its figure is low" >&2
	results+=("$(sed -E 's/.*=> ([0-9.]+)% of one core.*/\1/' <<<"$out")")
done
median=$(printf '%s\n' "${results[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
echo "median: ${median}% of one core (target < 5%)"

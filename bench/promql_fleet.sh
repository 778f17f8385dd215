#!/usr/bin/env bash
# PromQL mode at fleet scale: a stand-in Prometheus API (its own process,
# bench/promql_fleet/server.go) answers the default queries for N vLLM
# endpoints with vLLM's bucket layouts; one promql.Source feeding a
# telemetry.Store, a 1 h window on screen, refreshes every 5 s (each
# followed by one Snapshot). Reported per run: the first refresh, which
# backfills the 1 h window (seconds, requests), then CPU over the measured
# window (getrusage of the source's process), peak RSS, requests per
# refresh. Several runs, medians.
# Targets at 1,000 endpoints: backfill <= 3 s, CPU <= 5 % of one core,
# RSS <= 200 MB, requests per refresh independent of N.
# Usage: bench/promql_fleet.sh [endpoints] [measure] [runs] [window]
set -euo pipefail
cd "$(dirname "$0")/.."
endpoints=${1:-1000}
measure=${2:-60s}
runs=${3:-3}
window=${4:-1h}
tmp=$(mktemp -d)
pid=
cleanup() {
	if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
	rm -rf "$tmp"
}
trap cleanup EXIT

go build -o "$tmp/promql_fleet" ./bench/promql_fleet
"$tmp/promql_fleet" -serve "$endpoints" -url-file "$tmp/url" &
pid=$!
for _ in $(seq 100); do [ -s "$tmp/url" ] && break; sleep 0.1; done
[ -s "$tmp/url" ] || { echo "server did not start" >&2; exit 1; }
echo "endpoints=$endpoints window=$window measure=$measure runs=$runs (nproc=$(nproc), load: $(cut -d' ' -f1-3 /proc/loadavg))"

back=() cpu=() rss=() end=() req=()
for i in $(seq "$runs"); do
	out=$("$tmp/promql_fleet" -run -url-file "$tmp/url" -window "$window" -measure "$measure")
	echo "run $i:"; sed 's/^/  /' <<<"$out"
	back+=("$(sed -nE 's/^backfill of [^:]+: ([0-9.]+)s.*/\1/p' <<<"$out")")
	cpu+=("$(sed -nE 's/.*=> ([0-9.]+)% of one core.*/\1/p' <<<"$out")")
	rss+=("$(sed -nE 's/.*peak RSS ([0-9.]+) MiB.*/\1/p' <<<"$out")")
	end+=("$(sed -nE 's/.*RSS at the end ([0-9.]+) MiB.*/\1/p' <<<"$out")")
	req+=("$(sed -nE 's/.*requests per refresh min [0-9]+ median ([0-9]+).*/\1/p' <<<"$out")")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "median: backfill $(median "${back[@]}")s (target <= 3s); cpu $(median "${cpu[@]}")% of one core (target <= 5%); peak RSS $(median "${rss[@]}") MiB, RSS at the end $(median "${end[@]}") MiB (target <= 200 MB); requests per refresh $(median "${req[@]}")"

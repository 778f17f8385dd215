#!/usr/bin/env bash
# Time from start to first figures without configuration: `ttftop` with
# no target (local discovery), and `ttftop ssh://box` (discovery and
# probes through one SSH connection to a real sshd on loopback), and
# `ttftop probe ssh://box` (its first request line with a TTFT). The
# engine is the simulator started as a process named vllm (found through
# the socket it owns; --discover-ports "" scans no well-known port, so
# nothing else on a shared machine is measured). "First figures" is the
# first --json line (refresh 100ms) with a probed TTFT; the time runs from
# the command's start. Needs /usr/sbin/sshd and ssh-keygen for the second.
#
# Usage: bench/discovery_first_figures.sh [runs]   (default 5)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
tmp=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	rm -rf "$tmp"
}
trap cleanup EXIT

go build -o "$tmp/ttftop" ./cmd/ttftop
cp "$tmp/ttftop" "$tmp/vllm"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$tmp/vllm" sim --listen "127.0.0.1:$port" --dcgm-listen "" --load 2 >/dev/null 2>&1 &
pids+=($!)
until curl -fs "http://127.0.0.1:$port/v1/models" >/dev/null; do sleep 0.1; done

# first_line FILTER CMD...: seconds from start to CMD's first stdout line
# that jq FILTER holds for.
first_line() {
	local filter=$1 start end
	shift
	start=$(date +%s.%N)
	"$@" 2>"$tmp/stderr" |
		while IFS= read -r line; do
			if jq -e "$filter" <<<"$line" >/dev/null; then
				end=$(date +%s.%N)
				echo "$start $end" | awk '{printf "%.2f\n", $2-$1}'
				break
			fi
		done
}

# first_figures CMD...: a monitoring command's first line with a probed TTFT.
first_figures() {
	first_line '[.endpoints[]? | .signals.ttft? | select(.count? > 0 and (.source | startswith("probe:")))] | length > 0' \
		"$@" --json --refresh 100ms --interval 1s --max-tokens 16 --discover-ports ""
}

# probe_first CMD...: probe's first request line with a TTFT (--jsonl
# prints each request as it ends).
probe_first() {
	first_line '.ttft_ms? != null' "$@" --jsonl -n 3 --max-tokens 16 --discover-ports ""
}

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

echo "local (ttftop, no target):"
for _ in $(seq "$runs"); do
	XDG_CONFIG_HOME="$tmp/noconfig" timeout 60 bash -c "$(declare -f first_line first_figures); tmp=$tmp; first_figures $tmp/ttftop" || true
done | tee "$tmp/local" | sed 's/^/  /'
echo "  median $(median <"$tmp/local") s"

if [ ! -x /usr/sbin/sshd ] || ! command -v ssh-keygen >/dev/null; then
	echo "ssh: skipped (no /usr/sbin/sshd or ssh-keygen)"
	exit 0
fi
mkdir -p /run/sshd "$tmp/home/.ssh"
ssh-keygen -q -t ed25519 -N "" -f "$tmp/hostkey"
ssh-keygen -q -t ed25519 -N "" -f "$tmp/home/.ssh/id_ed25519"
cp "$tmp/home/.ssh/id_ed25519.pub" "$tmp/authorized_keys"
sport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat >"$tmp/sshd_config" <<CONF
Port $sport
ListenAddress 127.0.0.1
HostKey $tmp/hostkey
AuthorizedKeysFile $tmp/authorized_keys
PidFile $tmp/sshd.pid
StrictModes no
UsePAM no
PasswordAuthentication no
LogLevel ERROR
CONF
/usr/sbin/sshd -D -e -f "$tmp/sshd_config" 2>/dev/null &
pids+=($!)
cat >"$tmp/home/.ssh/config" <<CONF
Host box
    HostName 127.0.0.1
    Port $sport
    User $(id -un)
CONF
echo "[127.0.0.1]:$sport $(cut -d' ' -f1,2 "$tmp/hostkey.pub")" >"$tmp/home/.ssh/known_hosts"
until (exec 3<>"/dev/tcp/127.0.0.1/$sport") 2>/dev/null; do sleep 0.1; done

echo "ssh (ttftop ssh://box):"
for _ in $(seq "$runs"); do
	HOME="$tmp/home" SSH_AUTH_SOCK="" timeout 60 bash -c "$(declare -f first_line first_figures); tmp=$tmp; first_figures $tmp/ttftop ssh://box" || true
done | tee "$tmp/ssh" | sed 's/^/  /'
echo "  median $(median <"$tmp/ssh") s"

echo "probe through ssh (ttftop probe ssh://box):"
for _ in $(seq "$runs"); do
	HOME="$tmp/home" SSH_AUTH_SOCK="" timeout 60 bash -c "$(declare -f first_line probe_first); tmp=$tmp; probe_first $tmp/ttftop probe ssh://box" || true
done | tee "$tmp/probe" | sed 's/^/  /'
echo "  median $(median <"$tmp/probe") s"

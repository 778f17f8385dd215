#!/usr/bin/env bash
# Builds the kube-apiserver and etcd the kube integration tests start, from
# their Go modules (internal/kubetest/apiserver), into a cache directory
# outside the repository; does nothing when both are already there.
#   TTFTOP_KUBE_BIN  where the binaries go (default ~/.cache/ttftop/kube-v1.37.2)
#   --check          only say whether they are there (exit 1 when not)
set -euo pipefail
cd "$(dirname "$0")/apiserver"

bin="${TTFTOP_KUBE_BIN:-$HOME/.cache/ttftop/kube-v1.37.2}"
if [ -x "$bin/kube-apiserver" ] && [ -x "$bin/etcd" ]; then
  echo "kube binaries present in $bin"
  exit 0
fi
if [ "${1:-}" = "--check" ]; then
  echo "kube binaries not built in $bin"
  exit 1
fi
mkdir -p "$bin"
start=$(date +%s)
# -trimpath and no VCS stamp: the same cache serves every checkout.
nice -n 10 go build -trimpath -buildvcs=false -o "$bin/etcd.tmp" go.etcd.io/etcd/server/v3
nice -n 10 go build -trimpath -buildvcs=false -o "$bin/kube-apiserver.tmp" k8s.io/kubernetes/cmd/kube-apiserver
mv "$bin/etcd.tmp" "$bin/etcd"
mv "$bin/kube-apiserver.tmp" "$bin/kube-apiserver"
echo "kube binaries built in $bin in $(( $(date +%s) - start )) s"

#!/usr/bin/env bash
# Builds the CNI plugins the in-cluster tier's node networks its pods with (bridge, host-local, loopback,
# portmap), at the version pinned in go.mod, into a cache outside the clone:
#   ${BINDING_SCHEDULER_CACHE:-~/.cache/binding-scheduler}/cni/<plugins>-<go>/
# and prints that directory (containerd's CNI bin_dir). A plugin already there is not rebuilt.
set -euo pipefail
cd "$(dirname "$0")"
plugins=$(go list -m -f '{{.Version}}' github.com/containernetworking/plugins)
gov=$(go env GOVERSION)
out="${BINDING_SCHEDULER_CACHE:-$HOME/.cache/binding-scheduler}/cni/${plugins}-${gov}"
mkdir -p "$out"
build() {  # name package
  if [[ ! -x "$out/$1" ]]; then
    echo "cni: building $1 ($2) into $out" >&2
    CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$out/$1.tmp" "$2"
    mv "$out/$1.tmp" "$out/$1"
  fi
}
base=github.com/containernetworking/plugins/plugins
build bridge "$base/main/bridge"
build host-local "$base/ipam/host-local"
build loopback "$base/main/loopback"
build portmap "$base/meta/portmap"
echo "$out"

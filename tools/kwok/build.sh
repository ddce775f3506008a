#!/usr/bin/env bash
# Builds kwok at the version pinned in go.mod into a cache outside the clone:
#   ${BINDING_SCHEDULER_CACHE:-~/.cache/binding-scheduler}/kwok/<kwok>-<go>/kwok
# and prints that directory. A binary already there is not rebuilt. kwok's stage definitions (how a fake Node
# becomes Ready, how a Pod becomes Running) are read at run time from the same module in Go's module cache;
# `build.sh stages` prints that directory.
set -euo pipefail
cd "$(dirname "$0")"
kwok=$(go list -m -f '{{.Version}}' sigs.k8s.io/kwok)
if [[ "${1:-}" == "stages" ]]; then
  echo "$(go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)/kustomize/stage"
  exit 0
fi
gov=$(go env GOVERSION)
out="${BINDING_SCHEDULER_CACHE:-$HOME/.cache/binding-scheduler}/kwok/${kwok}-${gov}"
mkdir -p "$out"
if [[ ! -x "$out/kwok" ]]; then
  echo "kwok: building kwok (sigs.k8s.io/kwok/cmd/kwok) into $out" >&2
  CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$out/kwok.tmp.$$" sigs.k8s.io/kwok/cmd/kwok
  mv "$out/kwok.tmp.$$" "$out/kwok"
fi
echo "$out"

#!/usr/bin/env bash
# Builds karmada-oracle (Karmada's own scheduler, at the version pinned in go.mod, run over simulate's inputs)
# into a cache outside the clone:
#   ${BINDING_SCHEDULER_CACHE:-~/.cache/binding-scheduler}/karmada-oracle/<karmada>-<go>-<source hash>/karmada-oracle
# where <source hash> is the first 12 hex digits of the sha256 of our .go files and go.sum, so that a change
# to the oracle or to its dependencies builds a new binary while an unchanged one is never rebuilt.
# Prints that directory. The first build compiles Karmada and the Kubernetes libraries: a few minutes.
set -euo pipefail
cd "$(dirname "$0")"
karmada=$(go list -m -f '{{.Version}}' github.com/karmada-io/karmada)
gov=$(go env GOVERSION)
hash=$(for f in $(LC_ALL=C ls -- *.go) go.sum; do printf '%s\0' "$f"; cat -- "$f"; done | sha256sum | cut -c1-12)
out="${BINDING_SCHEDULER_CACHE:-$HOME/.cache/binding-scheduler}/karmada-oracle/${karmada}-${gov}-${hash}"
if [[ ! -x "$out/karmada-oracle" ]]; then
  echo "karmada-oracle: building against karmada ${karmada} into $out (the first build takes minutes)" >&2
  mkdir -p "$out"
  tmp="$out/karmada-oracle.tmp.$$"
  trap 'rm -f "$tmp"' EXIT
  CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$tmp" .
  mv "$tmp" "$out/karmada-oracle"
fi
echo "$out"

#!/usr/bin/env bash
# Builds promcheck (main.go: Prometheus's own rule-file and PromQL parsers, at the version go.mod pins) into
#   ${BINDING_SCHEDULER_CACHE:-~/.cache/binding-scheduler}/promcheck/<prometheus>-<go>-<hash>/promcheck
# and prints the binary's path; <hash> is the first 12 hex digits of the sha256 of main.go and go.sum, so a
# change builds a new one and an unchanged one is never rebuilt. The first build takes about a minute.
set -euo pipefail
cd "$(dirname "$0")"
prometheus=$(go list -m -f '{{.Version}}' github.com/prometheus/prometheus)
gov=$(go env GOVERSION)
hash=$(cat main.go go.sum | sha256sum | cut -c1-12)
out="${BINDING_SCHEDULER_CACHE:-$HOME/.cache/binding-scheduler}/promcheck/${prometheus}-${gov}-${hash}"
if [[ ! -x "$out/promcheck" ]]; then
  mkdir -p "$out"
  echo "promcheck: building into $out" >&2
  CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$out/promcheck.tmp.$$" .
  mv "$out/promcheck.tmp.$$" "$out/promcheck"
fi
echo "$out/promcheck"

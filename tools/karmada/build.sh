#!/usr/bin/env bash
# Builds Karmada's own karmada-scheduler and karmada-scheduler-estimator, at the version pinned in go.mod, into
# a cache outside the clone:
#   ${BINDING_SCHEDULER_CACHE:-~/.cache/binding-scheduler}/karmada/<karmada>-<go>/
# and prints that directory. A binary already there is not rebuilt. They report the pinned release (and its
# commit, as the Go module proxy records it) on `version`, stamped the way Karmada's hack/util.sh does.
#   build.sh estimator-client   builds our estimator-client (estimator-client/) into
#                               <that directory>/estimator-client-<hash>/ and prints the binary's path; <hash> is
#                               the first 12 hex digits of the sha256 of its .go files and go.sum, so a change
#                               builds a new one and an unchanged one is never rebuilt.
#   build.sh control-plane      builds, besides those two, the rest of a Karmada control plane (controller-manager,
#                               webhook, aggregated-apiserver, agent, karmadactl) and Karmada's e2e suite
#                               (test/e2e/suites/base) as e2e-base.test, into the same directory.
# The first build compiles Karmada and the Kubernetes libraries: minutes (docs/testing.md has the measurement).
set -euo pipefail
cd "$(dirname "$0")"
karmada=$(go list -m -f '{{.Version}}' github.com/karmada-io/karmada)
gov=$(go env GOVERSION)
out="${BINDING_SCHEDULER_CACHE:-$HOME/.cache/binding-scheduler}/karmada/${karmada}-${gov}"
mkdir -p "$out"
# Karmada's hack/build.sh builds with this tag: the estimator's protobuf messages (pkg/estimator/pb) still
# refer to Kubernetes types as messages, and from k8s.io/api v0.35 those are messages only under this tag.
# Without it, Karmada's estimator client panics on its first request ("*v1.NodeSelector is neither a v1 or
# v2 Message").
tags=kubernetes_protomessage_one_more_release

build() {  # path-of-binary package ldflags
  if [[ ! -x "$1" ]]; then
    echo "karmada: building $(basename "$1") ($2) into $(dirname "$1")" >&2
    local tmp="$1.tmp.$$"
    trap 'rm -f "$tmp"' EXIT
    CGO_ENABLED=0 go build -trimpath -tags "$tags" -ldflags "-s -w $3" -o "$tmp" "$2"
    mv "$tmp" "$1"
    trap - EXIT
  fi
}

if [[ "${1:-}" == "estimator-client" ]]; then
  hash=$(for f in $(LC_ALL=C ls -- estimator-client/*.go) go.sum; do printf '%s\0' "$f"; cat -- "$f"; done \
         | sha256sum | cut -c1-12)
  build "$out/estimator-client-${hash}/estimator-client" ./estimator-client ""
  echo "$out/estimator-client-${hash}/estimator-client"
  exit 0
fi

# The release's commit and date, as the module proxy recorded them (its Origin.Hash, the version's Time).
commit=$(go mod download -json "github.com/karmada-io/karmada@${karmada}" \
         | sed -n 's/.*"Hash": "\([0-9a-f]\{40\}\)".*/\1/p')
date=$(go list -m -f '{{with .Time}}{{.UTC.Format "2006-01-02T15:04:05Z"}}{{end}}' github.com/karmada-io/karmada)
commit=${commit:-unknown}
pkg=github.com/karmada-io/karmada/pkg/version
stamp="-X ${pkg}.gitVersion=${karmada} -X ${pkg}.gitTreeState=clean -X ${pkg}.gitCommit=${commit}"
stamp+=" -X ${pkg}.gitShortCommit=${commit:0:7} -X ${pkg}.buildDate=${date:-unknown}"
build "$out/karmada-scheduler" github.com/karmada-io/karmada/cmd/scheduler "$stamp"
build "$out/karmada-scheduler-estimator" github.com/karmada-io/karmada/cmd/scheduler-estimator "$stamp"
if [[ "${1:-}" == "control-plane" ]]; then
  # The rest of a Karmada control plane, and Karmada's own e2e suite compiled as a test binary (the Karmada
  # tier, tests/karmada). Minutes more on a first build; the default test run builds them too.
  build "$out/karmada-controller-manager" github.com/karmada-io/karmada/cmd/controller-manager "$stamp"
  build "$out/karmada-webhook" github.com/karmada-io/karmada/cmd/webhook "$stamp"
  build "$out/karmada-aggregated-apiserver" github.com/karmada-io/karmada/cmd/aggregated-apiserver "$stamp"
  build "$out/karmada-agent" github.com/karmada-io/karmada/cmd/agent "$stamp"
  build "$out/karmadactl" github.com/karmada-io/karmada/cmd/karmadactl "$stamp"
  if [[ ! -x "$out/e2e-base.test" ]]; then
    echo "karmada: compiling Karmada's e2e suite (test/e2e/suites/base) into $out" >&2
    CGO_ENABLED=0 go test -c -trimpath -tags "$tags" -o "$out/e2e-base.test.tmp.$$" \
      github.com/karmada-io/karmada/test/e2e/suites/base
    mv "$out/e2e-base.test.tmp.$$" "$out/e2e-base.test"
  fi
fi
echo "$out"

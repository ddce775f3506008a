#!/usr/bin/env bash
# Builds helm from the version pinned in go.mod into a cache outside the clone:
#   ${BINDING_SCHEDULER_CACHE:-~/.cache/binding-scheduler}/helm/<helm>-<go>/helm
# Prints that directory. A binary already there is not rebuilt.
set -euo pipefail
cd "$(dirname "$0")"
helm=$(go list -m -f '{{.Version}}' helm.sh/helm/v3)
gov=$(go env GOVERSION)
out="${BINDING_SCHEDULER_CACHE:-$HOME/.cache/binding-scheduler}/helm/${helm}-${gov}"
mkdir -p "$out"
if [[ ! -x "$out/helm" ]]; then
  echo "helm: building helm ${helm} into $out" >&2
  # helm version reports the pinned release, as the released binary does.
  CGO_ENABLED=0 go build -trimpath \
    -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=${helm} -X helm.sh/helm/v3/internal/version.gitTreeState=clean" \
    -o "$out/helm.tmp" helm.sh/helm/v3/cmd/helm
  mv "$out/helm.tmp" "$out/helm"
fi
echo "$out"

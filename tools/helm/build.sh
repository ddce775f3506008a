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
  # Stamped as helm's own Makefile does: `helm version` reports the pinned release, and the Kubernetes
  # version helm lint/template assume is the one its client-go module targets (v0.X -> 1.X).
  client=$(go list -m -f '{{.Version}}' k8s.io/client-go)
  minor=${client#v0.}; minor=${minor%%.*}
  stamp="-X helm.sh/helm/v3/internal/version.version=${helm} -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
  for pkg in pkg/lint/rules pkg/chartutil; do
    stamp+=" -X helm.sh/helm/v3/${pkg}.k8sVersionMajor=1 -X helm.sh/helm/v3/${pkg}.k8sVersionMinor=${minor}"
  done
  CGO_ENABLED=0 go build -trimpath -ldflags "-s -w ${stamp}" \
    -o "$out/helm.tmp" helm.sh/helm/v3/cmd/helm
  mv "$out/helm.tmp" "$out/helm"
fi
echo "$out"

#!/usr/bin/env bash
# Builds kube-apiserver, kube-controller-manager, kube-scheduler, kubelet, kube-proxy, kubectl and etcd from the versions pinned in
# go.mod into a cache outside the clone:
#   ${BINDING_SCHEDULER_CACHE:-~/.cache/binding-scheduler}/controlplane/<k8s>-<etcd>-<go>/
# Prints that directory. A binary already there is not rebuilt; pki (our own, ./pki) is rebuilt when its
# source changes (pki.sha256 beside it records the source it was built from).
set -euo pipefail
cd "$(dirname "$0")"
k8s=$(go list -m -f '{{.Version}}' k8s.io/kubernetes)
etcd=$(go list -m -f '{{.Version}}' go.etcd.io/etcd/server/v3)
gov=$(go env GOVERSION)
out="${BINDING_SCHEDULER_CACHE:-$HOME/.cache/binding-scheduler}/controlplane/${k8s}-etcd${etcd}-${gov}"
mkdir -p "$out"
# kube-apiserver and kubectl report the pinned release on /version, as the released binaries do.
minor=${k8s#v1.}; minor=${minor%%.*}
stamp="-X k8s.io/component-base/version.gitVersion=${k8s} -X k8s.io/component-base/version.gitMajor=1"
stamp+=" -X k8s.io/component-base/version.gitMinor=${minor} -X k8s.io/component-base/version.gitTreeState=clean"
stamp+=" -X k8s.io/client-go/pkg/version.gitVersion=${k8s} -X k8s.io/client-go/pkg/version.gitMajor=1"
stamp+=" -X k8s.io/client-go/pkg/version.gitMinor=${minor} -X k8s.io/client-go/pkg/version.gitTreeState=clean"
build() {  # name package
  if [[ ! -x "$out/$1" ]]; then
    echo "controlplane: building $1 ($2) into $out" >&2
    CGO_ENABLED=0 go build -trimpath -ldflags "-s -w $stamp" -o "$out/$1.tmp" "$2"
    mv "$out/$1.tmp" "$out/$1"
  fi
}
pki_sum=$(cat pki/*.go | sha256sum | cut -c1-64)
if [[ "$(cat "$out/pki.sha256" 2>/dev/null)" != "$pki_sum" ]]; then
  rm -f "$out/pki"
fi
build pki ./pki
echo "$pki_sum" > "$out/pki.sha256"
build etcd ./etcd
build kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver
build kube-controller-manager k8s.io/kubernetes/cmd/kube-controller-manager
build kube-scheduler k8s.io/kubernetes/cmd/kube-scheduler
# A node of the in-cluster tier (testsupport/karmada/node.py): kubelet and kube-proxy of the same release.
build kubelet k8s.io/kubernetes/cmd/kubelet
build kube-proxy k8s.io/kubernetes/cmd/kube-proxy
build kubectl k8s.io/kubernetes/cmd/kubectl
echo "$out"

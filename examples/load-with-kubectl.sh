#!/usr/bin/env bash
# Loads the example fleet (clusters.yaml, beside this script) into a Kubernetes API server with nothing but
# kubectl: a devcluster (`binding-scheduler devcluster`), or any cluster that serves Karmada's CRDs.
#
#   KUBECONFIG=/path/to/kubeconfig examples/load-with-kubectl.sh [--bindings]
#
# Each Cluster is applied server-side, then its status through the status subresource (the main resource
# ignores status), both by the field manager "binding-scheduler-examples". With --bindings, the namespaces of
# bindings.yaml and scheduler-configuration.yaml are created and both files applied too, for
# `binding-scheduler run` to schedule. $KUBECTL names the kubectl to use (default: kubectl on PATH; 1.28 or
# later, for --subresource).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
kubectl=${KUBECTL:-kubectl}
manager=binding-scheduler-examples
bindings=false
for argument in "$@"; do
  case "$argument" in
    --bindings) bindings=true ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "load-with-kubectl.sh: unknown argument: $argument (try --help)" >&2; exit 2 ;;
  esac
done

"$kubectl" apply --server-side --field-manager "$manager" -f "$here/clusters.yaml"
"$kubectl" apply --server-side --field-manager "$manager" --subresource=status -f "$here/clusters.yaml"

if [[ $bindings == true ]]; then
  files=(-f "$here/scheduler-configuration.yaml" -f "$here/bindings.yaml")
  for namespace in $("$kubectl" create --dry-run=client -o 'jsonpath={.metadata.namespace}{"\n"}' "${files[@]}" \
                     | sort -u); do
    "$kubectl" create namespace "$namespace" --dry-run=client -o yaml \
      | "$kubectl" apply --server-side --field-manager "$manager" -f -
  done
  "$kubectl" apply --server-side --field-manager "$manager" "${files[@]}"
fi

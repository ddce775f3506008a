"""Karmada's own manifests, read from Karmada's Go module (never copied into this repository), adapted to a
control plane whose components are processes on loopback instead of pods behind Services.

What changes, and only that: a URL that names a Service DNS name (`karmada-webhook.karmada-system.svc:443`)
names the loopback address and port the component listens on; `{{caBundle}}` is this plane's CA; Services that
front a component are `ExternalName` Services pointing at 127.0.0.1 (what Karmada itself uses for the
aggregated API server and the estimators: kube-apiserver and Karmada's estimator client both resolve them)."""

from __future__ import annotations

import base64
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from testsupport.realcluster.controlplane import ROOT

KARMADA_TOOLS = ROOT / "tools" / "karmada"
KWOK_TOOLS = ROOT / "tools" / "kwok"
WEBHOOK_SERVICE_URL = "https://karmada-webhook.karmada-system.svc:443/"
LOOPBACK = "127.0.0.1"


def module_dir(tools: Path, module: str) -> Path:
    """Where Go's module cache holds `module` at the version `tools/<name>/go.mod` pins."""
    result = subprocess.run(["go", "list", "-m", "-f", "{{.Dir}}", module], cwd=tools, capture_output=True,
                            text=True, check=False)
    directory = result.stdout.strip()
    if result.returncode != 0 or not directory:
        result = subprocess.run(["go", "mod", "download", module], cwd=tools, capture_output=True, text=True,
                                check=False)
        raise RuntimeError(f"{module} is not in Go's module cache ({tools.relative_to(ROOT)}): "
                           f"{result.stderr.strip() or 'go list found no directory'}")
    return Path(directory)


def karmada_module() -> Path:
    return module_dir(KARMADA_TOOLS, "github.com/karmada-io/karmada")


def ca_bundle(ca: Path) -> str:
    return base64.b64encode(ca.read_bytes()).decode()


def documents(path: Path, substitutions: dict[str, str] | None = None) -> list[dict[str, Any]]:
    text = path.read_text()
    for old, new in (substitutions or {}).items():
        text = text.replace(old, new)
    return [document for document in yaml.safe_load_all(text) if document]


def crds(ca: Path, webhook_port: int) -> Iterator[dict[str, Any]]:
    """Every CRD Karmada installs in karmada-apiserver (charts/karmada/_crds, its kustomization's resource
    list), with the conversion webhook of its two binding CRDs (its patches) pointing at karmada-webhook, and
    the one field karmada-io/karmada PR #7832 adds to them (with_preemption_policy)."""
    root = karmada_module() / "charts" / "karmada" / "_crds"
    kustomization = yaml.safe_load((root / "kustomization.yaml").read_text())
    conversions = {}
    for patch in kustomization.get("patches", []):
        (document,) = documents(root / patch["path"], {
            "https://{{name}}.{{namespace}}.svc:443/": f"https://{LOOPBACK}:{webhook_port}/",
            "{{caBundle}}": ca_bundle(ca),
        })
        conversions[document["metadata"]["name"]] = document["spec"]["conversion"]
    for resource in kustomization["resources"]:
        for document in documents(root / resource):
            conversion = conversions.get(document["metadata"]["name"])
            if conversion is not None:
                document["spec"]["conversion"] = conversion
            yield with_preemption_policy(document)


BINDING_CRDS = ("resourcebindings.work.karmada.io", "clusterresourcebindings.work.karmada.io")


def with_preemption_policy(crd: dict[str, Any]) -> dict[str, Any]:
    """A binding CRD of v1.18.2 with `spec.schedulePriority.preemptionPolicy` declared, as this repository's
    `crds/` declare it (tools/crdgen/preemption_policy.py; the field of PR #7832, binding priority preemption);
    any other CRD as it is. Without it, the API server would prune the field from every binding."""
    name = crd["metadata"]["name"]
    if name not in BINDING_CRDS:
        return crd
    ours = yaml.safe_load((ROOT / "crds" / f"work.karmada.io_{name.split('.')[0]}.yaml").read_text())
    declared = {version["name"]: _schedule_priority(version) for version in ours["spec"]["versions"]}
    patched = []
    for version in crd["spec"]["versions"]:
        theirs = _schedule_priority(version)
        if theirs is not None and declared.get(version["name"]) is not None:
            theirs["properties"]["preemptionPolicy"] = declared[version["name"]]["properties"]["preemptionPolicy"]
            patched.append(version["name"])
    if not patched:
        raise RuntimeError(f"{name}: no version has spec.schedulePriority in both Karmada's CRD and crds/")
    return crd


def _schedule_priority(version: dict[str, Any]) -> dict[str, Any] | None:
    spec = version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
    priority: dict[str, Any] | None = spec.get("schedulePriority")
    return priority


def webhook_configurations(ca: Path, webhook_port: int) -> list[dict[str, Any]]:
    """artifacts/deploy/webhook-configuration.yaml: Karmada's mutating and validating webhooks."""
    return documents(karmada_module() / "artifacts" / "deploy" / "webhook-configuration.yaml", {
        WEBHOOK_SERVICE_URL: f"https://{LOOPBACK}:{webhook_port}/",
        "{{caBundle}}": ca_bundle(ca),
    })


def aggregated_api(ca: Path, port: int) -> list[dict[str, Any]]:
    """artifacts/deploy/karmada-aggregated-apiserver-apiservice.yaml: the APIService of cluster.karmada.io
    and its ExternalName Service, pointed at karmada-aggregated-apiserver's loopback port (kube-apiserver
    resolves an ExternalName Service to `externalName:port`, the port being the APIService's)."""
    made = documents(karmada_module() / "artifacts" / "deploy" / "karmada-aggregated-apiserver-apiservice.yaml",
                     {"{{caBundle}}": ca_bundle(ca)})
    for document in made:
        if document["kind"] == "APIService":
            document["spec"]["service"]["port"] = port
        elif document["kind"] == "Service":
            document["spec"]["externalName"] = LOOPBACK
    return made


def plain(name: str) -> list[dict[str, Any]]:
    """An artifacts/deploy manifest that needs no substitution."""
    return documents(karmada_module() / "artifacts" / "deploy" / name)


def bootstrap_token_configuration(ca: Path, karmada_url: str) -> list[dict[str, Any]]:
    """artifacts/deploy/bootstrap-token-configuration.yaml (the cluster-info ConfigMap `karmadactl register`
    reads), filled in as hack/deploy-karmada.sh fills it."""
    return documents(karmada_module() / "artifacts" / "deploy" / "bootstrap-token-configuration.yaml", {
        "{{ca_crt}}": ca_bundle(ca), "{{apiserver_address}}": karmada_url,
    })


def estimator_service(cluster: str, namespace: str, scheduler_port: int, target_port: int,
                      address: str = LOOPBACK) -> dict[str, Any]:
    """The Service karmada-scheduler (and binding-scheduler) look up to find a member's estimator: named
    `karmada-scheduler-estimator-<cluster>`, ExternalName `address` (where the scheduler reaches the host's
    estimator processes), its port the scheduler's `--scheduler-estimator-port` and its targetPort where the
    estimator listens."""
    return {
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": f"karmada-scheduler-estimator-{cluster}", "namespace": namespace,
                     "labels": {"cluster": cluster}},
        "spec": {"type": "ExternalName", "externalName": address,
                 "ports": [{"name": "grpc", "port": scheduler_port, "targetPort": target_port}]},
    }


UNPULLABLE_IMAGE = 'select(.spec.containers[].image | startswith("fake/"))'
"""A kwok selector that is true of a Pod with an image from the `fake/` repository: one no registry serves.
Karmada's failover specs use `fake/nginx:1.19.0` to make a workload unhealthy; a kubelet could not pull it, so
such a Pod never becomes Ready here either."""


def kwok_stages() -> str:
    """kwok's own stages (kustomize/stage in its module): a fake Node becomes Ready at once and keeps its Lease
    renewed (so the node lifecycle controller lifts its not-ready taint and keeps it Ready), a Pod bound to one
    becomes Running and Ready unless its image cannot be pulled (UNPULLABLE_IMAGE: it stays Pending, as with a
    kubelet), a deleted Pod goes away, a finished Job's Pod completes."""
    root = module_dir(KWOK_TOOLS, "sigs.k8s.io/kwok") / "kustomize" / "stage"
    files = [root / "node" / "fast" / "node-initialize.yaml",
             root / "node" / "heartbeat-with-lease" / "node-heartbeat-with-lease.yaml",
             *sorted((root / "pod" / "fast").glob("pod-*.yaml"))]
    stages = [document for path in files for document in documents(path)]
    for stage in stages:
        if stage["metadata"]["name"] == "pod-ready":
            stage["spec"]["selector"]["matchExpressions"].append(
                {"key": UNPULLABLE_IMAGE, "operator": "DoesNotExist"})
    return yaml.safe_dump_all(stages)

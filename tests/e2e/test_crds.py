"""The CRDs in `crds/` are accepted by a real kube-apiserver, and every example object validates against them."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import yaml

from tests.e2e.harness import Objects
from testsupport.realcluster.controlplane import CRDS, ROOT, ControlPlane
from testsupport.realcluster.kube import KubeClient

EXAMPLES = ROOT / "examples"


def crd(kube: KubeClient, name: str) -> dict[str, Any]:
    answer = kube.ok("GET", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}")
    return dict(answer)


def test_four_crds_are_established(kube: KubeClient) -> None:
    expected = {
        "resourcebindings.work.karmada.io": ("ResourceBinding", "Namespaced", ["rb"]),
        "clusterresourcebindings.work.karmada.io": ("ClusterResourceBinding", "Cluster", ["crb"]),
        "clusters.cluster.karmada.io": ("Cluster", "Cluster", []),  # Karmada defines none for Cluster
        "schedulerconfigurations.config.binding-scheduler.io": ("SchedulerConfiguration", "Namespaced", ["schedconf"]),
    }
    assert {yaml.safe_load(p.read_text())["metadata"]["name"] for p in CRDS.glob("*.yaml")} == set(expected)
    for name, (kind, scope, short_names) in expected.items():
        body = crd(kube, name)
        conditions = {c["type"]: c["status"] for c in body["status"]["conditions"]}
        assert conditions.get("Established") == "True", name
        assert conditions.get("NonStructuralSchema") is None, name
        assert (body["spec"]["names"]["kind"], body["spec"]["scope"]) == (kind, scope)
        assert body["spec"]["names"].get("shortNames", []) == short_names, name
        served = [v for v in body["spec"]["versions"] if v["served"]]
        assert all(v["subresources"].get("status") == {} for v in served), name
        assert all(v.get("additionalPrinterColumns") for v in served), name


def test_every_example_object_passes_server_side_dry_run(
    control_plane: ControlPlane, objects: Objects
) -> None:
    documents = [d for p in sorted(EXAMPLES.glob("*.yaml")) for d in yaml.safe_load_all(p.read_text()) if d]
    namespaces = sorted({d["metadata"]["namespace"] for d in documents if d["metadata"].get("namespace")})
    objects.create(*({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}} for n in namespaces))
    result = control_plane.kubectl("apply", "--dry-run=server", "-o", "name", "-f", str(EXAMPLES), check=False)
    assert result.returncode == 0, result.stderr
    assert len(result.stdout.split()) == len(documents)


def test_binding_that_breaks_schema_is_refused_with_field_path(
    control_plane: ControlPlane, kube: KubeClient
) -> None:
    bad = {
        "apiVersion": "work.karmada.io/v1alpha2", "kind": "ResourceBinding",
        "metadata": {"name": "bad", "namespace": "default"},
        "spec": {"resource": {"apiVersion": "v1", "kind": "ConfigMap", "name": "x"}, "replicas": "lots"},
    }
    status, answer = kube.request("POST", "/apis/work.karmada.io/v1alpha2/namespaces/default/resourcebindings"
                                  "?dryRun=All", bad)
    assert status == 422, answer
    assert "spec.replicas" in answer["message"]


def _with_preemption_policy(policy: object) -> dict[str, Any]:
    return {
        "apiVersion": "work.karmada.io/v1alpha2", "kind": "ResourceBinding",
        "metadata": {"name": "preemptor", "namespace": "default"},
        "spec": {"resource": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "x"}, "replicas": 1,
                 "schedulePriority": {"priority": 1000, "preemptionPolicy": policy}},
    }


def test_preemption_policy_of_pr_7832_is_enforced(kube: KubeClient) -> None:
    path = "/apis/work.karmada.io/v1alpha2/namespaces/default/resourcebindings?dryRun=All"
    status, answer = kube.request("POST", path, _with_preemption_policy("PreemptLowerPriority"))
    assert status == 201, answer
    assert answer["spec"]["schedulePriority"] == {"priority": 1000, "preemptionPolicy": "PreemptLowerPriority"}
    status, answer = kube.request("POST", path, _with_preemption_policy("PreemptAlways"))
    assert status == 422, answer
    assert "spec.schedulePriority.preemptionPolicy" in answer["message"]
    status, answer = kube.request("POST", path, {**_with_preemption_policy(None), "spec": {
        "resource": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "x"}, "schedulePriority": {"priority": 5}}})
    assert status == 201, answer  # Karmada v1.18.2's detector writes a priority without a policy


def test_crds_are_generated_from_karmada(
    control_plane: ControlPlane, tmp_path: Path
) -> None:
    result = subprocess.run(["bash", str(ROOT / "tools" / "crdgen" / "generate.sh"), str(tmp_path)],
                            capture_output=True, text=True, check=False, timeout=900)
    assert result.returncode == 0, result.stderr
    generated = sorted(p.name for p in tmp_path.glob("*.yaml"))
    assert generated == [
        "cluster.karmada.io_clusters.yaml", "work.karmada.io_clusterresourcebindings.yaml",
        "work.karmada.io_resourcebindings.yaml",
    ]
    for name in generated:
        assert (tmp_path / name).read_text() == (CRDS / name).read_text(), f"{name} is stale: run tools/crdgen"

"""Acceptance: the real kubectl (v1.35.4, built from its module like the control plane, see
testsupport/realcluster/controlplane.py) against `binding-scheduler devcluster`'s server, as a user would drive it.
Skipped with one line where Go is missing (kubectl cannot be built)."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from binding_scheduler.devcluster import DevCluster
from testsupport.realcluster.controlplane import ControlPlaneError, binaries, go_available

RB = """apiVersion: work.karmada.io/v1alpha2
kind: ResourceBinding
metadata:
  name: {name}
  namespace: default
  labels: {{app: web}}
spec:
  resource: {{apiVersion: apps/v1, kind: Deployment, name: web}}
  replicas: {replicas}
"""


class Kubectl:
    def __init__(self, binary: Path, kubeconfig: Path, home: Path) -> None:
        self.binary, self.kubeconfig, self.home = binary, kubeconfig, home

    def __call__(self, *args: str, stdin: str | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
        command = [str(self.binary), "--kubeconfig", str(self.kubeconfig), "--cache-dir",
                   str(self.home / "cache"), *args]
        result = subprocess.run(command, input=stdin, capture_output=True, text=True, timeout=60, check=False,
                                env={**os.environ, "HOME": str(self.home), "KUBECTL_KUBERC": "false"})
        if check:
            assert result.returncode == 0, f"kubectl {' '.join(args)}: {result.returncode}\n{result.stderr}"
        return result

    def json(self, *args: str) -> Any:
        return json.loads(self(*args, "-o", "json").stdout)


@pytest.fixture(scope="module")
def kubectl_binary() -> Path:
    if not go_available():
        pytest.skip("kubectl: Go is not installed, so kubectl cannot be built from its module")
    try:
        return binaries() / "kubectl"
    except ControlPlaneError as error:
        pytest.fail(f"kubectl could not be built: {error}", pytrace=False)


@pytest.fixture(scope="module")
def cluster() -> Iterator[DevCluster]:
    with DevCluster.in_thread() as api:
        yield api


@pytest.fixture
def kubectl(kubectl_binary: Path, cluster: DevCluster, tmp_path: Path) -> Kubectl:
    return Kubectl(kubectl_binary, cluster.kubeconfig_path, tmp_path)


def rb(name: str, replicas: int = 2) -> str:
    return RB.format(name=name, replicas=replicas)


def stored(cluster: DevCluster, name: str) -> dict[str, Any] | None:
    return cluster.store.find("resourcebindings", name, "default")


def test_version_reports_kubernetes_1_35_without_skew_warning(kubectl: Kubectl) -> None:
    result = kubectl("version")
    assert "Server Version: v1.35.4+devcluster" in result.stdout
    assert "WARNING" not in result.stderr.upper()


def test_create_namespace_and_auth_can_i_and_whoami(kubectl: Kubectl, cluster: DevCluster) -> None:
    assert kubectl("create", "namespace", "team-a").stdout.strip() == "namespace/team-a created"
    assert cluster.store.get("namespaces", "team-a")["status"] == {"phase": "Active"}
    assert kubectl("auth", "can-i", "create", "resourcebindings", "-n", "team-a").stdout.strip() == "yes"
    assert "devcluster" in kubectl("auth", "whoami").stdout


def test_apply_with_server_dry_run_stores_nothing(kubectl: Kubectl, cluster: DevCluster) -> None:
    result = kubectl("apply", "--dry-run=server", "-f", "-", stdin=rb("dry"))
    assert result.stdout.strip() == "resourcebinding.work.karmada.io/dry created (server dry run)"
    assert stored(cluster, "dry") is None


def test_server_side_apply_conflicts_like_kube(kubectl: Kubectl, cluster: DevCluster) -> None:
    assert kubectl("apply", "--server-side", "-f", "-", stdin=rb("ssa")).stdout.strip() == (
        "resourcebinding.work.karmada.io/ssa serverside-applied")
    applied = kubectl.json("get", "rb", "ssa", "--show-managed-fields")
    assert [(e["manager"], e["operation"]) for e in applied["metadata"]["managedFields"]] == [
        ("kubectl", "Apply")]
    other = kubectl("apply", "--server-side", "--field-manager", "ops", "-f", "-", stdin=rb("ssa", replicas=5),
                    check=False)
    assert other.returncode == 1
    assert 'Apply failed with 1 conflict: conflict with "kubectl": .spec.replicas' in other.stderr
    kubectl("apply", "--server-side", "--field-manager", "ops", "--force-conflicts", "-f", "-",
            stdin=rb("ssa", replicas=5))
    assert (stored(cluster, "ssa") or {})["spec"]["replicas"] == 5


def test_explain_prints_crd_schema(kubectl: Kubectl) -> None:
    result = kubectl("explain", "rb.spec.placement")
    assert "KIND:       ResourceBinding" in result.stdout
    assert "FIELD: placement <Object>" in result.stdout
    assert "clusterAffinity\t<Object>" in result.stdout


def test_get_shows_karmadas_printer_columns(kubectl: Kubectl, cluster: DevCluster) -> None:
    kubectl("apply", "-f", "-", stdin=rb("columns"))
    cluster.store.patch("resourcebindings", "columns", {"status": {"conditions": [
        {"type": "Scheduled", "status": "True", "reason": "Success", "message": "",
         "lastTransitionTime": "2024-01-01T00:00:00Z"}]}}, namespace="default", subresource="status")
    lines = kubectl("get", "rb", "columns").stdout.splitlines()
    assert lines[0].split() == ["NAME", "SCHEDULED", "FULLYAPPLIED", "AGE"]
    assert lines[1].split()[:2] == ["columns", "True"]
    assert kubectl("get", "clusters", "-o", "wide", "--no-headers=false").stderr.strip() == "No resources found"
    cluster.store.create("clusters", {"metadata": {"name": "m1"}, "spec": {"syncMode": "Push", "region": "eu"}})
    header, row = kubectl("get", "clusters", "-o", "wide").stdout.splitlines()
    assert header.split() == ["NAME", "VERSION", "MODE", "READY", "AGE", "ZONES", "REGION", "PROVIDER",
                              "API-ENDPOINT", "PROXY-URL"]
    assert row.split()[:2] == ["m1", "<none>"] or row.split()[:2] == ["m1", "Push"]
    assert kubectl("get", "schedconf").stderr.strip() == "No resources found in default namespace."


def test_describe_and_events_list_events_of_binding(kubectl: Kubectl, cluster: DevCluster) -> None:
    kubectl("apply", "-f", "-", stdin=rb("described"))
    uid = (stored(cluster, "described") or {})["metadata"]["uid"]
    for name, kind, about in (("described.1", "ResourceBinding", "described"), ("other.1", "ResourceBinding", "x")):
        cluster.store.create("events", {"metadata": {"name": name}, "type": "Normal", "reason": "Scheduled",
                                        "message": f"{about} was scheduled",
                                        "source": {"component": "binding-scheduler"},
                                        "involvedObject": {"apiVersion": "work.karmada.io/v1alpha2", "kind": kind,
                                                           "name": about, "namespace": "default",
                                                           "uid": uid if about == "described" else "x"}},
                             "default")
    described = kubectl("describe", "rb", "described").stdout
    assert "Normal  Scheduled" in described and "described was scheduled" in described
    assert "x was scheduled" not in described
    events = kubectl("events", "--for", "rb/described").stdout
    assert "ResourceBinding/described" in events and "x was scheduled" not in events


def test_bad_resource_is_refused_with_servers_422(kubectl: Kubectl, cluster: DevCluster) -> None:
    bad = rb("bad").replace("replicas: 2", "replicas: lots")
    result = kubectl("apply", "-f", "-", stdin=bad, check=False)
    assert result.returncode == 1
    assert 'The ResourceBinding "bad" is invalid' in result.stderr
    assert 'spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer' in result.stderr
    unknown = rb("unknown").replace("  replicas: 2", "  replicas: 2\n  bogus: 1")
    result = kubectl("create", "-f", "-", stdin=unknown, check=False)
    assert result.returncode == 1
    assert 'strict decoding error: unknown field "spec.bogus"' in result.stderr
    assert stored(cluster, "bad") is None and stored(cluster, "unknown") is None


def test_diff_changes_nothing(kubectl: Kubectl, cluster: DevCluster) -> None:
    kubectl("apply", "-f", "-", stdin=rb("diffed"))
    before = stored(cluster, "diffed")
    assert kubectl("diff", "-f", "-", stdin=rb("diffed")).returncode == 0
    changed = kubectl("diff", "-f", "-", stdin=rb("diffed", replicas=7), check=False)
    assert changed.returncode == 1
    assert "-  replicas: 2" in changed.stdout and "+  replicas: 7" in changed.stdout
    server_side = kubectl("diff", "--server-side", "-f", "-", stdin=rb("diffed", replicas=7), check=False)
    assert server_side.returncode == 1
    assert stored(cluster, "diffed") == before


def test_delete_with_server_dry_run_deletes_nothing(kubectl: Kubectl, cluster: DevCluster) -> None:
    kubectl("apply", "-f", "-", stdin=rb("kept"))
    result = kubectl("delete", "rb", "kept", "--dry-run=server")
    assert result.stdout.strip() == 'resourcebinding.work.karmada.io "kept" deleted from default namespace ' \
                                    "(server dry run)"
    assert stored(cluster, "kept") is not None
    kubectl("delete", "rb", "--all", "--dry-run=server")
    assert stored(cluster, "kept") is not None
    kubectl("delete", "rb", "kept")
    assert stored(cluster, "kept") is None


def test_apply_of_built_in_kind_merges_lists_by_key(kubectl: Kubectl, cluster: DevCluster) -> None:
    service = """apiVersion: v1
kind: Service
metadata: {name: estimator, namespace: default}
spec:
  selector: {app: estimator}
  ports:
  - {name: grpc, port: 10352, protocol: TCP}
  - {name: metrics, port: PORT, protocol: TCP}
"""
    kubectl("apply", "-f", "-", stdin=service.replace("PORT", "8080"))
    kubectl("apply", "-f", "-", stdin=service.replace("PORT", "9090"))  # a strategic merge patch with directives
    ports = cluster.store.get("services", "estimator", "default")["spec"]["ports"]
    assert [(p["name"], p["port"]) for p in ports] == [("grpc", 10352), ("metrics", 9090)]


def test_yaml_kubeconfig_is_what_kubectl_reads(cluster: DevCluster) -> None:
    config = yaml.safe_load(cluster.kubeconfig_path.read_text())
    assert config["clusters"][0]["cluster"]["server"] == cluster.url


def test_example_script_loads_fleet_with_status(kubectl_binary: Path, tmp_path: Path) -> None:
    script = Path(__file__).resolve().parents[3] / "examples" / "load-with-kubectl.sh"
    with DevCluster.in_thread() as api:
        result = subprocess.run(
            [str(script), "--bindings"], capture_output=True, text=True, timeout=120, check=False,
            env={**os.environ, "KUBECTL": str(kubectl_binary), "KUBECONFIG": str(api.kubeconfig_path),
                 "HOME": str(tmp_path)})
        assert result.returncode == 0, result.stderr
        expected = yaml.safe_load_all((script.parent / "clusters.yaml").read_text())
        fleet = {doc["metadata"]["name"]: doc for doc in expected if doc}
        clusters = {obj["metadata"]["name"]: obj for obj in api.store.list("clusters")}
        assert set(clusters) == set(fleet)
        for name, obj in clusters.items():
            assert obj["status"] == fleet[name]["status"], name
            managers = {(e["manager"], e.get("subresource", "")) for e in obj["metadata"]["managedFields"]}
            assert managers == {("binding-scheduler-examples", ""), ("binding-scheduler-examples", "status")}
        assert api.store.find("schedulerconfigurations", "binding-scheduler", "karmada-system") is not None
        assert len(api.store.list("resourcebindings")) == len([
            d for d in yaml.safe_load_all((script.parent / "bindings.yaml").read_text())
            if d and d["kind"] == "ResourceBinding"])


def test_kubectl_apply_creates_namespaces_first(
    kubectl_binary: Path, tmp_path: Path
) -> None:
    folder = Path(__file__).resolve().parents[3] / "examples"
    with DevCluster.in_thread() as api:
        result = subprocess.run(
            [str(kubectl_binary), "apply", "-f", str(folder)], capture_output=True, text=True, timeout=120,
            check=False, env={**os.environ, "KUBECONFIG": str(api.kubeconfig_path), "HOME": str(tmp_path)})
        assert result.returncode == 0, result.stderr
        assert "namespace/shop created" in result.stdout.splitlines()
        bindings = [d for d in yaml.safe_load_all((folder / "bindings.yaml").read_text())
                    if d and d["kind"].endswith("ResourceBinding")]
        stored = api.store.list("resourcebindings") + api.store.list("clusterresourcebindings")
        assert len(stored) == len(bindings)

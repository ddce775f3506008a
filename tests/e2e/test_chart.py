"""The Helm chart against the real API server: its manifests pass a server-side dry run, and the scheduler
schedules with exactly the chart's RBAC, started with the chart's own container arguments (the pod, minus
the kubelet: this control plane runs no nodes)."""

from __future__ import annotations

import signal
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.harness import Journal, Objects, decide_again_alike, unique, wait_scheduled
from testsupport.chart.helm import find, one, render, template
from testsupport.operator.harness import binding_doc, cluster_doc, crb_doc, wait_until
from testsupport.realcluster.audit import AuditEntry
from testsupport.realcluster.controlplane import (
    SCHEDULER_NAMESPACE,
    ControlPlane,
    free_port,
    service_account_kubeconfig,
)
from testsupport.realcluster.webhook import Fault, admission_faults

pytestmark = pytest.mark.usefixtures("helm")

BINDING_SCHEDULER = Path(sys.executable).parent / "binding-scheduler"

Permission = tuple[str, str, str]


def dry_run(plane: ControlPlane, manifests: str) -> str:
    result = plane.kubectl("apply", "--dry-run=server", "-f", "-", input=manifests, check=False)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_default_manifests_pass_server_side_dry_run(control_plane: ControlPlane) -> None:
    out = dry_run(control_plane, template(namespace=SCHEDULER_NAMESPACE))
    assert "deployment.apps/bs-binding-scheduler created (server dry run)" in out
    assert "clusterrole.rbac.authorization.k8s.io/bs-binding-scheduler created (server dry run)" in out


def test_in_cluster_manifests_pass_dry_run(control_plane: ControlPlane) -> None:
    values = {
        "karmadaAPI.mode": "inCluster", "replicas": 3, "podAntiAffinity": "hard", "networkPolicy.enabled": True,
        "config": {"workers": 4, "estimator": {"enabled": True}, "shutdown": {"drainTimeout": "30s"}},
        "extraArgs": ["--kube-api-qps=100"], "rbac.extraSubjects": [{"kind": "Group", "name": "schedulers",
                                                                       "apiGroup": "rbac.authorization.k8s.io"}],
    }
    out = dry_run(control_plane, template(values, namespace=SCHEDULER_NAMESPACE))
    assert "schedulerconfiguration.config.binding-scheduler.io/bs-binding-scheduler created (server dry run)" in out
    assert "networkpolicy.networking.k8s.io/bs-binding-scheduler created (server dry run)" in out


def granted(documents: list[dict[str, Any]], namespace: str) -> tuple[set[Permission], set[Permission]]:
    """What the rendered ClusterRole grants, and what the Roles grant in `namespace` (the only one here)."""
    def permissions(roles: list[dict[str, Any]]) -> set[Permission]:
        return {(verb, group, resource) for role in roles for rule in role["rules"]
                for verb in rule["verbs"] for group in rule["apiGroups"] for resource in rule["resources"]}
    assert {r["metadata"]["namespace"] for r in find(documents, "Role")} == {namespace}
    return permissions(find(documents, "ClusterRole")), permissions(find(documents, "Role"))


@pytest.fixture
def release_namespace(objects: Objects) -> str:
    namespace = unique("chart")
    objects.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    return namespace


def container_command(documents: list[dict[str, Any]], namespace: str, kubeconfig: Path) -> list[str]:
    """The Deployment's container as a process: its arguments after the image's entrypoint (`binding-scheduler`),
    with the Downward API variables the kubelet would expand, and the token the pod would mount given as a
    kubeconfig (in-cluster credentials need a pod)."""
    container = one(documents, "Deployment")["spec"]["template"]["spec"]["containers"][0]
    args = [arg.replace("$(POD_NAMESPACE)", namespace) for arg in container["args"]]
    return [str(BINDING_SCHEDULER), *args, f"--kubeconfig={kubeconfig}"]


@pytest.fixture
def process() -> Iterator[list[subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []
    yield started
    for proc in started:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_schedules_with_exactly_charts_rbac(
    control_plane: ControlPlane, objects: Objects, release_namespace: str, scheduler_name: str,
    journal: Journal, tmp_path: Path, process: list[subprocess.Popen[str]],
) -> None:
    """Installed in-cluster with the configuration object (the rendering with the most permissions), the
    scheduler does everything its roles grant: lease, configuration and its Valid condition, estimator
    Service discovery, a ResourceBinding and a ClusterResourceBinding each decided with a 409 on its status
    write (the re-read); it is refused nothing."""
    health = free_port()
    documents = render({
        "karmadaAPI.mode": "inCluster",
        "config": {"schedulerName": scheduler_name,
                   "leaderElection": {"leaseName": scheduler_name, "leaseNamespace": release_namespace},
                   "metrics": {"port": 0, "healthPort": health},
                   "estimator": {"enabled": True, "timeout": "1s", "service": {"namespace": release_namespace}}},
    }, release="bs", namespace=release_namespace)
    objects.create(*documents)
    account = one(documents, "ServiceAccount")["metadata"]["name"]
    kubeconfig = service_account_kubeconfig(control_plane, release_namespace, account, tmp_path / "pod.kubeconfig")
    member, crb_name = unique("member"), unique("chart-crb")
    objects.create(cluster_doc(member))
    placement = {"clusterAffinity": {"clusterNames": [member]}}

    with admission_faults(control_plane, release_namespace) as faults:
        faults.add(Fault(resource="resourcebindings", name="web", subresource="status", deny_code=409))
        faults.add(Fault(resource="clusterresourcebindings", name=crb_name, subresource="status", deny_code=409))
        crb = crb_doc(crb_name, placement=placement)
        crb["spec"]["schedulerName"] = scheduler_name
        objects.create(binding_doc("web", namespace=release_namespace, replicas=2, scheduler_name=scheduler_name,
                                   placement=placement), crb)
        scheduler = subprocess.Popen(container_command(documents, release_namespace, kubeconfig),
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        process.append(scheduler)
        body = wait_scheduled(objects.kube, "ResourceBinding", "web", release_namespace)
        wait_scheduled(objects.kube, "ClusterResourceBinding", crb_name)
        decide_again_alike(objects.kube, "ResourceBinding", "web", release_namespace)
        decide_again_alike(objects.kube, "ClusterResourceBinding", crb_name)
        wait_until(lambda: probe(health, "/readyz") == 200, what="the readiness probe to pass")
        scheduler.send_signal(signal.SIGTERM)
        output, _ = scheduler.communicate(timeout=30)
    assert scheduler.returncode == 0, output
    assert body["spec"]["clusters"] == [{"name": member, "replicas": 2}]
    configuration = objects.kube.get("SchedulerConfiguration", "bs-binding-scheduler", release_namespace)
    assert configuration is not None
    assert [c["reason"] for c in configuration["status"]["conditions"]] == ["Valid"]

    user = f"system:serviceaccount:{release_namespace}:{account}"
    mine: list[AuditEntry] = [e for e in journal.entries() if e.user == user]
    assert [str(e) for e in mine if e.code == 403] == []
    cluster_wide, in_namespace = granted(documents, release_namespace)
    used_here = {e.permission for e in mine if e.resource and e.namespace == release_namespace}
    used_elsewhere = {e.permission for e in mine if e.resource and e.namespace != release_namespace}
    assert used_here | used_elsewhere <= cluster_wide | in_namespace, "used but not granted"
    assert cluster_wide <= used_here | used_elsewhere, "granted cluster-wide but never used"
    assert in_namespace <= used_here, "granted in the release namespace but never used there"


def probe(port: int, path: str) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=2) as answer:
            return int(answer.status)
    except OSError:
        return 0

"""The in-cluster tier's smoke, in the default test run: Karmada's control plane with a host cluster that is a
real one (a node run by a kubelet, containerd and runc, CNI bridge networking, kube-proxy), binding-scheduler
installed in it by the chart from the image `dev.py image` builds, beside each of Karmada's install layouts; a
propagated Deployment; the original report's scenario as a `kubectl rollout restart`, judged by karmada-apiserver's
audit log. The whole scenario is `python3 dev.py karmada rollout` (docs/karmada-e2e.md)."""

from __future__ import annotations

import ipaddress
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.karmada import incluster, node, rollout
from tests.karmada.plane import KARMADA_SYSTEM, KarmadaError, KarmadaPlane, Processes, start, stop, wait_for
from tests.karmada.restart import POLICIES, deployment, policy
from tests.realcluster import audit
from tests.realcluster.controlplane import go_available

pytestmark = pytest.mark.timeout(900)


@pytest.fixture(scope="module")
def plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KarmadaPlane]:
    if not go_available():
        pytest.skip("in-cluster tier: Go is not installed, so Kubernetes and Karmada cannot be built")
    if reason := node.missing():
        pytest.skip(f"in-cluster tier: {node.REQUIREMENT}; this machine: {reason}")
    state = tmp_path_factory.mktemp("incluster") / "state"
    try:
        started = start(state, scheduler="ours", tie_to_parent=True, in_cluster=True)
    except KarmadaError as error:
        pytest.fail(f"the in-cluster plane did not start: {error}", pytrace=False)
    try:
        yield started
    finally:
        stop(state)
        assert node.GATEWAY not in _addresses(), "the node's bridge outlived the plane"


def _addresses() -> str:
    return subprocess.run(["ip", "-4", "addr"], capture_output=True, text=True, check=False).stdout


def _scheduler_pods(plane: KarmadaPlane) -> list[dict[str, object]]:
    client = incluster.host_client(plane)
    answer = client.ok("GET", f"/api/v1/namespaces/{KARMADA_SYSTEM}/pods?labelSelector={incluster.SELECTOR}")
    return list(answer["items"])


def _propagate(plane: KarmadaPlane, clusters: list[str]) -> tuple[str, list[dict[str, object]]]:
    """A Deployment with its PropagationPolicy in a namespace of its own; its binding's spec.clusters once set."""
    client = plane.karmada.client()
    namespace = f"smoke-{uuid.uuid4().hex[:6]}"
    client.ok("POST", "/api/v1/namespaces", {"metadata": {"name": namespace}})
    client.ok("POST", f"/apis/apps/v1/namespaces/{namespace}/deployments", deployment(namespace, "web", 4))
    client.ok("POST", POLICIES.format(namespace=namespace), policy(namespace, "web", clusters))
    path = f"/apis/work.karmada.io/v1alpha2/namespaces/{namespace}/resourcebindings/web-deployment"
    placed = wait_for(lambda: _clusters(client.request("GET", path)), "the binding scheduled",
                      Processes.of(plane.state), timeout=60)
    return namespace, placed


def _clusters(answer: tuple[int, dict[str, Any]]) -> list[dict[str, object]] | None:
    status, body = answer
    return (body["spec"].get("clusters") or None) if status == 200 else None


def _written_by_a_pod(plane: KarmadaPlane, namespace: str) -> set[str]:
    pods = ipaddress.ip_network(node.POD_CIDR)
    return {entry.source for entry in audit.read(plane.audit_log)
            if entry.is_write and entry.resource == "resourcebindings" and entry.namespace == namespace
            and not entry.subresource and entry.source and ipaddress.ip_address(entry.source) in pods}


def test_the_charts_two_pods_run_ready_from_the_image_built_here(plane: KarmadaPlane) -> None:
    from scripts import image

    pods = _scheduler_pods(plane)
    assert len(pods) == 2
    for pod in pods:
        status = pod["status"]
        assert isinstance(status, dict)
        assert status["phase"] == "Running"
        assert [c["image"] for c in status["containerStatuses"]] == [f"docker.io/library/binding-scheduler:"
                                                                    f"{image.version()}"]
        assert all(c["ready"] for c in status["containerStatuses"])


def test_a_pod_runs_as_uid_10001_with_no_capability_under_seccomp_on_a_read_only_root(plane: KarmadaPlane) -> None:
    pod = _scheduler_pods(plane)[0]
    metadata = pod["metadata"]
    assert isinstance(metadata, dict)
    pid = node.container_pid(plane.state / "node", incluster.host_client(plane), KARMADA_SYSTEM, metadata["name"])
    status = dict(line.split(":\t", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
                  if ":\t" in line)
    assert status["Uid"].split()[:2] == ["10001", "10001"]
    assert status["Gid"].split()[:2] == ["10001", "10001"]
    assert (status["CapEff"].strip(), status["CapBnd"].strip()) == ("0" * 16, "0" * 16)
    assert status["Seccomp"].strip() == "2"  # filter mode: RuntimeDefault
    assert status["NoNewPrivs"].strip() == "1"
    root = next(line.split() for line in Path(f"/proc/{pid}/mountinfo").read_text().splitlines()
                if line.split()[4] == "/")
    assert "ro" in root[5].split(",")


def test_one_pod_leads_and_the_lease_lives_in_karmada_apiservers_karmada_system(plane: KarmadaPlane) -> None:
    names = {pod["metadata"]["name"] for pod in _scheduler_pods(plane)}  # type: ignore[index]
    assert rollout.leader_pod(plane) in names


def test_a_propagated_deployment_reaches_the_members_scheduled_by_a_pod(plane: KarmadaPlane) -> None:
    namespace, placed = _propagate(plane, ["member1", "member2"])
    assert sorted(c["name"] for c in placed) == ["member1", "member2"]  # type: ignore[index]
    ips = {pod["status"]["podIP"] for pod in _scheduler_pods(plane)}  # type: ignore[index]
    assert _written_by_a_pod(plane, namespace) <= ips and _written_by_a_pod(plane, namespace)
    for member in ("member1", "member2"):
        client = next(m for m in plane.members if m.name == member).client()
        wait_for(lambda c=client: c.request("GET", f"/apis/apps/v1/namespaces/{namespace}/deployments/web")[0] == 200,
                 f"the Deployment on {member}", Processes.of(plane.state), timeout=60)


def test_metrics_are_reachable_from_another_pod_through_the_service(plane: KarmadaPlane) -> None:
    """A pod of the same image fetches /metrics at the Service's ClusterIP (kube-proxy), from the variables the
    kubelet gives every container."""
    from scripts import image

    script = ("import os, urllib.request; host = os.environ['BINDING_SCHEDULER_METRICS_SERVICE_HOST']; "
              "port = os.environ['BINDING_SCHEDULER_METRICS_SERVICE_PORT']; "
              "print(urllib.request.urlopen(f'http://{host}:{port}/metrics', timeout=10).read().decode())")
    name = f"scrape-{uuid.uuid4().hex[:6]}"
    plane.kubectl("-n", KARMADA_SYSTEM, "run", name, f"--image=binding-scheduler:{image.version()}",
                  "--image-pull-policy=Never", "--restart=Never", "--command", "--", "python3", "-c", script,
                  context="karmada-host")
    client = incluster.host_client(plane)
    phase = wait_for(lambda: client.ok("GET", f"/api/v1/namespaces/{KARMADA_SYSTEM}/pods/{name}")["status"].get(
        "phase") in ("Succeeded", "Failed") and client.ok(
        "GET", f"/api/v1/namespaces/{KARMADA_SYSTEM}/pods/{name}")["status"]["phase"],
        "the scraping pod finished", Processes.of(plane.state), timeout=60)
    logs = plane.kubectl("-n", KARMADA_SYSTEM, "logs", name, context="karmada-host").stdout
    assert phase == "Succeeded", logs
    assert "# TYPE binding_scheduler_leader gauge" in logs


def test_a_rollout_restart_with_a_pass_held_in_a_slow_estimator_leaves_no_late_or_stale_write(
    plane: KarmadaPlane,
) -> None:
    with rollout.estimator_relay(plane, delay=8.0) as link:
        report = rollout.run(plane, link, trigger="restart", bindings=3)
    assert report.held_calls > 0, "no call of the old leader was held in the slow estimator"
    leader = report.leader
    assert leader is not None and leader.exit_code == 0, report.to_json()
    assert (report.writes_after_exit, report.stale_bindings) == ([], []), report.to_json()
    assert any("shutdown complete" in line for line in leader.last_lines), report.to_json()


@pytest.mark.parametrize("layout", ["karmadactl-init", "helm", "operator", "local-up"])
def test_the_chart_schedules_beside_each_of_karmadas_install_layouts(plane: KarmadaPlane, layout: str) -> None:
    """Only that layout's Secrets in karmada-system, the chart with `karmadaAPI.layout` set to it: its pods
    start, and a binding is scheduled by them (the estimators asked over TLS with that layout's certificate)."""
    incluster.install(plane, layout)
    namespace, placed = _propagate(plane, ["member1", "member3"])
    assert sorted(c["name"] for c in placed) == ["member1", "member3"]  # type: ignore[index]
    assert _written_by_a_pod(plane, namespace)
    failures = [line for pod in _scheduler_pods(plane) for line in _metrics(pod["status"]["podIP"])  # type: ignore[index]
                if line.startswith("binding_scheduler_estimator_failures_total{") and not line.endswith(" 0.0")]
    assert failures == []


def _metrics(address: str) -> list[str]:
    import urllib.request

    with urllib.request.urlopen(f"http://{address}:8080/metrics", timeout=10) as answer:
        return answer.read().decode().splitlines()

"""The Karmada tier's smoke, in the default test run: a whole Karmada control plane (karmada-apiserver,
aggregated API server, webhook, controller-manager; three kwok members joined by karmadactl, each with its
estimator over TLS) with binding-scheduler as its scheduler, and a handful of Karmada's own e2e specs, run
unchanged from Karmada's module. The full run is `python3 dev.py karmada e2e` (docs/karmada-e2e.md).

Where the machine can run a node (root, containerd, runc: testsupport/karmada/node.py), the plane's host cluster is a
real one first: binding-scheduler installed in it by the chart from the image `dev.py image` builds, beside each
of Karmada's install layouts, a propagated Deployment, and the original report's scenario as a `kubectl rollout
restart` judged by the audit log (the whole scenario is `python3 dev.py karmada rollout`). Then the chart is
uninstalled and the rest runs with binding-scheduler as a process, as on a plane without a node."""

from __future__ import annotations

import ipaddress
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from testsupport.karmada import churn, incluster, node, preemption, restart, rollout, suite
from testsupport.karmada.plane import (
    KARMADA_SYSTEM,
    KarmadaError,
    KarmadaPlane,
    Processes,
    start,
    start_scheduler,
    stop,
    wait_for,
)
from testsupport.karmada.restart import POLICIES, deployment, policy
from testsupport.realcluster import audit
from testsupport.realcluster.controlplane import go_available

pytestmark = pytest.mark.timeout(900)

SMOKE = {
    "scheduling_test.go": ("[ReplicaScheduling] ReplicaSchedulingStrategy testing ReplicaSchedulingType is "
                           "Duplicated. replicas duplicated testing",
                           "[ReplicaScheduling] ReplicaSchedulingStrategy testing ReplicaSchedulingType is "
                           "Divided, ReplicaDivisionPreference is Weighted, WeightPreference is nil. replicas "
                           "divided and weighted testing"),
    "clusteraffinities_test.go": ("[ClusterAffinities] propagation testing when [PropagationPolicy] replica "
                                  "scheduling type is Duplicated schedule with multi clusterAffinity propagate "
                                  "deployment and then update the cluster label",),
    "tainttoleration_test.go": ("propagation with taint and toleration testing Deployment propagation testing "
                                "deployment with cluster tolerations testing",),
    "estimator_test.go": ("Quota plugin Testing Deployment should be successfully propagated to target cluster "
                          "within resource quota limits",),
}
"""Karmada's own specs the smoke runs, by file: a Duplicated and a Divided propagation, a cluster-affinity change
that reschedules, taints and tolerations, estimator-driven division."""


@pytest.fixture(scope="module")
def plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KarmadaPlane]:
    if not go_available():
        pytest.skip("Karmada tier: Go is not installed, so Karmada and its members cannot be built")
    state = tmp_path_factory.mktemp("karmada") / "state"
    try:
        started = start(state, scheduler="ours", tie_to_parent=True, in_cluster=node.readied() is None)
    except KarmadaError as error:
        pytest.fail(f"the Karmada control plane did not start: {error}", pytrace=False)
    try:
        yield started
    finally:
        stop(state)
        assert node.leftovers(state / "node") == [], "the node outlived its plane"


@pytest.fixture(scope="module")
def in_cluster(plane: KarmadaPlane) -> KarmadaPlane:
    """The plane while its scheduler runs in-cluster (the tests using it come first in this file)."""
    if not plane.in_cluster:
        pytest.skip(f"in-cluster tier: {node.REQUIREMENT}; this machine: {node.missing()}")
    return plane


@pytest.fixture(scope="module")
def scheduling(plane: KarmadaPlane) -> KarmadaPlane:
    """The plane with binding-scheduler as a process (the chart uninstalled first on an in-cluster plane)."""
    if plane.in_cluster:
        incluster.uninstall(plane)
        start_scheduler(plane, Processes.of(plane.state))
    return plane


def _scheduler_pods(plane: KarmadaPlane) -> list[dict[str, object]]:
    client = incluster.host_client(plane)
    answer = client.ok("GET", f"/api/v1/namespaces/{KARMADA_SYSTEM}/pods?labelSelector={incluster.SELECTOR}")
    return list(answer["items"])


@pytest.fixture
def namespace(plane: KarmadaPlane) -> Iterator[str]:
    """A namespace of the test's own in karmada-apiserver, deleted after it (with what it propagated, so that
    later tests find the members as empty as before)."""
    client = plane.karmada.client()
    name = f"smoke-{uuid.uuid4().hex[:6]}"
    client.ok("POST", "/api/v1/namespaces", {"metadata": {"name": name}})
    yield name
    client.request("DELETE", f"/api/v1/namespaces/{name}")


def _propagate(plane: KarmadaPlane, namespace: str, clusters: list[str]) -> list[dict[str, object]]:
    """A Deployment with its PropagationPolicy in `namespace`; its binding's spec.clusters once set."""
    client = plane.karmada.client()
    client.ok("POST", f"/apis/apps/v1/namespaces/{namespace}/deployments", deployment(namespace, "web", 4))
    client.ok("POST", POLICIES.format(namespace=namespace), policy(namespace, "web", clusters))
    path = f"/apis/work.karmada.io/v1alpha2/namespaces/{namespace}/resourcebindings/web-deployment"
    placed: list[dict[str, object]] = wait_for(lambda: _clusters(client.request("GET", path)),
                                               "the binding scheduled", Processes.of(plane.state), timeout=60)
    return placed


def _clusters(answer: tuple[int, dict[str, Any]]) -> list[dict[str, object]] | None:
    status, body = answer
    return (body["spec"].get("clusters") or None) if status == 200 else None


def _finished(phase: str | None) -> str | None:
    return phase if phase in ("Succeeded", "Failed") else None


def _written_by_a_pod(plane: KarmadaPlane, namespace: str) -> set[str]:
    pods = ipaddress.ip_network(node.POD_CIDR)
    return {entry.source for entry in audit.read(plane.audit_log)
            if entry.is_write and entry.resource == "resourcebindings" and entry.namespace == namespace
            and not entry.subresource and entry.source and ipaddress.ip_address(entry.source) in pods}


def test_charts_two_pods_run_ready_from_image_built_here(in_cluster: KarmadaPlane) -> None:
    from scripts import image

    pods = _scheduler_pods(in_cluster)
    assert len(pods) == 2
    for pod in pods:
        status = pod["status"]
        assert isinstance(status, dict)
        assert status["phase"] == "Running"
        assert [c["image"] for c in status["containerStatuses"]] == [f"docker.io/library/binding-scheduler:"
                                                                    f"{image.version()}"]
        assert all(c["ready"] for c in status["containerStatuses"])


def test_pod_runs_as_10001_unprivileged_read_only(in_cluster: KarmadaPlane) -> None:
    pod = _scheduler_pods(in_cluster)[0]
    metadata = pod["metadata"]
    assert isinstance(metadata, dict)
    pid = node.container_pid(in_cluster.state / "node", incluster.host_client(in_cluster), KARMADA_SYSTEM,
                             metadata["name"])
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


def test_charts_memory_limit_is_pods_cgroup_limit(in_cluster: KarmadaPlane) -> None:
    import yaml

    limit = yaml.safe_load((incluster.CHART / "values.yaml").read_text())["resources"]["limits"]["memory"]
    assert limit.endswith("Mi")
    pod = _scheduler_pods(in_cluster)[0]
    pid = node.container_pid(in_cluster.state / "node", incluster.host_client(in_cluster), KARMADA_SYSTEM,
                             pod["metadata"]["name"])  # type: ignore[index]
    memory = next(line.split(":", 2)[2] for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines()
                  if line.split(":", 2)[1] == "memory")
    enforced = int(Path(f"/sys/fs/cgroup/memory{memory}/memory.limit_in_bytes").read_text())
    assert enforced == int(limit.removesuffix("Mi")) * 2**20


def test_pdb_allows_one_disruption(in_cluster: KarmadaPlane) -> None:
    client = incluster.host_client(in_cluster)
    budgets = client.ok("GET", f"/apis/policy/v1/namespaces/{KARMADA_SYSTEM}/poddisruptionbudgets")["items"]
    assert [(b["status"].get("expectedPods"), b["status"].get("currentHealthy"), b["status"].get(
        "disruptionsAllowed")) for b in budgets] == [(2, 2, 1)]


def test_one_pod_leads_lease_in_karmada_system(in_cluster: KarmadaPlane) -> None:
    names = {pod["metadata"]["name"] for pod in _scheduler_pods(in_cluster)}  # type: ignore[index]
    assert rollout.leader_pod(in_cluster) in names


def test_propagated_deployment_reaches_members_scheduled_by_pod(in_cluster: KarmadaPlane,
                                                                      namespace: str) -> None:
    placed = _propagate(in_cluster, namespace, ["member1", "member2"])
    assert sorted(c["name"] for c in placed) == ["member1", "member2"]  # type: ignore[index]
    ips = {pod["status"]["podIP"] for pod in _scheduler_pods(in_cluster)}  # type: ignore[index]
    assert _written_by_a_pod(in_cluster, namespace) <= ips and _written_by_a_pod(in_cluster, namespace)
    for member in ("member1", "member2"):
        client = next(m for m in in_cluster.members if m.name == member).client()
        wait_for(lambda c=client: c.request("GET", f"/apis/apps/v1/namespaces/{namespace}/deployments/web")[0] == 200,
                 f"the Deployment on {member}", Processes.of(in_cluster.state), timeout=60)


def test_metrics_are_reachable_from_another_pod_through_service(in_cluster: KarmadaPlane) -> None:
    """A pod of the same image fetches /metrics at the Service's ClusterIP (kube-proxy), from the variables the
    kubelet gives every container."""
    from scripts import image

    script = ("import os, urllib.request; host = os.environ['BINDING_SCHEDULER_METRICS_SERVICE_HOST']; "
              "port = os.environ['BINDING_SCHEDULER_METRICS_SERVICE_PORT']; "
              "print(urllib.request.urlopen(f'http://{host}:{port}/metrics', timeout=10).read().decode())")
    name = f"scrape-{uuid.uuid4().hex[:6]}"
    in_cluster.kubectl("-n", KARMADA_SYSTEM, "run", name, f"--image=binding-scheduler:{image.version()}",
                       "--image-pull-policy=Never", "--restart=Never", "--command", "--", "python3", "-c", script,
                       context="karmada-host")
    client = incluster.host_client(in_cluster)
    path = f"/api/v1/namespaces/{KARMADA_SYSTEM}/pods/{name}"
    phase = wait_for(lambda: _finished(client.ok("GET", path)["status"].get("phase")), "the scraping pod finished",
                     Processes.of(in_cluster.state), timeout=60)
    logs = in_cluster.kubectl("-n", KARMADA_SYSTEM, "logs", name, context="karmada-host").stdout
    assert phase == "Succeeded", logs
    assert "# TYPE binding_scheduler_leader gauge" in logs


def test_rollout_with_held_pass_leaves_no_late_write(
    in_cluster: KarmadaPlane,
) -> None:
    with rollout.estimator_relay(in_cluster, delay=8.0) as link:
        report = rollout.run(in_cluster, link, trigger="restart", bindings=3)
    assert report.held_calls > 0, "no call of the old leader was held in the slow estimator"
    leader = report.leader
    assert leader is not None and leader.exit_code == 0, report.to_json()
    assert (report.writes_after_exit, report.stale_bindings) == ([], []), report.to_json()
    assert any("shutdown complete" in line for line in leader.last_lines), report.to_json()


@pytest.mark.parametrize("layout", ["karmadactl-init", "helm", "operator", "local-up"])
def test_chart_schedules_beside_each_of_karmadas_install_layouts(in_cluster: KarmadaPlane, layout: str,
                                                                    namespace: str) -> None:
    """Only that layout's Secrets in karmada-system, the chart with `karmadaAPI.layout` set to it: its pods
    start, and a binding is scheduled by them (the estimators asked over TLS with that layout's certificate)."""
    incluster.install(in_cluster, layout)
    placed = _propagate(in_cluster, namespace, ["member1", "member3"])
    assert sorted(c["name"] for c in placed) == ["member1", "member3"]  # type: ignore[index]
    assert _written_by_a_pod(in_cluster, namespace)
    failures = [line for pod in _scheduler_pods(in_cluster) for line in _metrics(pod["status"]["podIP"])  # type: ignore[index]
                if line.startswith("binding_scheduler_estimator_failures_total{") and not line.endswith(" 0.0")]
    assert failures == []


def _metrics(address: str) -> list[str]:
    import urllib.request

    with urllib.request.urlopen(f"http://{address}:8080/metrics", timeout=10) as answer:
        return answer.read().decode().splitlines()


def test_every_member_is_ready_cluster(plane: KarmadaPlane) -> None:
    answer = plane.karmada.client().ok("GET", "/apis/cluster.karmada.io/v1alpha1/clusters")
    ready = sorted(item["metadata"]["name"] for item in answer["items"]
                   if {"type": "Ready", "status": "True"}.items()
                   <= next(c for c in item["status"]["conditions"] if c["type"] == "Ready").items())
    assert ready == ["member1", "member2", "member3"]


def test_karmadas_own_smoke_specs_pass_with_binding_scheduler(scheduling: KarmadaPlane, tmp_path: Path) -> None:
    wanted = [name for names in SMOKE.values() for name in names]
    found = suite.run(scheduling, tmp_path / "report.json", files=tuple(SMOKE),
                      focus="|".join(suite.exact(name) for name in wanted), poll_timeout="120s")
    log = (tmp_path / "report.log").read_text(errors="replace")[-6000:] if (tmp_path / "report.log").exists() else ""
    assert {r.name: r.state for r in found if r.state != "skipped"} == dict.fromkeys(wanted, "passed"), log


def test_preemptor_lands_after_graceful_eviction(
    scheduling: KarmadaPlane,
) -> None:
    """PR #7832's e2e flow on real Karmada (testsupport/karmada/preemption.py): of two lower-priority bindings filling
    member1, binding-scheduler preempts the newer alone (a fenced `BindingPreempted` task) and writes the
    preemptor's `Preempting`; Karmada's graceful-eviction controller ends the task, its binding controller takes
    the victim's Work off member1, and the preemptor lands there beside the spared one."""
    report = preemption.run(scheduling, Processes.of(scheduling.state))
    assert [{k: t[k] for k in ("fromCluster", "reason", "producer", "purgeMode")} for t in report.eviction_tasks] == [
        {"fromCluster": "member1", "reason": "BindingPreempted", "producer": "Scheduler", "purgeMode": "Gracefully"}]
    assert report.eviction_fenced
    assert report.preemptor_reasons[-1] == "Success" and "Preempting" in report.preemptor_reasons, report
    assert report.preemptor_clusters == [{"name": "member1", "replicas": 2}]
    assert report.preemptor_ready_on_member == 2
    assert (report.victim_clusters, report.victim_tasks_left, report.victim_on_member) == ([], [], False)
    assert report.tasks_ended_by == ["karmada-controller-manager"]
    assert any("high-deployment" in message for message in report.victim_events["Preempted"]), report
    assert report.spared_clusters == [{"name": "member1", "replicas": 2}]
    assert "Preempted" not in report.spared_events


def test_restart_held_in_estimator_leaves_no_late_write(scheduling: KarmadaPlane) -> None:
    """The original report's scenario on real Karmada (testsupport/karmada/restart.py), small: the old instance's
    passes wait in member1's slow estimator when it is stopped; it writes nothing after it exits, and every
    binding ends on the newest decision, written by the new instance. On an in-cluster plane the rollout test
    above pins the same promise on real pods, and this one is not run again."""
    if scheduling.in_cluster:
        pytest.skip("covered on real pods by the in-cluster rollout test above")
    report = restart.run(scheduling, Processes.of(scheduling.state), bindings=3, delay=8.0)
    assert (report.old_exit_code, report.writes_after_exit, report.stale_bindings) == (0, [], []), report.to_json()
    assert report.last_writer == {"old": 0, "new": 3}
    assert report.held_calls > 0, "no call of the old instance was held in the slow estimator"


def test_restarts_under_churn_leave_no_late_write(
    scheduling: KarmadaPlane,
) -> None:
    """The churn scenario (testsupport/karmada/churn.py), small: two restarts under Karmada's Deployment flags (one
    SIGTERM, one SIGKILL) while policies change, then two scale-ups after the last takeover."""
    report = churn.run(scheduling, Processes.of(scheduling.state), workloads=12, restarts=2, kill_every=2, scale_ups=2)
    assert report.writes_after_exit == [], report.to_json()
    assert report.not_on_newest == [], report.to_json()
    assert (report.oracle_agrees, report.oracle_differs) == (12, []), report.to_json()
    assert [(s.signal, s.exit_code) for s in report.stops] == [("TERM", 0), ("KILL", -1)], report.to_json()
    assert [s.reason for s in report.scale_ups] == ["Success", "Success"], report.to_json()

"""The Karmada tier's smoke, in the default test run: a whole Karmada control plane (karmada-apiserver,
aggregated API server, webhook, controller-manager; three kwok members joined by karmadactl, each with its
estimator over TLS) with binding-scheduler as its scheduler, and a handful of Karmada's own e2e specs, run
unchanged from Karmada's module. The full run is `python3 dev.py karmada e2e` (docs/karmada-e2e.md)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.karmada import churn, preemption, restart, suite
from tests.karmada.plane import KarmadaError, KarmadaPlane, Processes, start, stop
from tests.realcluster.controlplane import go_available

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
        started = start(state, scheduler="ours", tie_to_parent=True)
    except KarmadaError as error:
        pytest.fail(f"the Karmada control plane did not start: {error}", pytrace=False)
    try:
        yield started
    finally:
        stop(state)


def test_every_member_is_a_ready_cluster_of_karmadas_aggregated_api(plane: KarmadaPlane) -> None:
    answer = plane.karmada.client().ok("GET", "/apis/cluster.karmada.io/v1alpha1/clusters")
    ready = sorted(item["metadata"]["name"] for item in answer["items"]
                   if {"type": "Ready", "status": "True"}.items()
                   <= next(c for c in item["status"]["conditions"] if c["type"] == "Ready").items())
    assert ready == ["member1", "member2", "member3"]


def test_karmadas_own_smoke_specs_pass_with_binding_scheduler(plane: KarmadaPlane, tmp_path: Path) -> None:
    wanted = [name for names in SMOKE.values() for name in names]
    found = suite.run(plane, tmp_path / "report.json", files=tuple(SMOKE),
                      focus="|".join(suite.exact(name) for name in wanted), poll_timeout="120s")
    log = (tmp_path / "report.log").read_text(errors="replace")[-6000:] if (tmp_path / "report.log").exists() else ""
    assert {r.name: r.state for r in found if r.state != "skipped"} == dict.fromkeys(wanted, "passed"), log


def test_a_preemptor_lands_once_karmadas_graceful_eviction_has_taken_its_victim_off_the_member(
    plane: KarmadaPlane,
) -> None:
    """PR #7832's e2e flow on real Karmada (tests/karmada/preemption.py): of two lower-priority bindings filling
    member1, binding-scheduler preempts the newer alone (a fenced `BindingPreempted` task) and writes the
    preemptor's `Preempting`; Karmada's graceful-eviction controller ends the task, its binding controller takes
    the victim's Work off member1, and the preemptor lands there beside the spared one."""
    report = preemption.run(plane, Processes.of(plane.state))
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


def test_a_rolling_restart_held_in_a_slow_estimator_leaves_no_late_or_stale_write(plane: KarmadaPlane) -> None:
    """The original report's scenario on real Karmada (tests/karmada/restart.py), small: the old instance's
    passes wait in member1's slow estimator when it is stopped; it writes nothing after it exits, and every
    binding ends on the newest decision, written by the new instance."""
    report = restart.run(plane, Processes.of(plane.state), bindings=3, delay=8.0)
    assert (report.old_exit_code, report.writes_after_exit, report.stale_bindings) == (0, [], []), report.to_json()
    assert report.last_writer == {"old": 0, "new": 3}
    assert report.held_calls > 0, "no call of the old instance was held in the slow estimator"


def test_rolling_restarts_under_policy_churn_leave_no_late_write_and_scale_ups_are_placed_at_once(
    plane: KarmadaPlane,
) -> None:
    """The churn scenario (tests/karmada/churn.py), small: two restarts under Karmada's Deployment flags (one
    SIGTERM, one SIGKILL) while policies change, then two scale-ups after the last takeover."""
    report = churn.run(plane, Processes.of(plane.state), workloads=12, restarts=2, kill_every=2, scale_ups=2)
    assert report.writes_after_exit == [], report.to_json()
    assert report.not_on_newest == [], report.to_json()
    assert (report.oracle_agrees, report.oracle_differs) == (12, []), report.to_json()
    assert [(s.signal, s.exit_code) for s in report.stops] == [("TERM", 0), ("KILL", -1)], report.to_json()
    assert [s.reason for s in report.scale_ups] == ["Success", "Success"], report.to_json()

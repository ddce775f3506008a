"""Leader election and fencing: a lost lease stops every write at once, a rolling restart hands over cleanly,
and a stale decision loses to a newer one whoever sends it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from binding_scheduler.algorithm.plugins import AttemptContext, EstimatePlugin
from binding_scheduler.devcluster import DevCluster
from binding_scheduler.model import Cluster
from tests.shutdown.helpers import HeldPasses, binding_writes, lease_held_elsewhere, writes_after
from testsupport.operator.harness import (
    OperatorThread,
    apply,
    binding_doc,
    cluster_doc,
    config_spec,
    get,
    scheduled,
    wait_until,
    write_config,
)

DUPLICATED = {"replicaScheduling": {"replicaSchedulingType": "Duplicated"}}
LEASE = r"/leases/karmada-scheduler$"


def test_lease_lost_mid_pass_stops_writes(api: DevCluster, config_file: Path) -> None:
    apply(api, cluster_doc("m1"), binding_doc("web"))
    held = HeldPasses()
    operator = OperatorThread(api, config_file, plugins=[held]).start()
    held.wait_entered()

    api.faults.add(method="PUT", path=LEASE, status=500)
    wait_until(lambda: not operator.alive, timeout=30, what="the operator to exit after losing the lease")

    assert operator.exit_code == 1
    service = operator.app.service
    assert service is not None and service.lost_at is not None
    assert held.cancelled == ["default/web"]
    assert writes_after(api, service.lost_at) == []
    assert binding_writes(api, "web") == []


def test_lease_lost_in_spec_write_lands_nothing(api: DevCluster, config_file: Path) -> None:
    apply(api, cluster_doc("m1"), binding_doc("web"))
    write = api.faults.add(method="PATCH", path=r"/resourcebindings/web$", hang=True, times=1)
    operator = OperatorThread(api, config_file).start()
    wait_until(lambda: write.hits, what="the spec write to reach the emulator")

    api.faults.add(method="PUT", path=LEASE, status=500)
    wait_until(lambda: not operator.alive, timeout=30, what="the operator to exit after losing the lease")
    write.release()

    assert operator.exit_code == 1
    service = operator.app.service
    assert service is not None and service.lost_at is not None
    assert writes_after(api, service.lost_at) == []
    body = get(api, "resourcebindings", "web", "default")
    assert body is not None and "clusters" not in body["spec"]


def test_rolling_restart_hands_over(
    api: DevCluster, config_file: Path
) -> None:
    apply(api, cluster_doc("m1"), *(binding_doc(f"web-{i}") for i in range(4)))
    held = HeldPasses()
    old = OperatorThread(api, config_file, identity="old", plugins=[held]).start()
    held.wait_entered()
    new = OperatorThread(api, config_file, identity="new").start(wait_leading=False)

    assert old.stop() == 0
    old_finished = old.app.service.finished_at if old.app.service else None
    assert old_finished is not None
    wait_until(lambda: all(scheduled(api, f"web-{i}") for i in range(4)), what="the successor to schedule all")
    assert new.stop() == 0

    lease = get(api, "leases", "karmada-scheduler", "karmada-system")
    assert lease is not None
    assert lease["spec"]["holderIdentity"] == ""
    assert lease["spec"]["leaseTransitions"] >= 1
    assert held.cancelled == ["default/web-0"]
    for i in range(4):
        body = scheduled(api, f"web-{i}")
        assert body is not None and body["spec"]["clusters"] == [{"name": "m1", "replicas": 1}]


class StalePass(EstimatePlugin):
    """The first pass decides from the snapshot it started with, and is held before its commit point until
    released: an old instance whose write arrives late (the snapshot of a pass never changes)."""

    name = "TestStalePass"

    def __init__(self) -> None:
        self.held = HeldPasses()

    async def estimate(self, ctx: AttemptContext, clusters: Sequence[Cluster]) -> Mapping[str, int]:
        if not self.held.entered:
            await self.held.hold(ctx.binding.key)
        return {}


def test_late_stale_decision_refused_newer_stays(
    api: DevCluster, tmp_path: Path
) -> None:
    apply(api, cluster_doc("m1"), binding_doc("web", replicas=3, placement=DUPLICATED))
    stale = StalePass()
    old_config = write_config(tmp_path / "old.yaml", config_spec(leaderElection={"leaseName": "old-scheduler"}))
    old = OperatorThread(api, old_config, identity="old", plugins=[stale]).start()
    stale.held.wait_entered()

    apply(api, cluster_doc("m2"))
    new_config = write_config(tmp_path / "new.yaml", config_spec(leaderElection={"leaseName": "new-scheduler"}))
    new = OperatorThread(api, new_config, identity="new").start()
    newer = [{"name": "m1", "replicas": 3}, {"name": "m2", "replicas": 3}]
    wait_until(lambda: (scheduled(api, "web") or {}).get("spec", {}).get("clusters") == newer, what="the new decision")
    stale.held.release()
    wait_until(
        lambda: any(e.status == 409 for e in api.journal.filter(method="PATCH", path=r"/resourcebindings/web$")),
        what="the stale write to be refused",
    )
    assert old.stop() == 0
    assert new.stop() == 0

    refused = [e for e in api.journal.filter(method="PATCH", path=r"/resourcebindings/web$") if e.status == 409]
    assert [e.body["spec"]["clusters"] for e in refused] == [[{"name": "m1", "replicas": 3}]]
    body = get(api, "resourcebindings", "web", "default")
    assert body is not None and body["spec"]["clusters"] == newer


def test_standby_instance_talks_to_nothing_but_lease(api: DevCluster, config_file: Path) -> None:
    apply(api, cluster_doc("m1"), binding_doc("web"))
    lease_held_elsewhere(api)
    api.journal.clear()
    standby = OperatorThread(api, config_file, identity="standby").start(wait_leading=False)
    wait_until(lambda: len(api.journal.filter(path=LEASE)) >= 3, what="a few lease polls")

    assert standby.stop() == 0
    lease_path = "/apis/coordination.k8s.io/v1/namespaces/karmada-system/leases/karmada-scheduler"
    preflight = {"/apis/cluster.karmada.io/v1alpha1", "/apis/work.karmada.io/v1alpha2"}  # before the Lease: is
    # this karmada-apiserver? (discovery, which every authenticated user may read)
    requests = api.journal.filter()
    assert {e.path for e in requests} == {lease_path, *preflight}
    assert {e.method for e in requests if e.path in preflight} == {"GET"}
    assert sorted(e.path for e in requests if e.path in preflight) == sorted(preflight)
    assert binding_writes(api, "web") == []


def test_lease_release_that_gets_no_answer_does_not_hold_shutdown(api: DevCluster, config_file: Path) -> None:
    operator = OperatorThread(api, config_file).start()
    api.faults.add(method="PUT", path=LEASE, hang=True)

    assert operator.stop() == 0

    service = operator.app.service
    assert service is not None and service.report is not None
    assert service.report.lease_released is False
    assert writes_after(api, service.finished_at or 0.0) == []

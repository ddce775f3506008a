"""The workload groups index of gate `WorkloadAffinity` (Karmada's pkg/scheduler/indexer.go: addIndexers and
pkg/scheduler/cache/cache.go: AssigningResourceBindingCache): the stored ResourceBindings by group, the assigning copies
of our own spec writes, how intake and a pass feed them, and that nothing runs with the gate off."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import pytest

from binding_scheduler.algorithm.plugins import GroupMember
from binding_scheduler.algorithm.registry import build_plugins
from binding_scheduler.kube.connection import Connection
from binding_scheduler.model import parse_binding, parse_cluster
from binding_scheduler.model.config import FeatureGatesConfig, SchedulerConfig
from binding_scheduler.scheduling.lifecycle.runtime import Scheduler
from binding_scheduler.scheduling.lifecycle.service import SchedulerService
from binding_scheduler.scheduling.observability.metrics import SchedulerMetrics
from binding_scheduler.scheduling.passes.context import PassContext, PassSettings, PassTracker
from binding_scheduler.scheduling.passes.run import PassOutcome, run_pass
from binding_scheduler.scheduling.state.queue import SchedulingQueue
from binding_scheduler.scheduling.state.stores import BindingStore, ClusterStore
from binding_scheduler.scheduling.state.workload_groups import WorkloadGroupIndex, compare_versions
from testsupport.builders import DUPLICATED, binding, cluster, placement


def rb(name: str, *clusters: str, affinity: str = "g", anti: str = "", version: str = "10",
       namespace: str = "default", fully_applied: str | None = None) -> dict[str, Any]:
    """A ResourceBinding body (resource `name`, a Deployment) in the given groups, targeting `clusters`."""
    doc = binding(name, namespace=namespace, clusters=list(clusters) if clusters else None,
                  placement=placement(scheduling=DUPLICATED))
    doc["metadata"]["resourceVersion"] = version
    doc["metadata"]["labels"] = {"propagationpolicy.karmada.io/permanent-id": "p1"}
    doc["spec"]["workloadAffinityGroups"] = {"affinityGroup": affinity, "antiAffinityGroup": anti}
    if fully_applied is not None:
        doc["status"] = {"conditions": [{"type": "FullyApplied", "status": fully_applied, "reason": "r",
                                         "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}
    return doc


def where(index: WorkloadGroupIndex, group: str = "g") -> dict[str, frozenset[str]]:
    return {m.name: m.clusters for m in index.affinity_members(group)}


# --- the index of stored bindings -------------------------------------------------------------------------------


def test_stored_binding_joins_its_groups() -> None:
    index = WorkloadGroupIndex()
    index.stored(rb("a", "m1", affinity="g", anti="x"))
    assert index.affinity_members("g") == [GroupMember("default", "a", "g", "x", frozenset({"m1"}))]
    assert index.anti_affinity_members("x") == [GroupMember("default", "a", "g", "x", frozenset({"m1"}))]


def test_binding_that_changes_group_leaves_old_one() -> None:
    index = WorkloadGroupIndex()
    index.stored(rb("a", "m1", affinity="g"))
    index.stored(rb("a", "m1", affinity="h", version="11"))
    assert (where(index, "g"), where(index, "h")) == ({}, {"a": frozenset({"m1"})})


def test_binding_without_group_is_in_no_index() -> None:
    index = WorkloadGroupIndex()
    index.stored(rb("a", "m1", affinity=""))
    assert len(index) == 0


def test_cluster_resource_bindings_are_never_members() -> None:
    doc = binding("role", cluster_scoped=True, clusters=["m1"])
    doc["spec"]["workloadAffinityGroups"] = {"affinityGroup": "g"}
    index = WorkloadGroupIndex()
    index.stored(doc)
    assert len(index) == 0


def test_index_of_input_bindings_holds_them_as_stored() -> None:
    index = WorkloadGroupIndex.of_bindings([parse_binding(rb("a", "m1")), parse_binding(rb("b", "m2", affinity="h"))])
    assert (where(index, "g"), where(index, "h")) == ({"a": frozenset({"m1"})}, {"b": frozenset({"m2"})})


def test_forgotten_binding_leaves_groups_and_assigning_copies() -> None:
    index = WorkloadGroupIndex()
    index.stored(rb("a", "m1"))
    index.assigned(rb("a", "m2", version="11"))
    index.forget("default/a")
    assert (where(index), index.assigning) == ({}, {})


# --- the assigning copies ---------------------------------------------------------------------------------------


def test_our_written_placement_counts_before_watch_delivers_it() -> None:
    index = WorkloadGroupIndex()
    index.stored(rb("a", version="10"))
    index.assigned(rb("a", "m2", version="11"))
    assert where(index) == {"a": frozenset({"m2"})}


def test_stored_copy_newer_than_assigning_one_is_used() -> None:
    index = WorkloadGroupIndex()
    index.assigned(rb("a", "m2", version="11"))
    index._store("default/a", "12", GroupMember("default", "a", "g", "", frozenset({"m3"})))
    assert where(index) == {"a": frozenset({"m3"})}


def test_newer_watched_version_replaces_assigning_copy() -> None:
    index = WorkloadGroupIndex()
    index.assigned(rb("a", "m2", version="11"))
    index.stored(rb("a", "m3", version="12"))
    assert index.assigning == {"default/a": ("12", GroupMember("default", "a", "g", "", frozenset({"m3"})))}


def test_older_watched_version_leaves_assigning_copy() -> None:
    index = WorkloadGroupIndex()
    index.assigned(rb("a", "m2", version="11"))
    index.stored(rb("a", version="10"))
    assert (index.assigning["default/a"][0], where(index)) == ("11", {"a": frozenset({"m2"})})


def test_fully_applied_true_removes_assigning_copy() -> None:
    index = WorkloadGroupIndex()
    index.assigned(rb("a", "m2", version="11"))
    index.stored(rb("a", "m2", version="12", fully_applied="True"))
    assert index.assigning == {}


def test_fully_applied_false_keeps_assigning_copy() -> None:
    index = WorkloadGroupIndex()
    index.assigned(rb("a", "m2", version="11"))
    index.stored(rb("a", "m2", version="12", fully_applied="False"))
    assert list(index.assigning) == ["default/a"]


def test_fully_applied_on_older_version_keeps_assigning_copy() -> None:
    index = WorkloadGroupIndex()
    index.assigned(rb("a", "m2", version="11"))
    index.stored(rb("a", version="10", fully_applied="True"))
    assert list(index.assigning) == ["default/a"]


def test_written_binding_in_no_group_is_not_kept() -> None:
    index = WorkloadGroupIndex()
    index.assigned(rb("a", "m2", affinity="", version="11"))
    assert index.assigning == {}


def test_incomparable_versions_mark_member() -> None:
    index = WorkloadGroupIndex()
    index.stored(rb("a", "m1", version="abc"))
    index.assigned(rb("a", "m2", version="11"))
    assert [m.comparable for m in index.affinity_members("g")] == [False]


@pytest.mark.parametrize(("a", "b", "order"), [
    ("9", "10", -1), ("10", "9", 1), ("12", "12", 0), ("123", "124", -1), ("", "1", None), ("01", "1", None),
    ("1a", "1", None), ("٣", "3", None),
])
def test_resource_versions_compare_as_kubernetes_compares_them(a: str, b: str, order: int | None) -> None:
    assert compare_versions(a, b) == order


# --- intake and passes ------------------------------------------------------------------------------------------


class Events:
    async def record(self, *_: Any) -> None:
        return None


class ApiServer:
    """Applies merge patches to the bodies it holds, bumping resourceVersion (and generation on spec writes); the
    watch is not told: the store keeps what it had."""

    def __init__(self, *bodies: dict[str, Any]) -> None:
        self.bodies = {b["metadata"]["name"]: copy.deepcopy(b) for b in bodies}
        self.version = 100

    async def patch_merge(self, path: str, patch: Mapping[str, Any], *, answer: bool = True) -> dict[str, Any]:
        parts = path.split("/")
        status = parts[-1] == "status"
        body = self.bodies[parts[-2] if status else parts[-1]]
        self.version += 1
        if status:
            body["status"] = {**body.get("status", {}), **patch["status"]}
        else:
            body["spec"] = {**body["spec"], **patch["spec"]}
            body["metadata"]["annotations"] = {**body["metadata"].get("annotations", {}),
                                               **patch["metadata"]["annotations"]}
            body["metadata"]["generation"] += 1
        body["metadata"]["resourceVersion"] = str(self.version)
        return copy.deepcopy(body)


def context(server: ApiServer, groups: WorkloadGroupIndex | None, *clusters: str) -> PassContext:
    fleet = ClusterStore()
    for name in clusters:
        fleet.upsert(parse_cluster(cluster(name)))
    return PassContext(client=server, events=Events(), bindings=BindingStore(), clusters=fleet,
                       metrics=SchedulerMetrics(), workload_groups=groups)


def scheduler(ctx: PassContext) -> Scheduler:
    gate = ctx.workload_groups is not None
    settings = PassSettings(scheduler_name="default-scheduler", plugins=build_plugins(workload_affinity=gate),
                            workload_groups=ctx.workload_groups)
    return Scheduler(ctx, settings, queue=SchedulingQueue(), metrics=ctx.metrics)


def test_intake_feeds_index_with_every_binding_event() -> None:
    ctx = context(ApiServer(), WorkloadGroupIndex())
    intake = scheduler(ctx)
    intake.on_binding(rb("a", "m1", version="10"))
    intake.on_binding(rb("b", "m2", version="11"))
    intake.on_binding_deleted(rb("a", "m1", version="10"))
    assert ctx.workload_groups is not None
    assert where(ctx.workload_groups) == {"b": frozenset({"m2"})}


def test_relist_forgets_members_it_lacks() -> None:
    ctx = context(ApiServer(), WorkloadGroupIndex())
    intake = scheduler(ctx)
    intake.on_binding(rb("a", "m1"))
    intake.on_binding(rb("b", "m2"))
    intake.on_bindings_relisted(True, [rb("b", "m2")])
    assert ctx.workload_groups is not None
    assert where(ctx.workload_groups) == {"b": frozenset({"m2"})}


async def test_second_member_joins_undelivered_first() -> None:
    first, second = rb("a-deployment"), rb("b-deployment")
    first["spec"]["resource"]["name"], second["spec"]["resource"]["name"] = "a", "b"
    first["spec"]["placement"]["clusterAffinity"] = {"clusterNames": ["m2"]}
    server = ApiServer(first, second)
    ctx = context(server, WorkloadGroupIndex(), "m1", "m2", "m3")
    intake = scheduler(ctx)
    intake.on_binding(first)
    intake.on_binding(second)
    for key in ("default/a-deployment", "default/b-deployment"):  # the watch delivers neither write meanwhile
        assert await run_pass(key, ctx, intake.settings, PassTracker(key)) is PassOutcome.SCHEDULED
    assert server.bodies["b-deployment"]["spec"]["clusters"] == [{"name": "m2"}]


async def test_with_gate_off_pass_ignores_groups() -> None:
    first, second = rb("a-deployment"), rb("b-deployment")
    first["spec"]["placement"]["clusterAffinity"] = {"clusterNames": ["m2"]}
    server = ApiServer(first, second)
    ctx = context(server, None, "m1", "m2")
    intake = scheduler(ctx)
    intake.on_binding(first)
    intake.on_binding(second)
    for key in ("default/a-deployment", "default/b-deployment"):
        await run_pass(key, ctx, intake.settings, PassTracker(key))
    assert server.bodies["b-deployment"]["spec"]["clusters"] == [{"name": "m1"}, {"name": "m2"}]


# --- the service and the gate -----------------------------------------------------------------------------------


def gated(enabled: bool) -> SchedulerConfig:
    return SchedulerConfig(feature_gates=FeatureGatesConfig(workload_affinity=enabled))


async def test_gate_off_builds_no_index_or_filter() -> None:
    service = SchedulerService(Connection(server="http://127.0.0.1:9"), gated(False))
    try:
        assert service.context.workload_groups is None
        assert service.scheduler.settings.framework.workload_groups is None
        assert not {"WorkloadAffinity", "WorkloadAntiAffinity"} & set(service.scheduler.settings.plugins.names)
    finally:
        await service.client.close()
        await service.lease_client.close()


async def test_gate_on_indexes_stored_off_drops_index() -> None:
    service = SchedulerService(Connection(server="http://127.0.0.1:9"), gated(False))
    try:
        service.scheduler.on_binding(rb("a", "m1"))
        service.apply_config(gated(True))
        groups = service.context.workload_groups
        assert groups is not None and where(groups) == {"a": frozenset({"m1"})}
        assert service.scheduler.settings.framework.workload_groups is groups
        assert [p.name for p in service.scheduler.settings.plugins.filters][-2:] == [
            "WorkloadAffinity", "WorkloadAntiAffinity"]
        service.apply_config(gated(False))
        assert service.context.workload_groups is None
    finally:
        await service.client.close()
        await service.lease_client.close()

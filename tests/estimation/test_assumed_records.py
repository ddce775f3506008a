"""A request's assumed workloads are appended as wire bytes, encoded once per workload and once per cluster's run
of workloads, and the request is exactly the one protobuf encodes from the whole message."""

from __future__ import annotations

import pytest

from binding_scheduler.algorithm.general_estimator import AssumedLoad, AssumedWorkload
from binding_scheduler.estimation import wire
from binding_scheduler.estimation.pb import estimator_pb2
from binding_scheduler.model import Component, NodeClaim, ReplicaRequirements, parse_quantity
from binding_scheduler.model.selectors import Toleration


def workload(name: str, replicas: int, namespace: str = "shop") -> AssumedWorkload:
    requirements = ReplicaRequirements(
        resource_request={"cpu": parse_quantity("250m", "cpu"), "memory": parse_quantity("1Gi", "memory")},
        node_claim=NodeClaim(node_selector={"disk": "ssd"}, tolerations=(Toleration(key="gpu", operator="Exists"),)),
        priority_class_name="high",
    )
    return AssumedWorkload(namespace, (Component(name, replicas, requirements), Component(f"{name}-side", 1)))


WORKLOADS = (workload("web", 3), workload("api", 1, "prod"), workload("db", 2))


def listed(workloads: tuple[AssumedWorkload, ...]) -> AssumedLoad:
    return AssumedLoad(len(workloads), 0, {}, 0, {}, workloads)


@pytest.mark.parametrize("legacy", [True, False])
def test_replicas_request_matches_protobuf(legacy: bool) -> None:
    requirements = ReplicaRequirements(resource_request={"cpu": parse_quantity("1", "cpu")}, namespace="shop")
    records = wire.AssumedRecords(wire.ASSUMED_FIELD_OF_REPLICAS_REQUEST, legacy=legacy)
    sent = wire.request_bytes("member1", wire.replicas_request_prefix(requirements, legacy=legacy),
                              records("member1", listed(WORKLOADS)))
    whole = estimator_pb2.MaxAvailableReplicasRequest(
        cluster="member1", replicaRequirements=wire.replica_requirements(requirements, legacy=legacy),
        assumedWorkloads=[wire.assumed_workload(w, legacy=legacy) for w in WORKLOADS])
    assert sent == wire.serialize(whole)


@pytest.mark.parametrize("legacy", [True, False])
def test_component_sets_request_matches_protobuf(legacy: bool) -> None:
    components = WORKLOADS[0].components
    records = wire.AssumedRecords(wire.ASSUMED_FIELD_OF_SETS_REQUEST, legacy=legacy)
    sent = wire.request_bytes("member2", wire.component_sets_request_prefix(components, "shop", legacy=legacy),
                              records("member2", list(WORKLOADS[1:])))
    whole = estimator_pb2.MaxAvailableComponentSetsRequest(cluster="member2", namespace="shop")
    whole.components.extend(wire.assumed_workload(WORKLOADS[0], legacy=legacy).components)
    whole.assumedWorkloads.extend(wire.assumed_workload(w, legacy=legacy) for w in WORKLOADS[1:])
    assert sent == wire.serialize(whole)


def test_bare_request_is_cluster_alone() -> None:
    records = wire.AssumedRecords(wire.ASSUMED_FIELD_OF_REPLICAS_REQUEST, legacy=False)
    sent = wire.request_bytes("m", wire.replicas_request_prefix(None, legacy=False), records("m", ()))
    assert sent == wire.serialize(estimator_pb2.MaxAvailableReplicasRequest(cluster="m")) == b"\x0a\x01m"


def test_workload_run_encoded_once_per_tuple() -> None:
    records = wire.AssumedRecords(wire.ASSUMED_FIELD_OF_REPLICAS_REQUEST, legacy=False)
    load = listed(WORKLOADS)
    first = records("m1", load)
    assert records("m1", listed(load.workloads)) is first
    changed = records("m1", listed(WORKLOADS[:2]))
    assert changed is not first
    assert first.startswith(changed) and len(first) > len(changed)


def test_workload_encoded_once_and_memo_bounded() -> None:
    records = wire.AssumedRecords(wire.ASSUMED_FIELD_OF_REPLICAS_REQUEST, legacy=False, limit=2)
    web = records.record(WORKLOADS[0])
    assert records.record(WORKLOADS[0]) is web
    records.record(WORKLOADS[1])
    records.record(WORKLOADS[2])
    again = records.record(WORKLOADS[0])
    assert again == web and again is not web
    run, elsewhere = (WORKLOADS[0],), (WORKLOADS[1],)
    first = records("m1", listed(run))
    kept = records("m2", listed(elsewhere))
    records("m1", listed(WORKLOADS[1:2]))
    records("m1", listed(WORKLOADS[2:]))
    again_run = records("m1", listed(run))
    assert again_run == first and again_run is not first
    assert records("m2", listed(elsewhere)) is kept

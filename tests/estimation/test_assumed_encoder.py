"""Assumed workloads are encoded once per workload object, and always as `assumed_workload` encodes them."""

from __future__ import annotations

from binding_scheduler.algorithm.general_estimator import AssumedWorkload
from binding_scheduler.estimation.wire import AssumedWorkloadEncoder, assumed_workload
from binding_scheduler.model import Component, ReplicaRequirements, parse_quantity


def workload(name: str, replicas: int) -> AssumedWorkload:
    requirements = ReplicaRequirements(resource_request={"cpu": parse_quantity("250m", "cpu")})
    return AssumedWorkload("shop", (Component(name, replicas, requirements),))


def test_the_same_workload_object_is_encoded_once_and_as_assumed_workload_encodes_it() -> None:
    encode = AssumedWorkloadEncoder(legacy=True)
    web = workload("web", 3)
    first = encode(web)
    assert encode(web) is first
    assert first.SerializeToString(deterministic=True) == assumed_workload(web, legacy=True).SerializeToString(
        deterministic=True)


def test_another_workload_object_is_encoded_for_itself_and_the_memo_is_bounded() -> None:
    encode = AssumedWorkloadEncoder(legacy=False, limit=2)
    web, api, db = workload("web", 3), workload("api", 1), workload("db", 2)
    encoded = [encode(w) for w in (web, api, db)]
    assert [e.components[0].name for e in encoded] == ["web", "api", "db"]
    assert encode(db) is encoded[2]
    assert encode(web) is not encoded[0]
    assert encode(web) == encoded[0]

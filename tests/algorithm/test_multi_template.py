"""Multi-template workloads behind the alpha gate MultiplePodTemplatesScheduling (Karmada's
pkg/scheduler/core/estimation.go: isMultiTemplateSchedulingApplicable, calculateMultiTemplateAvailableSets)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from binding_scheduler.algorithm.multi_template import multi_template_applicable
from binding_scheduler.algorithm.registry import build_plugins
from binding_scheduler.algorithm.schedule import ScheduleOptions, general_estimates
from binding_scheduler.algorithm.snapshot import Snapshot
from binding_scheduler.algorithm.triggers import ScheduleType, schedule_trigger
from binding_scheduler.model import TargetCluster, TargetComponent, parse_binding
from binding_scheduler.model.fields import FrozenMap
from tests.algorithm.test_estimates import merge_estimates
from testsupport.builders import make_cluster, schedule

GATE = ScheduleOptions(multiple_pod_templates=True)
ONE_CLUSTER = [{"spreadByField": "cluster", "minGroups": 1, "maxGroups": 1}]
DIVIDED = {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"}


def components(*specs: tuple[str, int, str]) -> list[dict[str, Any]]:
    return [
        {"name": name, "replicas": replicas, "replicaRequirements": {"resourceRequest": {"cpu": cpu}}}
        for name, replicas, cpu in specs
    ]


def make_binding(
    *,
    parts: list[dict[str, Any]] | None = None,
    spread: list[dict[str, Any]] | None = None,
    placement: bool = True,
    replicas: int = 0,
    clusters: list[dict[str, Any]] | None = None,
) -> Any:
    spec: dict[str, Any] = {"resource": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "job"}}
    if parts is not None:
        spec["components"] = parts
    if replicas:
        spec["replicas"] = replicas
    if placement:
        spec["placement"] = {
            "replicaScheduling": DIVIDED,
            "spreadConstraints": spread if spread is not None else ONE_CLUSTER,
        }
    if clusters is not None:
        spec["clusters"] = clusters
    return parse_binding({"kind": "ResourceBinding", "metadata": {"name": "job", "namespace": "d"}, "spec": spec})


def cluster(name: str, cpu: str, pods: str = "100") -> Any:
    return make_cluster(name, allocatable={"cpu": cpu, "pods": pods})


TWO_PARTS = components(("driver", 1, "2"), ("worker", 3, "1"))


@pytest.mark.parametrize(
    ("binding", "gate", "expected"),
    [
        (make_binding(parts=TWO_PARTS), True, True),
        (make_binding(parts=TWO_PARTS), False, False),
        (make_binding(parts=[]), True, False),
        (make_binding(parts=TWO_PARTS, placement=False), True, False),
        (make_binding(parts=TWO_PARTS, spread=[]), True, False),
        (make_binding(parts=TWO_PARTS, spread=[{"spreadByField": "cluster", "maxGroups": 1}]), True, True),
        (
            make_binding(parts=TWO_PARTS, spread=[{"spreadByField": "cluster", "minGroups": 1, "maxGroups": 2}]),
            True,
            False,
        ),
        (
            make_binding(parts=TWO_PARTS, spread=[{"spreadByField": "cluster", "minGroups": 2, "maxGroups": 2}]),
            True,
            False,
        ),
        (make_binding(parts=components(("only", 2, "1"))), True, True),
    ],
    ids=[
        "applicable",
        "gate-off",
        "no-components",
        "no-placement",
        "no-spread",
        "min-defaults-to-1",
        "max-2",
        "min-2",
        "one-component",
    ],
)
def test_multi_template_gated_as_karmada_does(
    binding: Any, gate: bool, expected: bool
) -> None:
    assert multi_template_applicable(binding, gate) is expected


def test_general_estimate_counts_whole_component_sets() -> None:
    binding = make_binding(parts=TWO_PARTS)
    snapshot = Snapshot([cluster("m1", "10"), cluster("m2", "4")])
    assert general_estimates(binding, snapshot.clusters, snapshot, GATE) == {"m1": 2, "m2": 0}


def test_set_answers_merge_like_replicas_skipping_minus_one() -> None:
    answers = [{"m2": 3, "m1": -1}, {"m1": 5}, {"m3": 0}]
    assert merge_estimates(["m3", "m1", "m2"], 7, answers) == {"m3": 0, "m1": 5, "m2": 3}


def test_cluster_with_room_for_one_set_is_selected() -> None:
    binding = make_binding(parts=TWO_PARTS)
    snapshot = Snapshot([cluster("m1", "7"), cluster("m2", "2")])
    assert [t.name for t in schedule(binding, snapshot, build_plugins(), options=GATE)] == ["m1"]


def test_multi_component_workload_carries_replicas() -> None:
    """Karmada #7833 (master after v1.19.0-rc.0): spec.clusters[].components, copied from spec.components, in
    the same write."""
    binding = make_binding(parts=TWO_PARTS)
    snapshot = Snapshot([cluster("m1", "7"), cluster("m2", "2")])
    (target,) = schedule(binding, snapshot, build_plugins(), options=GATE)
    assert target == TargetCluster("m1", 0, (TargetComponent("driver", 1), TargetComponent("worker", 3)))
    assert target.to_dict() == {"name": "m1", "components": [{"name": "driver", "replicas": 1},
                                                            {"name": "worker", "replicas": 3}]}


def test_component_results_are_read_back_as_previous_result() -> None:
    written = [{"name": "m1", "components": [{"name": "driver", "replicas": 1}, {"name": "worker", "replicas": 3}]}]
    binding = make_binding(parts=TWO_PARTS, clusters=written)
    assert [t.to_dict() for t in binding.clusters] == written


def test_ungated_binding_is_names_only_non_workload() -> None:
    binding = make_binding(parts=TWO_PARTS)
    snapshot = Snapshot([cluster("m1", "7"), cluster("m2", "2")])
    assert schedule(binding, snapshot, build_plugins()) == [TargetCluster("m1")]


def test_one_component_divides_spec_replicas_on_one_cluster() -> None:
    binding = make_binding(parts=components(("only", 4, "1")), replicas=4)
    snapshot = Snapshot([cluster("m1", "100"), cluster("m2", "100")])
    assert schedule(binding, snapshot, build_plugins(), options=GATE) == [TargetCluster("m1", 4)]


def test_gated_unplaced_multi_template_is_replica_change() -> None:
    body = make_binding(parts=TWO_PARTS)
    applied = (
        '{"replicaScheduling":{"replicaSchedulingType":"Divided","replicaDivisionPreference":"Aggregated"},'
        '"spreadConstraints":[{"spreadByField":"cluster","maxGroups":1,"minGroups":1}]}'
    )
    binding = replace(body, annotations=FrozenMap({"policy.karmada.io/applied-placement": applied}))
    assert schedule_trigger(binding, {}) is None
    assert schedule_trigger(binding, {}, multiple_pod_templates=True) is ScheduleType.SCALE

"""Does a binding need scheduling (Karmada's Test_needConsideredPlacementChanged, TestDoScheduleBinding,
Test_getAffinityIndex)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from binding_scheduler.algorithm.triggers import (
    ScheduleType,
    affinity_index,
    condition_owed,
    placement_changed,
    replicas_changed,
    schedule_trigger,
)
from binding_scheduler.model import Placement, parse_binding
from testsupport.builders import AGGREGATED, DIVIDED_WEIGHTED, DUPLICATED, make_binding, make_cluster, placement, term


def parsed(data: dict[str, Any]) -> Placement:
    result = make_binding(placement=data).placement
    assert result is not None
    return result


TERMS = [term("a", "m1"), term("b", "m2")]

# --- placementChanged (Karmada's Test_needConsideredPlacementChanged) -----------------------------------------


@pytest.mark.parametrize(
    ("current", "applied", "observed", "changed"),
    [
        pytest.param(placement(affinity={"clusterNames": ["m1"]}), "", "", True, id="no annotation"),
        pytest.param(placement(affinity={"clusterNames": ["m1"]}), "{not json", "", False, id="invalid JSON"),
        pytest.param(placement(affinity={"clusterNames": ["m1"]}), placement(affinity={"clusterNames": ["m1"]}), "",
                     False, id="same placement"),
        pytest.param(placement(affinity={"clusterNames": ["m1"]}), placement(affinity={"clusterNames": ["m2"]}), "",
                     True, id="affinity edited"),
        pytest.param(placement(tolerations=[{"key": "k", "operator": "Exists"}]), placement(), "", True,
                     id="toleration added"),
        pytest.param(placement(spread=[{"spreadByField": "cluster", "maxGroups": 2}]),
                     placement(spread=[{"spreadByField": "cluster", "maxGroups": 1}]), "", True, id="spread edited"),
        pytest.param(placement(scheduling=DUPLICATED), placement(scheduling=DIVIDED_WEIGHTED), "", True,
                     id="replica scheduling edited"),
        pytest.param(placement(affinities=[*TERMS, term("c", "m3")]), placement(affinities=TERMS), "a", False,
                     id="another term added"),
        pytest.param(placement(affinities=[term("a", "m1")]), placement(affinities=TERMS), "a", False,
                     id="another term removed"),
        pytest.param(placement(affinities=[term("a", "m1"), term("b", "m9")]), placement(affinities=TERMS), "a",
                     False, id="another term edited"),
        pytest.param(placement(affinities=[term("a", "m9"), term("b", "m2")]), placement(affinities=TERMS), "a",
                     True, id="observed term edited"),
        pytest.param(placement(affinities=[term("b", "m2")]), placement(affinities=TERMS), "a", True,
                     id="observed term removed"),
        pytest.param(placement(affinities=[*TERMS, term("c", "m3")]), placement(affinities=TERMS), "", True,
                     id="terms differ and nothing observed"),
        pytest.param(placement(affinities=[term("a", "m1", overflow=[{"affinityName": "o", "clusterNames": ["x"]}])]),
                     placement(affinities=[term("a", "m1")]), "a", True, id="observed term overflow edited"),
    ],
)
def test_placement_changed(
    current: dict[str, Any], applied: dict[str, Any] | str, observed: str, changed: bool
) -> None:
    annotation = applied if isinstance(applied, str) else json.dumps(applied)
    assert placement_changed(parsed(current), annotation, observed) is changed


def test_absent_and_empty_lists_are_no_change() -> None:
    current = parsed(placement(affinity={"clusterNames": ["m1"]}))
    applied = json.dumps({"clusterAffinity": {"clusterNames": ["m1"], "exclude": []}, "clusterTolerations": [],
                          "spreadConstraints": [], "clusterAffinities": []})
    assert not placement_changed(current, applied, "")


def test_webhook_defaults_are_no_change() -> None:
    current = parsed(placement(scheduling={"replicaSchedulingType": "Divided"}, spread=[{}]))
    applied = json.dumps(current.to_dict())
    assert not placement_changed(current, applied, "")


def test_our_own_annotation_is_no_change() -> None:
    current = parsed(placement(affinities=TERMS, tolerations=[{"key": "k", "operator": "Exists"}]))
    assert not placement_changed(current, json.dumps(current.to_dict()), "a")


def test_annotation_that_is_not_placement_is_no_change() -> None:
    assert not placement_changed(parsed(placement()), json.dumps(["x"]), "")


# --- replicas changed (Karmada's pkg/util/binding.go: IsBindingReplicasChanged) ----------------------------


def test_replicas_changed_needs_replica_scheduling() -> None:
    assert not replicas_changed(make_binding(replicas=3, placement=placement(), clusters={"m1": 1}))


def test_divided_compares_sum() -> None:
    divided = placement(scheduling=DIVIDED_WEIGHTED)
    assert replicas_changed(make_binding(replicas=3, placement=divided, clusters={"m1": 1, "m2": 1}))
    assert not replicas_changed(make_binding(replicas=3, placement=divided, clusters={"m1": 2, "m2": 1}))


def test_duplicated_compares_each_cluster() -> None:
    duplicated = placement(scheduling=DUPLICATED)
    assert replicas_changed(make_binding(replicas=3, placement=duplicated, clusters={"m1": 3, "m2": 2}))
    assert not replicas_changed(make_binding(replicas=3, placement=duplicated, clusters={"m1": 3, "m2": 3}))


# --- the decision tree (Karmada's pkg/scheduler/scheduler.go: doScheduleBinding) --------------------------

DIVIDED = placement(scheduling=DIVIDED_WEIGHTED)
SCHEDULED = {"m1": 2, "m2": 1}


def steady(**overrides: Any) -> dict[str, Any]:
    """A Divided workload scheduled with its current placement: nothing to do."""
    return {"replicas": 3, "placement": DIVIDED, "clusters": SCHEDULED, "applied": parsed(DIVIDED).to_dict(),
            **overrides}


CLUSTERS = {"m1": make_cluster("m1"), "m2": make_cluster("m2")}


def test_steady_divided_workload_is_not_scheduled() -> None:
    assert schedule_trigger(make_binding(**steady()), CLUSTERS) is None


def test_placement_change_is_reconcile() -> None:
    rb = make_binding(**steady(applied=placement(scheduling=AGGREGATED)))
    assert schedule_trigger(rb, CLUSTERS) is ScheduleType.RECONCILE


def test_replica_change_is_scale() -> None:
    assert schedule_trigger(make_binding(**steady(replicas=5)), CLUSTERS) is ScheduleType.SCALE


def test_placement_change_wins_over_replica_change() -> None:
    rb = make_binding(**steady(replicas=5, applied=None))
    assert schedule_trigger(rb, CLUSTERS) is ScheduleType.RECONCILE


def test_explicit_reschedule_is_reconcile() -> None:
    rb = make_binding(**steady(reschedule_at="2024-01-01T00:00:02Z", last_scheduled="2024-01-01T00:00:01Z"))
    assert schedule_trigger(rb, CLUSTERS) is ScheduleType.RECONCILE


def test_old_reschedule_request_is_nothing() -> None:
    rb = make_binding(**steady(reschedule_at="2024-01-01T00:00:00Z", last_scheduled="2024-01-01T00:00:01Z"))
    assert schedule_trigger(rb, CLUSTERS) is None


def test_non_workload_is_always_scheduled() -> None:
    rb = make_binding(**steady(replicas=0, clusters={"m1": 0}))
    assert schedule_trigger(rb, CLUSTERS) is ScheduleType.RECONCILE


def test_duplicated_is_always_scheduled() -> None:
    duplicated = placement(scheduling=DUPLICATED)
    rb = make_binding(replicas=2, placement=duplicated, clusters={"m1": 2}, applied=parsed(duplicated).to_dict())
    assert schedule_trigger(rb, CLUSTERS) is ScheduleType.RECONCILE


def test_terminating_target_cluster_is_reconcile() -> None:
    clusters = {"m1": make_cluster("m1", deleting=True), "m2": make_cluster("m2")}
    assert schedule_trigger(make_binding(**steady()), clusters) is ScheduleType.RECONCILE


def test_terminating_cluster_that_is_not_target_is_nothing() -> None:
    clusters = {**CLUSTERS, "m3": make_cluster("m3", deleting=True)}
    assert schedule_trigger(make_binding(**steady()), clusters) is None


def test_label_change_alone_does_not_move_divided_workload() -> None:
    clusters = {"m1": make_cluster("m1", labels={"new": "label"}), "m2": make_cluster("m2")}
    assert schedule_trigger(make_binding(**steady()), clusters) is None


def test_no_placement_is_no_trigger() -> None:
    assert schedule_trigger(make_binding(replicas=1), CLUSTERS) is None


# --- getAffinityIndex (3 rows + reschedule) -------------------------------------------------------------------


@pytest.mark.parametrize(("observed", "index"), [("", 0), ("b", 1), ("missing", 0)])
def test_affinity_index(observed: str, index: int) -> None:
    rb = make_binding(placement=placement(affinities=TERMS), observed_affinity=observed)
    assert affinity_index(rb) == index


def test_affinity_index_restarts_at_zero_on_explicit_reschedule() -> None:
    rb = make_binding(placement=placement(affinities=TERMS), observed_affinity="b",
                      reschedule_at="2024-01-01T00:00:02Z", last_scheduled="2024-01-01T00:00:01Z")
    assert affinity_index(rb) == 0


def test_condition_owed_for_unobserved_generation() -> None:
    def binding(generation: int, observed: int, conditions: list[dict[str, str]]) -> Any:
        return parse_binding({
            "apiVersion": "work.karmada.io/v1alpha2", "kind": "ResourceBinding",
            "metadata": {"name": "b", "namespace": "ns", "generation": generation},
            "spec": {"resource": {"apiVersion": "v1", "kind": "ConfigMap", "name": "c"}, "placement": {}},
            "status": {"schedulerObservedGeneration": observed, "conditions": conditions},
        })

    success = {"type": "Scheduled", "status": "True", "reason": "Success", "message": "",
               "lastTransitionTime": "2026-01-01T00:00:00Z"}
    failure = {**success, "status": "False", "reason": "NoClusterFit"}
    assert condition_owed(binding(2, 1, []))
    assert condition_owed(binding(2, 1, [failure]))
    assert not condition_owed(binding(2, 1, [success]))
    assert not condition_owed(binding(2, 2, []))

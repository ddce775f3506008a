"""StaticWeight assignment (Karmada's Test_assignByStaticWeightStrategy and the order-sensitive
Test_DistributionOfReplicas), driven through `assign_replicas` with bindings and clusters written as YAML-like dicts.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from binding_scheduler.algorithm.assign import assign_replicas
from binding_scheduler.algorithm.candidates import ClusterDetail, OrderedCandidates
from binding_scheduler.algorithm.registry import build_plugins
from binding_scheduler.algorithm.static_weight import SnapshotWeights
from binding_scheduler.algorithm.webster import ARRAYS_FROM
from binding_scheduler.model import Binding, TargetCluster, WeightPreference, parse_binding
from testsupport import builders
from testsupport.builders import make_binding, make_cluster, schedule, snapshot

ODD_UID = "uid-1"  # FNV-1a is odd: ties go to names descending


def detail(name: str, allocatable: int = 0, labels: dict[str, str] | None = None) -> ClusterDetail:
    return ClusterDetail(make_cluster(name, labels=labels), allocatable=allocatable, available=allocatable)


def details(*names: str) -> list[ClusterDetail]:
    return [detail(name) for name in names]


def by_names(weights: dict[str, int]) -> list[dict[str, Any]]:
    return [{"targetCluster": {"clusterNames": [name]}, "weight": weight} for name, weight in weights.items()]


def weighted(rules: list[dict[str, Any]] | None) -> dict[str, Any]:
    scheduling: dict[str, Any] = {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted"}
    if rules is not None:
        scheduling["weightPreference"] = {"staticWeightList": rules}
    return {"replicaScheduling": scheduling}


def binding(replicas: int, placement: dict[str, Any], previous: dict[str, int] | None = None, uid: str = "") -> Binding:
    return make_binding("web", replicas=replicas, requests={"cpu": "100m"}, placement=placement,
                        clusters=previous or {}, resource_uid=uid)


def targets(**replicas: int) -> list[TargetCluster]:
    return [TargetCluster(name, count) for name, count in replicas.items()]


# --- Test_assignByStaticWeightStrategy ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("replicas", "expected"),
    [(12, targets(m1=6, m2=4, m3=2)), (13, targets(m1=7, m2=4, m3=2)), (14, targets(m1=7, m2=5, m3=2))],
    ids=["12", "13", "14"],
)
def test_weights_three_two_one(replicas: int, expected: list[TargetCluster]) -> None:
    placement = weighted(by_names({"m1": 3, "m2": 2, "m3": 1}))
    assert assign_replicas(binding(replicas, placement), details("m1", "m2", "m3")) == expected


def test_nil_weight_preference_weighs_every_cluster_one() -> None:
    assert assign_replicas(binding(12, weighted(None)), details("m1", "m2", "m3")) == targets(m1=4, m2=4, m3=4)


def test_zero_replicas_gives_empty_result() -> None:
    placement = weighted(by_names({"m1": 1, "m2": 1}))
    assert assign_replicas(binding(0, placement), details("m1", "m2")) == []


def test_cluster_without_weight_is_ignored() -> None:
    placement = weighted(by_names({"m1": 1}))
    assert assign_replicas(binding(2, placement), details("m1", "m2")) == targets(m1=2)


def test_cluster_matching_several_rules_takes_largest_weight() -> None:
    rules = [*by_names({"m1": 1, "m2": 1}), *by_names({"m1": 2})]
    assert assign_replicas(binding(3, weighted(rules)), details("m1", "m2")) == targets(m1=2, m2=1)


def test_no_candidate_matching_any_rule_weighs_every_cluster_one() -> None:
    placement = weighted(by_names({"elsewhere": 5}))
    assert assign_replicas(binding(4, placement), details("m1", "m2")) == targets(m1=2, m2=2)


def test_target_cluster_matches_by_label_selector() -> None:
    rules = [
        {"targetCluster": {"labelSelector": {"matchLabels": {"tier": "gold"}}}, "weight": 3},
        {"targetCluster": {"labelSelector": {"matchLabels": {"tier": "silver"}}}, "weight": 1},
    ]
    selected = [detail("m1", labels={"tier": "silver"}), detail("m2", labels={"tier": "gold"})]
    assert assign_replicas(binding(8, weighted(rules)), selected) == targets(m1=2, m2=6)


def test_capacity_is_ignored() -> None:
    placement = weighted(by_names({"m1": 1, "m2": 1}))
    selected = [detail("m1", allocatable=0), detail("m2", allocatable=100)]
    assert assign_replicas(binding(4, placement), selected) == targets(m1=2, m2=2)


# --- Test_DistributionOfReplicas (order-sensitive) ---------------------------------------------------------


@pytest.mark.parametrize(
    ("weights", "replicas", "expected"),
    [
        ({"m1": 1, "m2": 1}, 4, targets(m1=2, m2=2)),
        ({"m1": 1, "m2": 1}, 3, targets(m1=2, m2=1)),
        ({"m1": 1, "m2": 1, "m3": 1}, 6, targets(m1=2, m2=2, m3=2)),
        ({"m1": 1, "m2": 1, "m3": 1}, 5, targets(m1=2, m2=2, m3=1)),
        ({"m1": 2, "m2": 1, "m3": 1, "m4": 1}, 5, targets(m1=2, m2=1, m3=1, m4=1)),
        ({"m1": 2, "m2": 1, "m3": 1, "m4": 1}, 7, targets(m1=3, m2=2, m3=1, m4=1)),
        ({"m1": 1, "m2": 1, "m3": 1, "m4": 1}, 2, targets(m1=1, m2=1)),
    ],
    ids=["1:1x4", "1:1x3", "1:1:1x6", "1:1:1x5", "2:1:1:1x5", "2:1:1:1x7", "1:1:1:1x2"],
)
def test_distribution_by_weight(weights: dict[str, int], replicas: int, expected: list[TargetCluster]) -> None:
    placement = weighted(by_names(weights))
    assert assign_replicas(binding(replicas, placement), details(*weights)) == expected


def test_distribution_tie_goes_to_names_descending_for_odd_uid() -> None:
    placement = weighted(by_names({"m1": 1, "m2": 1, "m3": 1, "m4": 1}))
    assert assign_replicas(binding(2, placement, uid=ODD_UID), details("m1", "m2", "m3", "m4")) == targets(m3=1, m4=1)


def test_distribution_ignores_previous_result_on_replica_change() -> None:
    placement = weighted(by_names({"m1": 1, "m2": 1}))
    assert assign_replicas(binding(6, placement, {"m1": 1, "m2": 1}), details("m1", "m2")) == targets(m1=3, m2=3)


def test_distribution_follows_weight_change() -> None:
    placement = weighted(by_names({"m1": 3, "m2": 1}))
    assert assign_replicas(binding(4, placement, {"m1": 2, "m2": 2}), details("m1", "m2")) == targets(m1=3, m2=1)


def test_distribution_includes_added_cluster() -> None:
    placement = weighted(by_names({"m1": 1, "m2": 1, "m3": 1}))
    result = assign_replicas(binding(6, placement, {"m1": 3, "m2": 3}), details("m1", "m2", "m3"))
    assert result == targets(m1=2, m2=2, m3=2)


def test_distribution_drops_removed_cluster() -> None:
    placement = weighted(by_names({"m1": 1, "m2": 1, "m3": 1}))
    result = assign_replicas(binding(6, placement, {"m1": 2, "m2": 2, "m3": 2}), details("m1", "m2"))
    assert result == targets(m1=3, m2=3)


def test_distribution_is_sorted_by_name_whatever_selection_order() -> None:
    placement = weighted(by_names({"m1": 1, "m2": 1, "m3": 1}))
    assert assign_replicas(binding(3, placement), details("m3", "m1", "m2")) == targets(m1=1, m2=1, m3=1)


def test_empty_target_cluster_matches_every_cluster() -> None:
    rules = [{"targetCluster": {}, "weight": 1}, *by_names({"m2": 3})]
    assert assign_replicas(binding(4, weighted(rules)), details("m1", "m2")) == targets(m1=1, m2=3)


def test_excluded_cluster_does_not_take_rule_weight() -> None:
    rules = [{"targetCluster": {"clusterNames": ["m1", "m2"], "exclude": ["m2"]}, "weight": 2}, *by_names({"m2": 1})]
    assert assign_replicas(binding(3, weighted(rules)), details("m1", "m2")) == targets(m1=2, m2=1)


# --- a fleet held as columns ---------------------------------------------------------------------------------


TIER_RULES = [
    {"targetCluster": {"labelSelector": {"matchLabels": {"tier": "gold"}}}, "weight": 3},
    {"targetCluster": {"labelSelector": {"matchLabels": {"tier": "silver"}}}, "weight": 1},
    {"targetCluster": {"clusterNames": ["m-0007", "m-0100"]}, "weight": 5},
]


@settings(max_examples=40, deadline=None)
@given(
    tiers=st.lists(st.sampled_from(["gold", "silver", "bronze"]), min_size=ARRAYS_FROM, max_size=200),
    replicas=st.integers(1, 400),
    rules=st.sampled_from([TIER_RULES, TIER_RULES[1:2], [TIER_RULES[2]], by_names({"nowhere": 2})]),
    uid=st.sampled_from(["", ODD_UID, "uid-2"]),
)
def test_static_division_over_columns_matches_objects(
    tiers: list[str], replicas: int, rules: list[dict[str, Any]], uid: str
) -> None:
    clusters = [make_cluster(f"m-{i:04d}", labels={"tier": tier}) for i, tier in reversed(list(enumerate(tiers)))]
    rb = binding(replicas, weighted(rules), uid=uid)
    over_objects = assign_replicas(rb, [ClusterDetail(c) for c in clusters])
    assert schedule(rb, snapshot(*clusters), build_plugins()) == over_objects


def test_full_selection_weights_by_name_order() -> None:
    fleet = snapshot(*(make_cluster(name, labels={"tier": tier})
                       for name, tier in [("c", "gold"), ("a", "silver"), ("b", "bronze")])).columns
    selected = OrderedCandidates(fleet.names, np.array([0, 2, 1], dtype=np.intp), list, ranks=fleet.rank)
    rules = parse_binding(builders.binding(placement=weighted(TIER_RULES))).placement
    assert rules is not None and rules.replica_scheduling is not None
    preference = rules.replica_scheduling.weight_preference
    assert preference is not None
    parties = SnapshotWeights(fleet).parties(selected, preference)
    assert parties is not None
    assert [parties.names[i] for i in parties.at.tolist()] == ["a", "b", "c"]
    assert parties.votes.tolist() == [1, 0, 3]


def test_static_division_reads_selection_by_name() -> None:
    fleet = snapshot(*(make_cluster(name, labels={"tier": "gold"}) for name in ("c", "a", "b"))).columns

    def no_order() -> Any:
        raise AssertionError("the division ordered the candidates")

    selected = OrderedCandidates(fleet.names, np.array([0, 1, 2], dtype=np.intp), list, order=no_order,
                                 ranks=fleet.rank)
    preference = WeightPreference(static_weight_list=())
    parties = SnapshotWeights(fleet).parties(selected, preference)
    assert parties is not None
    assert [parties.names[i] for i in parties.at.tolist()] == ["a", "b", "c"]


def test_selection_not_held_as_columns_is_divided_over_objects() -> None:
    fleet = snapshot(make_cluster("a")).columns
    preference = WeightPreference(static_weight_list=())
    assert SnapshotWeights(fleet).parties([ClusterDetail(make_cluster("a"))], preference) is None

"""Placement (Karmada's pkg/apis/policy/v1alpha1/propagation_types.go: Placement): the webhook defaults, validation
errors naming field path and value, nil == empty, and the JSON form written into the applied-placement annotation."""

from __future__ import annotations

from typing import Any

import pytest

from binding_scheduler.model import (
    DivisionPreference,
    Placement,
    ReplicaSchedulingType,
    SpreadField,
    ValidationError,
)
from binding_scheduler.model.fields import Fields
from binding_scheduler.model.placement import parse_placement
from testsupport.builders import expression, make_binding, term


def parse(data: dict[str, Any]) -> Placement:
    placement = make_binding(placement=data).placement
    assert placement is not None
    return placement


def error_of(data: dict[str, Any]) -> str:
    with pytest.raises(ValidationError) as caught:
        make_binding(placement=data)
    return str(caught.value)


# --- webhook defaults --------------------------------------------------------------------------------------


def test_empty_replica_scheduling_type_defaults_to_divided() -> None:
    scheduling = parse({"replicaScheduling": {}}).replica_scheduling
    assert scheduling is not None and scheduling.type is ReplicaSchedulingType.DIVIDED


def test_divided_without_preference_defaults_to_weighted() -> None:
    scheduling = parse({"replicaScheduling": {"replicaSchedulingType": "Divided"}}).replica_scheduling
    assert scheduling is not None and scheduling.division_preference is DivisionPreference.WEIGHTED


def test_explicit_aggregated_preference_is_kept() -> None:
    data = {"replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"}}
    scheduling = parse(data).replica_scheduling
    assert scheduling is not None and scheduling.division_preference is DivisionPreference.AGGREGATED


def test_duplicated_gets_no_division_preference() -> None:
    scheduling = parse({"replicaScheduling": {"replicaSchedulingType": "Duplicated"}}).replica_scheduling
    assert scheduling is not None and scheduling.division_preference is None


def test_bare_spread_constraint_spreads_by_cluster() -> None:
    (constraint,) = parse({"spreadConstraints": [{"maxGroups": 2}]}).spread_constraints
    assert (constraint.spread_by_field, constraint.max_groups) == ("cluster", 2)


def test_spread_by_label_gets_no_default_field() -> None:
    (constraint,) = parse({"spreadConstraints": [{"spreadByLabel": "team"}]}).spread_constraints
    assert (constraint.spread_by_field, constraint.spread_by_label) == ("", "team")


def test_min_groups_zero_defaults_to_one() -> None:
    (constraint,) = parse({"spreadConstraints": [{"spreadByField": "cluster", "minGroups": 0}]}).spread_constraints
    assert constraint.min_groups == 1


def test_absent_min_groups_defaults_to_one() -> None:
    (constraint,) = parse({"spreadConstraints": [{"spreadByField": "region"}]}).spread_constraints
    assert constraint.min_groups == 1


def test_max_groups_zero_is_kept() -> None:
    (constraint,) = parse({"spreadConstraints": [{"spreadByField": "cluster"}]}).spread_constraints
    assert constraint.max_groups == 0


def test_spread_lookup_by_field() -> None:
    placement = parse({"spreadConstraints": [{"spreadByField": "region"}, {"spreadByField": "cluster"}]})
    region = placement.spread(SpreadField.REGION)
    assert region is not None and region.spread_by_field == "region"
    assert placement.spread(SpreadField.ZONE) is None


def test_no_replica_scheduling_is_duplicated() -> None:
    assert parse({}).scheduling_type is ReplicaSchedulingType.DUPLICATED


# --- nil and empty compare equal ----------------------------------------------------------------------------


def test_empty_cluster_affinities_list_is_none() -> None:
    assert parse({"clusterAffinities": []}).cluster_affinities is None


def test_empty_lists_and_absent_lists_give_equal_placements() -> None:
    empty = {"clusterAffinities": [], "clusterTolerations": [], "spreadConstraints": []}
    assert parse(empty) == parse({})


def test_empty_and_absent_cluster_names_are_equal() -> None:
    assert parse({"clusterAffinity": {"clusterNames": []}}) == parse({"clusterAffinity": {}})


def test_empty_and_absent_match_labels_are_equal() -> None:
    with_empty = parse({"clusterAffinity": {"labelSelector": {"matchLabels": {}}}})
    assert with_empty == parse({"clusterAffinity": {"labelSelector": {}}})


def test_empty_overflow_affinities_are_none() -> None:
    placement = parse({"clusterAffinities": [{"affinityName": "a", "overflowAffinities": []}]})
    assert placement.cluster_affinities is not None
    assert placement.cluster_affinities[0].overflow_affinities is None


# --- the terms --------------------------------------------------------------------------------------------


def test_terms_keep_their_order_and_are_found_by_name() -> None:
    placement = parse({"clusterAffinities": [term("b", "m2"), term("a", "m1")]})
    assert [t.affinity_name for t in placement.cluster_affinities or ()] == ["b", "a"]
    found = placement.term("a")
    assert found is not None and found.affinity.cluster_names == ("m1",)
    assert placement.term("c") is None


def test_overflow_affinities_are_parsed() -> None:
    overflow = [{"affinityName": "o", "clusterNames": ["m9"]}]
    placement = parse({"clusterAffinities": [term("a", "m1", overflow=overflow)]})
    found = placement.term("a")
    assert found is not None and found.overflow_affinities is not None
    assert [(o.affinity_name, o.affinity.cluster_names) for o in found.overflow_affinities] == [("o", ("m9",))]


# --- validation ------------------------------------------------------------------------------------------


def test_unknown_label_operator_matches_nothing() -> None:
    # The CRD stores it; Karmada's label selector conversion fails, so the affinity matches no cluster.
    affinity = parse({"clusterAffinity": {"labelSelector": {"matchExpressions": [expression("a", "Inn", "x")]}}})
    assert affinity.cluster_affinity is not None and affinity.cluster_affinity.label_selector is not None
    (kept,) = affinity.cluster_affinity.label_selector.match_expressions
    assert (kept.key, kept.operator, kept.values, kept.valid) == ("a", "Inn", ("x",), False)


def test_field_selectors_also_allow_gt_and_lt() -> None:
    data = {"clusterAffinity": {"fieldSelector": {"matchExpressions": [
        expression("region", "Gt", "1"), expression("region", "Has", "x")]}}}
    affinity = parse(data).cluster_affinity
    assert affinity is not None and affinity.field_selector is not None
    assert [r.valid for r in affinity.field_selector] == [True, False]


def test_expression_needs_key_and_operator_as_crd_says() -> None:
    data = {"clusterAffinity": {"fieldSelector": {"matchExpressions": [{"key": "region"}]}}}
    assert error_of(data) == "spec.placement.clusterAffinity.fieldSelector.matchExpressions[0].operator: is required"


def test_cluster_affinity_and_cluster_affinities_are_exclusive() -> None:
    assert error_of({"clusterAffinity": {}, "clusterAffinities": [term("a")]}) == (
        "spec.placement: clusterAffinity and clusterAffinities must not be set together"
    )


def test_affinity_name_is_required() -> None:
    assert error_of({"clusterAffinities": [{"clusterNames": ["m1"]}]}) == (
        "spec.placement.clusterAffinities[0].affinityName: is required"
    )


def test_affinity_name_has_at_most_32_characters() -> None:
    name = "a" * 33
    assert error_of({"clusterAffinities": [term(name)]}) == (
        f"spec.placement.clusterAffinities[0].affinityName: '{name}' is longer than 32 characters"
    )


def test_affinity_name_of_32_characters_is_fine() -> None:
    assert parse({"clusterAffinities": [term("a" * 32)]}).term("a" * 32) is not None


def test_affinity_names_are_unique() -> None:
    assert error_of({"clusterAffinities": [term("a"), term("b"), term("a")]}) == (
        "spec.placement.clusterAffinities[2].affinityName: duplicate name 'a'"
    )


def test_overflow_affinity_needs_name() -> None:
    assert error_of({"clusterAffinities": [{"affinityName": "a", "overflowAffinities": [{}]}]}) == (
        "spec.placement.clusterAffinities[0].overflowAffinities[0].affinityName: is required"
    )


def test_repeated_spread_field_is_kept_and_last_one_counts() -> None:
    # A policy may not repeat a field (its validation refuses it) but a binding created directly may; Karmada
    # reads the last constraint of a field (a map by field; group scores loop to the last one).
    data = {"spreadConstraints": [{"spreadByField": "cluster", "maxGroups": 1}, {"spreadByField": "region"},
                                  {"spreadByField": "cluster", "minGroups": 2, "maxGroups": 3}]}
    placement = parse(data)
    assert len(placement.spread_constraints) == 3
    cluster = placement.spread(SpreadField.CLUSTER)
    assert cluster is not None and (cluster.min_groups, cluster.max_groups) == (2, 3)


def test_spread_by_field_and_label_are_exclusive() -> None:
    assert error_of({"spreadConstraints": [{"spreadByField": "zone", "spreadByLabel": "x"}]}) == (
        "spec.placement.spreadConstraints[0]: spreadByLabel and spreadByField must not be set together"
    )


def test_spread_by_field_is_enum() -> None:
    assert error_of({"spreadConstraints": [{"spreadByField": "rack"}]}) == (
        "spec.placement.spreadConstraints[0].spreadByField: 'rack' is not one of cluster, region, zone, provider"
    )


def test_group_counts_must_not_be_negative() -> None:
    assert error_of({"spreadConstraints": [{"maxGroups": -1}]}) == (
        "spec.placement.spreadConstraints[0].maxGroups: -1 is less than 0"
    )
    assert error_of({"spreadConstraints": [{"minGroups": -2}]}) == (
        "spec.placement.spreadConstraints[0].minGroups: -2 is less than 0"
    )


def test_replica_scheduling_type_is_enum() -> None:
    assert error_of({"replicaScheduling": {"replicaSchedulingType": "Split"}}) == (
        "spec.placement.replicaScheduling.replicaSchedulingType: 'Split' is not one of Duplicated, Divided"
    )


def test_division_preference_is_enum() -> None:
    assert error_of({"replicaScheduling": {"replicaDivisionPreference": "Even"}}) == (
        "spec.placement.replicaScheduling.replicaDivisionPreference: 'Even' is not one of Aggregated, Weighted"
    )


def test_static_weight_is_at_least_one() -> None:
    data = {"replicaScheduling": {"weightPreference": {"staticWeightList": [{"targetCluster": {}, "weight": 0}]}}}
    assert error_of(data) == (
        "spec.placement.replicaScheduling.weightPreference.staticWeightList[0].weight: 0 is less than 1"
    )


def test_static_weight_is_required() -> None:
    data = {"replicaScheduling": {"weightPreference": {"staticWeightList": [{"targetCluster": {}}]}}}
    assert error_of(data) == "spec.placement.replicaScheduling.weightPreference.staticWeightList[0].weight: is required"


def test_static_weight_needs_target_cluster() -> None:
    data = {"replicaScheduling": {"weightPreference": {"staticWeightList": [{"weight": 1}]}}}
    assert error_of(data) == (
        "spec.placement.replicaScheduling.weightPreference.staticWeightList[0].targetCluster: is required"
    )


def test_dynamic_weight_only_knows_available_replicas() -> None:
    data = {"replicaScheduling": {"weightPreference": {"dynamicWeight": "Capacity"}}}
    assert error_of(data) == (
        "spec.placement.replicaScheduling.weightPreference.dynamicWeight: 'Capacity' is not one of AvailableReplicas"
    )


def test_cluster_names_must_be_strings() -> None:
    assert error_of({"clusterAffinity": {"clusterNames": ["m1", 2]}}) == (
        "spec.placement.clusterAffinity.clusterNames[1]: expected a string, got 2"
    )


# --- the annotation JSON -----------------------------------------------------------------------------------

FULL: dict[str, Any] = {
    "clusterAffinities": [
        {
            "affinityName": "primary",
            "labelSelector": {"matchLabels": {"env": "prod"}, "matchExpressions": [expression("tier", "Exists")]},
            "fieldSelector": {"matchExpressions": [expression("region", "In", "eu")]},
            "clusterNames": ["m1"],
            "exclude": ["m2"],
            "overflowAffinities": [{"affinityName": "burst", "clusterNames": ["m3"]}],
        }
    ],
    "clusterTolerations": [{"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule",
                            "tolerationSeconds": 30}],
    "spreadConstraints": [{"spreadByField": "cluster", "maxGroups": 2, "minGroups": 1}],
    "replicaScheduling": {
        "replicaSchedulingType": "Divided",
        "replicaDivisionPreference": "Weighted",
        "weightPreference": {"staticWeightList": [{"targetCluster": {"clusterNames": ["m1"]}, "weight": 2}]},
    },
}


def test_defaulted_placement_writes_back_what_it_read() -> None:
    assert parse(FULL).to_dict() == FULL


def test_defaults_appear_in_written_form() -> None:
    written = parse({"spreadConstraints": [{}], "replicaScheduling": {}}).to_dict()
    assert written == {
        "spreadConstraints": [{"spreadByField": "cluster", "minGroups": 1}],
        "replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted"},
    }


def test_written_form_parses_back_to_same_placement() -> None:
    placement = parse(FULL)
    assert parse_placement(Fields(placement.to_dict(), "annotation")) == placement


def test_empty_placement_writes_empty_object() -> None:
    assert parse({}).to_dict() == {}

"""The matching rules of label selectors (Karmada's pkg/util/selector.go: ClusterMatches, through
k8s.io/apimachinery's labels.Requirement): Gt/Lt parse integers as Go's strconv.ParseInt does."""

from __future__ import annotations

import pytest

from binding_scheduler.algorithm.affinity import cluster_matches
from binding_scheduler.model import Requirement
from binding_scheduler.model.fields import Fields
from binding_scheduler.model.placement import parse_cluster_affinity, parse_placement
from binding_scheduler.model.selectors import NODE_SELECTOR_OPERATORS, parse_requirement
from testsupport.builders import make_cluster


@pytest.mark.parametrize("label", ["1_000", " 7", "7 ", "\u0667", "99999999999999999999", "-99999999999999999999"])
def test_gt_and_lt_do_not_match_value_go_cannot_parse_as_int64(label: str) -> None:
    # Python's int() reads "1_000" as 1000 (and " 7", "\u0667" as 7); Go's ParseInt(s, 10, 64) rejects them,
    # as it rejects values out of the int64 range, and an unparsable label value never matches Gt or Lt.
    assert not Requirement("size", "Gt", ("5",)).matches({"size": label})
    assert not Requirement("size", "Lt", ("5",)).matches({"size": label})


@pytest.mark.parametrize(("label", "gt_five"), [("+6", True), ("-6", False), ("9223372036854775807", True)])
def test_gt_and_lt_take_sign_and_whole_int64_range(label: str, gt_five: bool) -> None:
    assert Requirement("size", "Gt", ("5",)).matches({"size": label}) is gt_five


@pytest.mark.parametrize("value", ["1_0", " 1", "9223372036854775808"])
def test_gt_value_go_cannot_parse_matches_nothing(value: str) -> None:
    data = {"key": "region", "operator": "Gt", "values": [value]}
    parsed = parse_requirement(Fields(data, "e"), NODE_SELECTOR_OPERATORS)
    assert not parsed.valid
    assert not parsed.matches({"region": "99"})


def test_gt_selector_on_underscored_region_misses() -> None:
    affinity = parse_cluster_affinity(
        Fields({"fieldSelector": {"matchExpressions": [{"key": "region", "operator": "Gt", "values": ["5"]}]}}, "a")
    )
    assert cluster_matches(make_cluster("m1", region="10"), affinity)
    assert not cluster_matches(make_cluster("m2", region="1_0"), affinity)


def test_workload_affinity_placement_is_hashable() -> None:
    workload = {"affinity": {"groupByLabelKey": "app"}, "antiAffinity": {"groupByLabelKey": "tier"}}
    first = parse_placement(Fields({"workloadAffinity": workload}, "p"))
    second = parse_placement(Fields({"workloadAffinity": dict(reversed(workload.items()))}, "p"))
    assert first == second
    assert hash(first) == hash(second)

"""The in-tree filter plugins (the Filter tables of Karmada's pkg/scheduler/framework/plugins/*/*_test.go) and
ClusterMatches (Karmada's pkg/util/selector.go).

Each verdict is read from the plugin's whole-fleet `filter_mask`, the only way in-tree filters answer.
"""

from __future__ import annotations

from typing import Any

import pytest

from binding_scheduler.algorithm.affinity import cluster_matches
from binding_scheduler.algorithm.filters import (
    APIEnablement,
    ClusterAffinityFilter,
    ClusterEviction,
    SpreadConstraintFilter,
    TaintToleration,
)
from binding_scheduler.algorithm.plugins import AttemptContext
from binding_scheduler.algorithm.registry import build_plugins
from binding_scheduler.model import Binding, Cluster, ClusterAffinity
from binding_scheduler.model.fields import Fields
from binding_scheduler.model.placement import parse_cluster_affinity
from binding_scheduler.scheduling.framework.runner import Framework
from testsupport.builders import (
    expression,
    make_binding,
    make_cluster,
    placement,
    snapshot,
    taint,
    term,
    toleration,
)

Plugin = APIEnablement | TaintToleration | ClusterAffinityFilter | SpreadConstraintFilter | ClusterEviction


def verdict(plugin: Plugin, rb: Binding, cluster: Cluster) -> str | None:
    """The plugin's reason for `cluster` (None: passes), from its verdict over a fleet of that one cluster."""
    ctx = AttemptContext.of(rb, snapshot(cluster))
    mask = plugin.filter_mask(ctx, ctx.snapshot.columns)
    return mask.reason_at(0) if mask.failed[0] else None


# --- APIEnablement (3 rows + already targeted) --------------------------------------------------------------


def test_api_enablement_passes_cluster_serving_kind() -> None:
    assert verdict(APIEnablement(), make_binding(), make_cluster("m1")) is None


def test_api_enablement_fails_cluster_without_kind() -> None:
    c = make_cluster("m1", apis=[("apps/v1", "StatefulSet")])
    assert verdict(APIEnablement(), make_binding(), c) == "cluster(s) did not have the API resource"


def test_api_enablement_fails_cluster_with_another_group_version() -> None:
    c = make_cluster("m1", apis=[("apps/v1beta1", "Deployment")])
    assert verdict(APIEnablement(), make_binding(), c) == "cluster(s) did not have the API resource"


def test_api_enablement_passes_already_targeted_cluster() -> None:
    c = make_cluster("m1", apis=[])
    assert verdict(APIEnablement(), make_binding(clusters=["m1"]), c) is None


# --- TaintToleration (4 rows + ordering and targeted) ---------------------------------------------------------


def tolerating(*tolerations: dict[str, Any], targets: list[str] | None = None) -> Binding:
    return make_binding(placement=placement(tolerations=tolerations), clusters=targets)


def test_taint_toleration_passes_untainted_cluster() -> None:
    assert verdict(TaintToleration(), tolerating(), make_cluster("m1")) is None


def test_taint_toleration_fails_untolerated_no_schedule_taint() -> None:
    c = make_cluster("m1", taints=[taint("foo", "NoSchedule", "bar")])
    assert verdict(TaintToleration(), tolerating(), c) == "cluster(s) had untolerated taint {foo=bar:NoSchedule}"


def test_taint_toleration_fails_untolerated_no_execute_taint() -> None:
    c = make_cluster("m1", taints=[taint("cluster.karmada.io/unreachable", "NoExecute")])
    assert verdict(TaintToleration(), tolerating(), c) == (
        "cluster(s) had untolerated taint {cluster.karmada.io/unreachable:NoExecute}"
    )


def test_taint_toleration_passes_tolerated_no_execute_taint() -> None:
    c = make_cluster("m1", taints=[taint("cluster.karmada.io/unreachable", "NoExecute")])
    tolerated = tolerating(toleration("cluster.karmada.io/unreachable", "Exists", effect="NoExecute"))
    assert verdict(TaintToleration(), tolerated, c) is None


def test_taint_toleration_without_placement_tolerates_nothing() -> None:
    c = make_cluster("m1", taints=[taint("foo", "NoSchedule", "bar")])
    assert verdict(TaintToleration(), make_binding(), c) == "cluster(s) had untolerated taint {foo=bar:NoSchedule}"


def test_taint_toleration_passes_tolerated_taint() -> None:
    c = make_cluster("m1", taints=[taint("foo", "NoSchedule", "bar")])
    assert verdict(TaintToleration(), tolerating(toleration("foo", "Equal", "bar", "NoSchedule")), c) is None


def test_taint_toleration_ignores_prefer_no_schedule() -> None:
    c = make_cluster("m1", taints=[taint("foo", "PreferNoSchedule")])
    assert verdict(TaintToleration(), tolerating(), c) is None


def test_taint_toleration_reports_first_untolerated_hard_taint() -> None:
    c = make_cluster("m1", taints=[taint("a", "PreferNoSchedule"), taint("b", "NoExecute"), taint("c")])
    assert verdict(TaintToleration(), tolerating(toleration("b", "Exists")), c) == (
        "cluster(s) had untolerated taint {c:NoSchedule}"
    )


def test_empty_key_exists_tolerates_all() -> None:
    c = make_cluster("m1", taints=[taint("cluster.karmada.io/not-ready", "NoExecute"), taint("x", value="y")])
    assert verdict(TaintToleration(), tolerating(toleration(operator="Exists")), c) is None


def test_taint_toleration_passes_already_targeted_cluster() -> None:
    c = make_cluster("m1", taints=[taint("cluster.karmada.io/unreachable", "NoExecute")])
    assert verdict(TaintToleration(), tolerating(targets=["m1"]), c) is None


# --- ClusterAffinity (4 rows + terms and overflow) ---------------------------------------------------------


def with_affinity(affinity: dict[str, Any]) -> Binding:
    return make_binding(placement=placement(affinity=affinity))


def test_cluster_affinity_scores_every_cluster_zero() -> None:
    ctx = AttemptContext.of(with_affinity({"clusterNames": ["m1"]}), snapshot("m1", "m2"))
    assert [ClusterAffinityFilter().score(ctx, c) for c in ctx.snapshot.clusters] == [0, 0]
    assert ClusterAffinityFilter().score_many(ctx, ctx.snapshot.clusters) == {}


def test_bulk_affinity_keeps_each_bindings_apart() -> None:
    fleet = snapshot("m1", "m2")
    plugin = ClusterAffinityFilter()
    first = plugin.filter_mask(AttemptContext.of(with_affinity({"clusterNames": ["m1"]}), fleet), fleet.columns)
    second = plugin.filter_mask(AttemptContext.of(with_affinity({"clusterNames": ["m2"]}), fleet), fleet.columns)
    assert (first.failed.tolist(), second.failed.tolist()) == ([False, True], [True, False])


def test_cluster_affinity_passes_listed_cluster() -> None:
    assert verdict(ClusterAffinityFilter(), with_affinity({"clusterNames": ["m1"]}), make_cluster("m1")) is None


def test_cluster_affinity_fails_unlisted_cluster() -> None:
    assert verdict(ClusterAffinityFilter(), with_affinity({"clusterNames": ["m2"]}), make_cluster("m1")) == (
        "cluster(s) did not match the placement cluster affinity constraint"
    )


def test_cluster_affinity_fails_excluded_cluster() -> None:
    assert verdict(ClusterAffinityFilter(), with_affinity({"exclude": ["m1"]}), make_cluster("m1")) == (
        "cluster(s) did not match the placement cluster affinity constraint"
    )


def test_cluster_affinity_without_affinity_passes() -> None:
    assert verdict(ClusterAffinityFilter(), make_binding(placement=placement()), make_cluster("m1")) is None


def test_cluster_affinity_uses_observed_term() -> None:
    rb = make_binding(placement=placement(affinities=[term("a", "m1"), term("b", "m2")]), observed_affinity="b")
    assert verdict(ClusterAffinityFilter(), rb, make_cluster("m2")) is None
    assert verdict(ClusterAffinityFilter(), rb, make_cluster("m1")) is not None


def test_cluster_affinity_passes_when_observed_term_is_unknown() -> None:
    rb = make_binding(placement=placement(affinities=[term("a", "m1")]), observed_affinity="gone")
    assert verdict(ClusterAffinityFilter(), rb, make_cluster("m9")) is None


def test_overflow_affinities_count_for_workloads() -> None:
    terms = [term("a", "m1", overflow=[{"affinityName": "o", "clusterNames": ["m2"]}])]
    rb = make_binding(replicas=2, placement=placement(affinities=terms), observed_affinity="a")
    assert verdict(ClusterAffinityFilter(), rb, make_cluster("m2")) is None


def test_overflow_affinities_do_not_count_for_non_workloads() -> None:
    terms = [term("a", "m1", overflow=[{"affinityName": "o", "clusterNames": ["m2"]}])]
    rb = make_binding(replicas=0, placement=placement(affinities=terms), observed_affinity="a")
    assert verdict(ClusterAffinityFilter(), rb, make_cluster("m2")) is not None


def test_cluster_affinity_does_not_spare_targeted_clusters() -> None:
    rb = make_binding(placement=placement(affinity={"clusterNames": ["m2"]}), clusters=["m1"])
    assert verdict(ClusterAffinityFilter(), rb, make_cluster("m1")) is not None


# --- SpreadConstraint (7 rows) ------------------------------------------------------------------------------


def spreading(*fields: str) -> Binding:
    return make_binding(placement=placement(spread=[{"spreadByField": f} for f in fields]))


@pytest.mark.parametrize(
    ("fields", "cluster_topology", "reason"),
    [
        (("cluster",), {}, None),
        (("provider",), {"provider": "aws"}, None),
        (("provider",), {}, "cluster(s) did not have provider property"),
        (("region",), {"region": "eu"}, None),
        (("region",), {"provider": "aws"}, "cluster(s) did not have region property"),
        (("zone",), {"zones": ["eu-1"]}, None),
        (("zone",), {"region": "eu"}, "cluster(s) did not have zones property"),
    ],
)
def test_spread_constraint(fields: tuple[str, ...], cluster_topology: dict[str, Any], reason: str | None) -> None:
    assert verdict(SpreadConstraintFilter(), spreading(*fields), make_cluster("m1", **cluster_topology)) == reason


def test_spread_by_label_needs_nothing_of_cluster() -> None:
    rb = make_binding(placement=placement(spread=[{"spreadByLabel": "team"}]))
    assert verdict(SpreadConstraintFilter(), rb, make_cluster("m1")) is None


def test_spread_checks_later_region_constraint() -> None:
    assert verdict(SpreadConstraintFilter(), spreading("cluster", "region"), make_cluster("m1")) == (
        "cluster(s) did not have region property"
    )


def test_spread_reports_first_missing_property() -> None:
    assert verdict(SpreadConstraintFilter(), spreading("zone", "region"), make_cluster("m1")) == (
        "cluster(s) did not have zones property"
    )


# --- ClusterEviction (3 rows) ----------------------------------------------------------------------------


def test_cluster_eviction_passes_without_eviction_tasks() -> None:
    assert verdict(ClusterEviction(), make_binding(), make_cluster("m1")) is None


def test_cluster_eviction_fails_cluster_being_evicted_from() -> None:
    assert verdict(ClusterEviction(), make_binding(evicting=["m1"]), make_cluster("m1")) == (
        "cluster(s) is in the process of eviction"
    )


def test_cluster_eviction_passes_other_clusters() -> None:
    assert verdict(ClusterEviction(), make_binding(evicting=["m2"]), make_cluster("m1")) is None


def test_cluster_eviction_fails_even_already_targeted_cluster() -> None:
    rb = make_binding(evicting=["m1"], clusters=["m1"])
    assert verdict(ClusterEviction(), rb, make_cluster("m1")) == "cluster(s) is in the process of eviction"


# --- the fixed filter order: the first failing plugin names the reason ----------------------------------------


def test_filters_run_in_fixed_order_and_stop_at_first_failure() -> None:
    rb = make_binding(placement=placement(affinity={"clusterNames": ["ok"]}, spread=[{"spreadByField": "region"}]),
                      evicting=["all-wrong", "evicted"])
    clusters = [
        make_cluster("all-wrong", apis=[], taints=[taint("t")]),
        make_cluster("tainted", taints=[taint("t")]),
        make_cluster("elsewhere", region="eu"),
        make_cluster("ok"),
        make_cluster("evicted", region="eu"),
    ]
    plugins = build_plugins()
    assert [p.name for p in plugins.filters] == [
        "APIEnablement", "TaintToleration", "ClusterAffinity", "SpreadConstraint", "ClusterEviction",
    ]
    feasible, diagnosis = Framework(plugins).filter_clusters(AttemptContext.of(rb, snapshot(*clusters)))
    assert feasible.tolist() == []
    assert diagnosis == {
        "all-wrong": "cluster(s) did not have the API resource",
        "tainted": "cluster(s) had untolerated taint {t:NoSchedule}",
        "elsewhere": "cluster(s) did not match the placement cluster affinity constraint",
        "ok": "cluster(s) did not have region property",
        "evicted": "cluster(s) did not match the placement cluster affinity constraint",
    }


# --- ClusterMatches ---------------------------------------------------------------------------------------------


def affinity(data: dict[str, Any]) -> ClusterAffinity:
    return parse_cluster_affinity(Fields(data, "a"))


def field_selector(*expressions: dict[str, Any]) -> ClusterAffinity:
    return affinity({"fieldSelector": {"matchExpressions": list(expressions)}})


EU = make_cluster("m1", labels={"env": "prod"}, provider="aws", region="eu", zones=["eu-1", "eu-2"])
BARE = make_cluster("m2")


@pytest.mark.parametrize(
    ("data", "cluster", "matches"),
    [
        ({}, EU, True),
        ({"exclude": ["m1"], "clusterNames": ["m1"]}, EU, False),
        ({"clusterNames": ["m1", "m3"]}, EU, True),
        ({"clusterNames": ["m3"]}, EU, False),
        ({"labelSelector": {"matchLabels": {"env": "prod"}}}, EU, True),
        ({"labelSelector": {"matchLabels": {"env": "prod"}}}, BARE, False),
        ({"labelSelector": {"matchLabels": {"env": "prod"}}, "clusterNames": ["m9"]}, EU, False),
        ({"labelSelector": {"matchExpressions": [expression("env", "NotIn", "dev")]}}, BARE, True),
    ],
)
def test_cluster_matches(data: dict[str, Any], cluster: Cluster, matches: bool) -> None:
    assert cluster_matches(cluster, affinity(data)) is matches


@pytest.mark.parametrize(
    ("expression_", "cluster", "matches"),
    [
        (expression("zone", "In", "eu-2", "us-1"), EU, True),
        (expression("zone", "In", "us-1"), EU, False),
        (expression("zone", "NotIn", "us-1"), EU, True),
        (expression("zone", "NotIn", "eu-1"), EU, False),
        (expression("zone", "NotIn", "eu-1"), BARE, True),
        (expression("zone", "Exists"), EU, True),
        (expression("zone", "Exists"), BARE, False),
        (expression("zone", "DoesNotExist"), BARE, True),
        (expression("zone", "DoesNotExist"), EU, False),
        (expression("zone", "Gt", "1"), EU, False),
        (expression("provider", "In", "aws"), EU, True),
        (expression("provider", "In", "aws"), BARE, False),
        (expression("region", "NotIn", "eu"), EU, False),
        (expression("region", "NotIn", "eu"), BARE, True),
        (expression("region", "Exists"), BARE, False),
        (expression("provider", "DoesNotExist"), BARE, True),
        (expression("env", "Exists"), EU, False),
    ],
)
def test_field_selector(expression_: dict[str, Any], cluster: Cluster, matches: bool) -> None:
    assert cluster_matches(cluster, field_selector(expression_)) is matches


def test_every_field_selector_expression_must_hold() -> None:
    both = field_selector(expression("region", "In", "eu"), expression("zone", "In", "us-1"))
    assert not cluster_matches(EU, both)

"""One scheduling attempt end to end (Karmada's pkg/scheduler/core/generic_scheduler.go: Schedule;
Test_attachZeroReplicasCluster): filter, score, estimate with the general estimator, select, assign."""

from __future__ import annotations

from typing import Any

import pytest

from binding_scheduler.algorithm.errors import FitError
from binding_scheduler.algorithm.plugins import AttemptContext
from binding_scheduler.algorithm.registry import build_plugins
from binding_scheduler.algorithm.schedule import ScheduleOptions
from binding_scheduler.model import Binding, Cluster, TargetCluster
from binding_scheduler.scheduling.framework.record import AttemptRecorder
from testsupport.builders import AGGREGATED, DUPLICATED, make_binding, make_cluster, placement, schedule, snapshot

CAPACITY = {"cpu": "4", "memory": "16Gi", "pods": "110"}


def roomy(name: str, **kwargs: Any) -> Cluster:
    return make_cluster(name, allocatable=CAPACITY, **kwargs)


def result_of(
    rb: Binding, *clusters: Cluster, plugins: list[str] | None = None, empty: bool = False
) -> set[TargetCluster]:
    result = schedule(rb, snapshot(*clusters), build_plugins(plugins or ["*"]),
                      options=ScheduleOptions(enable_empty_workload_propagation=empty))
    return set(result)


def fit_error(rb: Binding, *clusters: Cluster, extra: list[object] | None = None) -> str:
    with pytest.raises(FitError) as caught:
        schedule(rb, snapshot(*clusters), build_plugins(extra=extra or []))
    return str(caught.value)


# --- the filter step and the FitError ---------------------------------------------------------------------


def test_reference_fit_error_example() -> None:
    rb = make_binding(placement=placement(affinity={"clusterNames": ["m9"]}))
    clusters = [make_cluster("m1", apis=[]), make_cluster("m2"), make_cluster("m3")]
    assert fit_error(rb, *clusters) == (
        "0/3 clusters are available: 1 cluster(s) did not have the API resource, "
        "2 cluster(s) did not match the placement cluster affinity constraint."
    )


def test_deleting_clusters_are_skipped_but_counted() -> None:
    rb = make_binding(placement=placement())
    assert fit_error(rb, make_cluster("m1", deleting=True), make_cluster("m2", apis=[])) == (
        "0/2 clusters are available: 1 cluster(s) did not have the API resource."
    )


def test_only_deleting_clusters_means_no_cluster_exists() -> None:
    rb = make_binding(placement=placement())
    assert fit_error(rb, make_cluster("m1", deleting=True), make_cluster("m2", deleting=True)) == (
        "0/2 clusters are available: no cluster exists."
    )


def test_no_clusters_at_all() -> None:
    assert fit_error(make_binding(placement=placement())) == "0/0 clusters are available: no cluster exists."


def test_deleting_cluster_is_never_chosen() -> None:
    rb = make_binding(placement=placement())
    assert result_of(rb, make_cluster("m1", deleting=True), make_cluster("m2")) == {TargetCluster("m2")}


def test_feasible_clusters_keep_snapshot_order_and_carry_scores() -> None:
    rb = make_binding(placement=placement(), clusters=["m3"])
    recorder = AttemptRecorder()
    schedule(rb, snapshot("m3", "m1", "m2"), build_plugins(), hooks=[recorder])
    candidates = recorder.records[0].candidates
    assert candidates is not None
    assert [(d.name, d.score) for d in candidates.details] == [("m3", 100), ("m1", 0), ("m2", 0)]


class OnlyEurope:
    """A plugin written in Python: just a name and a filter."""

    name = "OnlyEurope"

    def filter(self, ctx: AttemptContext, cluster: Cluster) -> str | None:
        return None if cluster.region.startswith("eu-") else "cluster(s) are outside Europe"


def test_python_plugin_filters_and_names_reason() -> None:
    rb = make_binding(placement=placement())
    assert fit_error(rb, make_cluster("m1", region="us-1"), extra=[OnlyEurope()]) == (
        "0/1 clusters are available: 1 cluster(s) are outside Europe."
    )


def test_python_plugin_runs_after_in_tree_filters() -> None:
    rb = make_binding(placement=placement())
    assert fit_error(rb, make_cluster("m1", region="us-1", apis=[]), extra=[OnlyEurope()]) == (
        "0/1 clusters are available: 1 cluster(s) did not have the API resource."
    )


def test_no_plugins_means_no_filters() -> None:
    rb = make_binding(placement=placement(affinity={"clusterNames": ["m9"]}))
    assert result_of(rb, make_cluster("m1", apis=[]), plugins=["-ClusterLocality"]) == {TargetCluster("m1")}


# --- what is assigned ------------------------------------------------------------------------------------------


def test_non_workload_goes_everywhere_feasible() -> None:
    rb = make_binding(placement=placement(affinity={"clusterNames": ["m1", "m2"]}))
    assert result_of(rb, make_cluster("m1"), make_cluster("m2"), make_cluster("m3")) == {
        TargetCluster("m1"), TargetCluster("m2"),
    }


def test_duplicated_gives_every_cluster_all_replicas() -> None:
    rb = make_binding(replicas=2, requests={"cpu": "1"}, placement=placement(scheduling=DUPLICATED))
    assert result_of(rb, roomy("m1"), roomy("m2")) == {TargetCluster("m1", 2), TargetCluster("m2", 2)}


def test_aggregated_uses_as_few_clusters_as_possible() -> None:
    rb = make_binding(replicas=1, requests={"cpu": "1"}, placement=placement(scheduling=AGGREGATED))
    assert len(result_of(rb, roomy("m1"), roomy("m2"), roomy("m3"))) == 1


def test_empty_propagation_lists_selected() -> None:
    rb = make_binding(replicas=1, requests={"cpu": "1"}, placement=placement(scheduling=AGGREGATED))
    result = result_of(rb, roomy("m1"), roomy("m2"), roomy("m3"), empty=True)
    assert sorted(t.replicas for t in result) == [0, 0, 1]
    assert {t.name for t in result} == {"m1", "m2", "m3"}


def test_workload_scaled_to_zero_is_removed_everywhere() -> None:
    rb = make_binding(replicas=0, requests={"cpu": "1"}, placement=placement(scheduling=AGGREGATED))
    assert result_of(rb, roomy("m1"), roomy("m2")) == set()


def test_zero_workload_listed_empty() -> None:
    rb = make_binding(replicas=0, requests={"cpu": "1"}, placement=placement(scheduling=AGGREGATED))
    assert result_of(rb, roomy("m1"), roomy("m2"), empty=True) == {TargetCluster("m1"), TargetCluster("m2")}


def test_general_estimator_limits_divided_workload() -> None:
    rb = make_binding(replicas=6, requests={"cpu": "1"}, placement=placement(scheduling=AGGREGATED))
    small = make_cluster("small", allocatable={"cpu": "2", "pods": "110"})
    result = result_of(rb, roomy("big"), small)
    assert sum(t.replicas for t in result) == 6
    assert all(t.replicas <= 2 for t in result if t.name == "small")


# --- selectors Kubernetes cannot build (found by the differential tests against Karmada v1.18.2) -------------


@pytest.mark.parametrize(
    "affinity",
    [
        {"fieldSelector": {"matchExpressions": [{"key": "", "operator": "Exists"}]}},
        {"fieldSelector": {"matchExpressions": [{"key": "region", "operator": "Gt"}]}},
        {"fieldSelector": {"matchExpressions": [{"key": "region", "operator": "NotIn", "values": ["eu west"]}]}},
        {"labelSelector": {"matchExpressions": [{"key": "/env", "operator": "DoesNotExist"}]}},
        {"labelSelector": {"matchExpressions": [{"key": "env", "operator": "NotIn", "values": []}]}},
        {"labelSelector": {"matchExpressions": [{"key": "env", "operator": "Gt", "values": ["1"]}]}},
    ],
)
def test_affinity_kubernetes_cannot_build_fits_no_cluster(affinity: dict[str, Any]) -> None:
    # Karmada answers NoClusterFit (its selector conversion fails, ClusterMatches is false): we used to refuse
    # the binding instead, and NotIn/DoesNotExist would have matched every cluster.
    rb = make_binding(replicas=1, placement=placement(affinity=affinity))
    assert fit_error(rb, roomy("m1", region="eu-west-1"), roomy("m2")) == (
        "0/2 clusters are available: 2 cluster(s) did not match the placement cluster affinity constraint."
    )


def test_zone_expression_is_not_checked_as_selector() -> None:
    # Karmada matches `zone` against spec.zones itself (matchZones), without building a requirement: Exists
    # ignores its values, an operator it does not know matches nothing.
    exists = {"fieldSelector": {"matchExpressions": [{"key": "zone", "operator": "Exists", "values": ["x"]}]}}
    greater = {"fieldSelector": {"matchExpressions": [{"key": "zone", "operator": "Gt", "values": ["1"]}]}}
    zoned = roomy("m1", zones=["z1"])
    assert result_of(make_binding(replicas=1, placement=placement(affinity=exists)), zoned) == {TargetCluster("m1", 1)}
    with pytest.raises(FitError):
        schedule(make_binding(replicas=1, placement=placement(affinity=greater)), snapshot(zoned), build_plugins())

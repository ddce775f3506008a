"""Score plugins (Karmada's TestClusterLocality_Score table): locality gives 100 to current targets."""

from __future__ import annotations

import numpy as np

from binding_scheduler.algorithm.errors import SchedulingError
from binding_scheduler.algorithm.filters import ClusterAffinityFilter
from binding_scheduler.algorithm.plugins import AttemptContext
from binding_scheduler.algorithm.registry import build_plugins
from binding_scheduler.algorithm.scores import ClusterLocality
from binding_scheduler.model import Binding, Cluster
from binding_scheduler.scheduling.framework.runner import Framework
from testsupport.builders import make_binding, make_cluster, placement, snapshot

M1, M2 = make_cluster("m1"), make_cluster("m2")


def context(rb: Binding) -> AttemptContext:
    return AttemptContext.of(rb, snapshot(M1, M2))


def locality(rb: Binding, cluster: Cluster) -> int:
    """The per-cluster score, checked against the batch and the whole-fleet answers for that cluster alone."""
    ctx = context(rb)
    one = ClusterLocality().score(ctx, cluster)
    assert ClusterLocality().score_many(ctx, [cluster]).get(cluster.name, 0) == one
    fleet = ctx.snapshot.columns
    alone = np.array([fleet.index[cluster.name]], dtype=np.intp)
    assert ClusterLocality().score_fleet(ctx, fleet, alone).get(cluster.name, 0) == one
    return one


def test_locality_is_zero_without_previous_result() -> None:
    assert locality(make_binding(), M1) == 0


def test_locality_is_100_for_targeted_cluster() -> None:
    assert locality(make_binding(clusters={"m1": 2}), M1) == 100


def test_locality_is_zero_for_cluster_not_targeted() -> None:
    assert locality(make_binding(clusters={"m1": 2}), M2) == 0


def test_cluster_affinity_always_scores_zero() -> None:
    rb = make_binding(placement=placement(affinity={"clusterNames": ["m1"]}), clusters=["m1"])
    assert ClusterAffinityFilter().score(context(rb), M1) == 0


def test_scores_are_summed_over_plugins() -> None:
    class Bonus:
        name = "Bonus"

        def score(self, ctx: AttemptContext, cluster: Cluster) -> int:
            return 7 if cluster.name == "m1" else 0

    rb = make_binding(clusters=["m1", "m2"])
    assert Framework(build_plugins(extra=[Bonus()])).score_clusters(context(rb), np.arange(2)) == {"m1": 107, "m2": 100}


def test_failing_score_plugin_names_itself() -> None:
    class Broken:
        name = "Broken"

        def score(self, ctx: AttemptContext, cluster: Cluster) -> int:
            raise RuntimeError("boom")

    try:
        Framework(build_plugins(extra=[Broken()])).score_clusters(context(make_binding()), np.arange(1))
    except SchedulingError as error:
        assert str(error) == 'failed to prioritize clusters: plugin "Broken" failed with: boom'
    else:
        raise AssertionError("expected a SchedulingError")


def test_locality_over_fleet_scores_only_feasible_targets() -> None:
    clusters = [make_cluster(f"m{i}") for i in range(6)]
    rb = make_binding(clusters={"m1": 1, "m4": 2, "gone": 3})
    ctx = AttemptContext.of(rb, snapshot(*clusters))
    feasible = np.array([0, 1, 2, 5], dtype=np.intp)
    assert ClusterLocality().score_fleet(ctx, ctx.snapshot.columns, feasible) == {"m1": 100}

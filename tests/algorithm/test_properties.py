"""Properties of the whole attempt, over random fleets and Divided bindings (hypothesis)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from binding_scheduler.algorithm.errors import SchedulingError
from binding_scheduler.algorithm.registry import build_plugins
from binding_scheduler.algorithm.schedule import schedule
from binding_scheduler.algorithm.snapshot import Snapshot
from binding_scheduler.model import Binding, Cluster, TargetCluster, parse_binding, parse_cluster

PLUGINS = build_plugins()
REGIONS = ("r1", "r2", "r3")


def make_cluster(index: int, pods: int, region: str) -> Cluster:
    return parse_cluster(
        {
            "kind": "Cluster",
            "metadata": {"name": f"m{index}", "labels": {"group": "a" if index % 2 else "b"}},
            "spec": {"syncMode": "Push", "region": region},
            "status": {
                "apiEnablements": [{"groupVersion": "apps/v1", "resources": [{"name": "d", "kind": "Deployment"}]}],
                "resourceSummary": {"allocatable": {"pods": str(pods)}},
            },
        }
    )


PREFERENCES: list[dict[str, Any]] = [
    {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"},
    {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted"},
    {
        "replicaSchedulingType": "Divided",
        "replicaDivisionPreference": "Weighted",
        "weightPreference": {"dynamicWeight": "AvailableReplicas"},
    },
    {
        "replicaSchedulingType": "Divided",
        "replicaDivisionPreference": "Weighted",
        "weightPreference": {
            "staticWeightList": [
                {"targetCluster": {"labelSelector": {"matchLabels": {"group": "a"}}}, "weight": 3},
                {"targetCluster": {"labelSelector": {"matchLabels": {"group": "b"}}}, "weight": 1},
            ]
        },
    },
]

fleets = st.lists(
    st.tuples(st.integers(min_value=0, max_value=60), st.sampled_from(REGIONS)), min_size=1, max_size=12
).map(lambda specs: [make_cluster(i, pods, region) for i, (pods, region) in enumerate(specs)])


@st.composite
def bindings(draw: st.DrawFn) -> Binding:
    previous = draw(
        st.lists(st.tuples(st.integers(0, 11), st.integers(1, 20)), max_size=4, unique_by=lambda p: p[0])
    )
    placement: dict[str, Any] = {"replicaScheduling": draw(st.sampled_from(PREFERENCES))}
    if draw(st.booleans()):
        placement["spreadConstraints"] = [{"spreadByField": "cluster", "maxGroups": draw(st.integers(1, 6))}]
    return parse_binding(
        {
            "kind": "ResourceBinding",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {
                "resource": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": draw(st.uuids()).hex},
                "replicas": draw(st.integers(1, 200)),
                "clusters": [{"name": f"m{i}", "replicas": r} for i, r in previous],
                "placement": placement,
            },
        }
    )


def attempt(binding: Binding, clusters: list[Cluster]) -> list[TargetCluster] | str:
    try:
        return schedule(binding, Snapshot(clusters), PLUGINS)
    except SchedulingError as error:
        return f"{type(error).__name__}: {error}"


@settings(max_examples=300, deadline=None)
@given(bindings(), fleets)
def test_divided_replicas_sum_to_spec_replicas_with_no_empty_entries(binding: Binding, clusters: list[Cluster]) -> None:
    result = attempt(binding, clusters)
    if isinstance(result, str):
        return
    assert sum(t.replicas for t in result) == binding.replicas
    assert all(t.replicas > 0 for t in result)
    assert len({t.name for t in result}) == len(result)
    assert {t.name for t in result} <= {c.name for c in clusters}


@settings(max_examples=200, deadline=None)
@given(bindings(), fleets)
def test_the_same_input_always_gives_the_same_output(binding: Binding, clusters: list[Cluster]) -> None:
    assert attempt(binding, clusters) == attempt(binding, list(clusters))


@settings(max_examples=200, deadline=None)
@given(bindings(), fleets, st.randoms(use_true_random=False))
def test_the_order_clusters_are_listed_in_does_not_change_the_decision(
    binding: Binding, clusters: list[Cluster], random: Any
) -> None:
    shuffled = list(clusters)
    random.shuffle(shuffled)
    first, second = attempt(binding, clusters), attempt(binding, shuffled)
    if isinstance(first, str) or isinstance(second, str):
        assert first == second
    else:
        assert sorted(first, key=lambda t: t.name) == sorted(second, key=lambda t: t.name)

"""Virtual nodes from resource models and first-fit placement (Karmada's pkg/estimator/client/general.go:
buildModelNodes and pkg/estimator/scheduling_simulator_components.go: SchedulingSimulator.SimulateScheduling;
TestSchedulingSimulator_SimulateSchedulingFF). MatchNode has no counterpart: virtual nodes carry no labels or taints, so
every node matches every pod, and node claims do not take part."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from binding_scheduler.algorithm.resource_models import (
    MODEL_NODE_PODS,
    Demand,
    FirstFit,
    ModelError,
    NodeGroups,
    is_modelled_resource_name,
    is_scalar_resource_name,
    node_fit,
    node_groups,
    replica_demand,
    total_fit,
)
from binding_scheduler.model import Cluster, parse_cluster, parse_quantity


def cluster(models: list[dict[str, Any]], modelings: list[tuple[int, int]], *, summary: bool = True) -> Cluster:
    status: dict[str, Any] = {}
    if summary:
        status["resourceSummary"] = {"allocatableModelings": [{"grade": g, "count": c} for g, c in modelings]}
    return parse_cluster({"metadata": {"name": "m"}, "spec": {"resourceModels": models}, "status": status})


def grade(number: int, **minimums: str) -> dict[str, Any]:
    ranges = [{"name": k.replace("_", "-"), "min": v, "max": "999999"} for k, v in minimums.items()]
    return {"grade": number, "ranges": ranges}


def cpu_nodes(*groups: tuple[int, int]) -> NodeGroups:
    """(cpu in milli, count) per group, 110 pods each."""
    return tuple(({"cpu": cpu, "pods": MODEL_NODE_PODS}, count) for cpu, count in groups)


CPU_1: Demand = (("cpu", 1000),)
CPU_2: Demand = (("cpu", 2000),)
CPU_3: Demand = (("cpu", 3000),)


# --------------------------------------------------------------------------------------------- resource names


@pytest.mark.parametrize(
    ("name", "scalar"),
    [
        ("nvidia.com/gpu", True),
        ("hugepages-2Mi", True),
        ("attachable-volumes-aws-ebs", True),
        ("kubernetes.io/something", True),
        ("requests.nvidia.com/gpu", False),
        ("cpu", False),
        ("storage", False),
        ("a/b/c", False),
        ("Bad_Domain.com/gpu", False),
    ],
)
def test_scalar_resource_names(name: str, scalar: bool) -> None:
    assert is_scalar_resource_name(name) is scalar


@pytest.mark.parametrize(
    ("name", "modelled"),
    [("cpu", True), ("memory", True), ("ephemeral-storage", True), ("pods", True), ("storage", False)],
)
def test_modelled_resource_names(name: str, modelled: bool) -> None:
    assert is_modelled_resource_name(name) is modelled


# --------------------------------------------------------------------------------------------- demands


def test_demand_counts_milli_cpu_and_whole_units() -> None:
    request = {"cpu": parse_quantity("250m", "cpu"), "memory": parse_quantity("1.5", "memory")}
    assert replica_demand(request) == (("cpu", 250), ("memory", 2))


def test_demand_drops_zero_unmodelled_and_pods_requests() -> None:
    request = {
        "cpu": parse_quantity("0", "cpu"),
        "storage": parse_quantity("1", "storage"),
        "pods": parse_quantity("5", "pods"),
        "nvidia.com/gpu": parse_quantity("1", "gpu"),
    }
    assert replica_demand(request) == (("nvidia.com/gpu", 1),)


def test_node_fit_is_bounded_by_pods_and_every_demanded_resource() -> None:
    capacity = {"cpu": 8000, "memory": 3, "pods": 110}
    assert node_fit(capacity, (("cpu", 1000), ("memory", 1))) == 3
    assert node_fit(capacity, ()) == 110
    assert node_fit(capacity, (("nvidia.com/gpu", 1),)) == 0


# --------------------------------------------------------------------------------------------- node groups


def test_node_groups_follow_ascending_grades() -> None:
    c = cluster([grade(2, cpu="4", memory="8Gi"), grade(0, cpu="1", memory="2Gi")], [(2, 1), (0, 3)])
    assert node_groups(c) == (
        ({"cpu": 1000, "memory": 2 * 2**30, "pods": 110}, 3),
        ({"cpu": 4000, "memory": 8 * 2**30, "pods": 110}, 1),
    )


def test_node_groups_fix_pods_at_110_whatever_model_says() -> None:
    assert node_groups(cluster([grade(0, cpu="1", pods="500")], [(0, 1)])) == (({"cpu": 1000, "pods": 110}, 1),)


def test_node_groups_drop_unmodelled_ranges() -> None:
    assert node_groups(cluster([grade(0, cpu="1", storage="9")], [(0, 1)])) == (({"cpu": 1000, "pods": 110}, 1),)


def test_node_groups_sum_duplicated_counts() -> None:
    assert node_groups(cluster([grade(0, cpu="1")], [(0, 1), (0, 4)])) == (({"cpu": 1000, "pods": 110}, 5),)


def test_node_groups_skip_grades_missing_on_either_side() -> None:
    c = cluster([grade(0, cpu="1"), grade(1, cpu="2")], [(1, 2), (5, 9)])
    assert node_groups(c) == (({"cpu": 2000, "pods": 110}, 2),)


def test_node_groups_reject_negative_count() -> None:
    with pytest.raises(ModelError, match="negative node count for grade 0"):
        node_groups(cluster([grade(0, cpu="1")], [(0, -1)]))


def test_node_groups_reject_missing_models() -> None:
    with pytest.raises(ModelError, match="no resource models defined"):
        node_groups(cluster([], [(0, 1)]))


def test_node_groups_reject_missing_summary() -> None:
    with pytest.raises(ModelError, match="resource summary is nil"):
        node_groups(cluster([grade(0, cpu="1")], [], summary=False))


def test_total_fit_sums_each_node_fit() -> None:
    assert total_fit(cpu_nodes((1000, 3), (4000, 2)), CPU_1) == 11


# --------------------------------------------------------------------------------------------- SimulateSchedulingFF


def test_first_fit_fills_first_node_before_next() -> None:
    sim = FirstFit(cpu_nodes((4000, 2)))
    assert sim.place(CPU_1, 3)
    # node1 has 1 cpu left, node2 4: a 2-cpu pod fits only on node2, twice.
    assert sim.fit(CPU_2) == 2
    assert sim.fit(CPU_1) == 5


def test_first_fit_skips_nodes_too_small_for_pod() -> None:
    sim = FirstFit(cpu_nodes((1000, 2), (4000, 1)))
    assert sim.place(CPU_2, 1)
    assert sim.fit(CPU_1) == 4


def test_first_fit_failure_keeps_pods_it_placed() -> None:
    sim = FirstFit(cpu_nodes((4000, 2)))
    assert not sim.place(CPU_3, 3)
    assert sim.fit(CPU_1) == 2


def test_first_fit_of_no_replicas_succeeds_and_places_nothing() -> None:
    sim = FirstFit(cpu_nodes((4000, 1)))
    assert sim.place(CPU_1, 0)
    assert sim.place(CPU_1, -2)
    assert sim.fit(CPU_1) == 4


def test_first_fit_on_no_nodes_fails() -> None:
    assert not FirstFit(()).place((), 1)


def test_first_fit_respects_pod_limit() -> None:
    sim = FirstFit(cpu_nodes((10**6, 2)))
    assert sim.place((("cpu", 1),), 200)
    assert sim.fit((("cpu", 1),)) == 20


def test_place_set_stops_at_first_component_that_does_not_fit() -> None:
    sim = FirstFit(cpu_nodes((4000, 1)))
    assert not sim.place_set([(CPU_1, 1), (CPU_3, 2), (CPU_1, 1)])
    # The first component took 1 cpu and the second one 3; the third was never tried.
    assert sim.fit(CPU_1) == 0


def test_count_sets_stops_at_upper_bound() -> None:
    sim = FirstFit(cpu_nodes((4000, 10)))
    assert sim.count_sets([(CPU_1, 1)], 7) == 7
    assert sim.fit(CPU_1) == 33


def test_count_sets_counts_whole_sets_only() -> None:
    # 3 nodes of 4 cpu; a set is 3 × 1 cpu + 1 × 2 cpu: two sets, the third one breaks on node3.
    sim = FirstFit(cpu_nodes((4000, 3)))
    assert sim.count_sets([(CPU_1, 3), (CPU_2, 1)], 100) == 2


def test_count_sets_with_empty_set_reaches_upper_bound() -> None:
    assert FirstFit(cpu_nodes((1000, 1))).count_sets([], 9) == 9


# --------------------------------------------------------------------------------------------- against a naive model


def _naive_place(nodes: list[dict[str, int]], demand: Demand, replicas: int) -> bool:
    """One pod at a time, each on the first node where it fits: the definition of first-fit."""
    for _ in range(replicas):
        for node in nodes:
            if node["pods"] >= 1 and all(node.get(n, 0) >= a for n, a in demand):
                node["pods"] -= 1
                for n, a in demand:
                    node[n] = node.get(n, 0) - a
                break
        else:
            return False
    return True


def _naive_count_sets(nodes: list[dict[str, int]], components: list[tuple[Demand, int]], upper: int) -> int:
    placed = 0
    while placed < upper and all(_naive_place(nodes, d, r) for d, r in components):
        placed += 1
    return placed


_demands = st.builds(
    lambda cpu, mem: tuple(x for x in (("cpu", cpu), ("memory", mem)) if x[1] > 0),
    st.integers(0, 5),
    st.integers(0, 5),
)


@settings(max_examples=200, deadline=None)
@given(
    groups=st.lists(st.tuples(st.integers(0, 12), st.integers(0, 12), st.integers(1, 4)), max_size=4),
    assumed=st.lists(st.lists(st.tuples(_demands, st.integers(0, 6)), max_size=3), max_size=3),
    components=st.lists(st.tuples(_demands, st.integers(1, 4)), min_size=1, max_size=3),
    probe=_demands,
)
def test_bulk_first_fit_matches_pod_by_pod_first_fit(
    groups: list[tuple[int, int, int]],
    assumed: list[list[tuple[Demand, int]]],
    components: list[tuple[Demand, int]],
    probe: Demand,
) -> None:
    templates: NodeGroups = tuple(({"cpu": cpu, "memory": mem, "pods": 6}, n) for cpu, mem, n in groups)
    naive = [dict(t) for t, n in templates for _ in range(n)]
    sim = FirstFit(templates)
    for workload in assumed:
        assert sim.place_set(workload) == all(_naive_place(naive, d, r) for d, r in workload)
    assert sim.count_sets(components, 50) == _naive_count_sets(naive, components, 50)
    naive_probe = [dict(node) for node in naive]
    expected = 0
    while _naive_place(naive_probe, probe, 1) and expected < 1000:
        expected += 1
    assert sim.fit(probe) == expected

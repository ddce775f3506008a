"""How many whole sets of a multi-template workload's components a cluster takes (the scenarios of Karmada's
`pkg/estimator/client/general_test.go`), the QUIRK of its units included.

Each test pins one behaviour with an exact answer.
"""

from __future__ import annotations

from binding_scheduler.algorithm.general_estimator import max_available_component_sets, max_available_replicas
from tests.algorithm.general_estimator_builders import cluster, component, grade, request

# ----------------------------------------------------------------- GetMaxAvailableComponentSetsGeneral


def test_sets_no_summary_gives_zero() -> None:
    assert max_available_component_sets(cluster(summary=False), (component("a", 1),)) == 0


def test_sets_no_allowed_pods_gives_zero() -> None:
    c = cluster(allocatable={"pods": "4", "cpu": "10"}, allocated={"pods": "4"})
    assert max_available_component_sets(c, (component("a", 1, cpu="1"),)) == 0


def test_sets_without_pods_per_set_give_allowed_pods() -> None:
    c = cluster(allocatable={"pods": "9"})
    assert max_available_component_sets(c, ()) == 9
    assert max_available_component_sets(c, (component("a", 0, cpu="1"),)) == 9


def test_sets_are_bounded_by_pods_per_set() -> None:
    c = cluster(allocatable={"pods": "10"})
    assert max_available_component_sets(c, (component("a", 2), component("b", 1))) == 3


def test_sets_with_only_zero_requests_give_pod_bound() -> None:
    c = cluster(allocatable={"pods": "10"})
    assert max_available_component_sets(c, (component("a", 2, cpu="0"), component("b", 3, memory="0"))) == 2


def test_sets_are_bounded_by_each_resource_per_set() -> None:
    # One set takes 2 × 1 cpu + 1 × 2 cpu = 4 cpu and 2 × 1Gi + 1 × 4Gi = 6Gi.
    c = cluster(allocatable={"pods": "100", "cpu": "10", "memory": "30Gi"})
    components = (component("a", 2, cpu="1", memory="1Gi"), component("b", 1, cpu="2", memory="4Gi"))
    assert max_available_component_sets(c, components) == 2


def test_sets_subtract_allocated_and_allocating() -> None:
    c = cluster(allocatable={"pods": "100", "cpu": "10"}, allocated={"cpu": "3"}, allocating={"cpu": "1"})
    assert max_available_component_sets(c, (component("a", 2, cpu="1"),)) == 3


def test_sets_resource_absent_from_allocatable_gives_zero() -> None:
    c = cluster(allocatable={"pods": "100", "cpu": "10"})
    assert max_available_component_sets(c, (component("a", 1, cpu="1", nvidia__gpu="1"),)) == 0


def test_sets_exhausted_resource_gives_zero() -> None:
    c = cluster(allocatable={"pods": "100", "cpu": "10"}, allocated={"cpu": "10"})
    assert max_available_component_sets(c, (component("a", 1, cpu="1"),)) == 0


def test_sets_with_consistent_binary_memory() -> None:
    c = cluster(allocatable={"pods": "100", "memory": "16Gi"})
    assert max_available_component_sets(c, (component("a", 2, memory="1Gi"),)) == 8


def test_sets_decimal_request_on_binary_gives_zero() -> None:
    # 500M is read in milli-units (5e11), 16Gi in bytes (1.7e10): no set fits, where 34 really would.
    c = cluster(allocatable={"pods": "100", "memory": "16Gi"})
    assert max_available_component_sets(c, (component("a", 1, memory="500M"),)) == 0
    assert max_available_replicas(c, request(memory="500M")) == 34


def test_sets_binary_request_on_decimal_overstates() -> None:
    # 16G is read in milli-units (1.6e13), 1Gi in bytes (1073741824): 14901 sets, where 14 really fit.
    c = cluster(allocatable={"pods": "100000", "memory": "16G"})
    assert max_available_component_sets(c, (component("a", 1, memory="1Gi"),)) == 14901
    assert max_available_replicas(c, request(memory="1Gi")) == 14


def test_sets_cpu_is_consistent_in_milli_units() -> None:
    c = cluster(allocatable={"pods": "100", "cpu": "4"})
    assert max_available_component_sets(c, (component("a", 3, cpu="250m"),)) == 5


def test_sets_are_bounded_by_whole_sets_on_model_nodes() -> None:
    # The summary allows 10 sets, but one set needs a 4-cpu pod and the model nodes have 2 cpu.
    c = cluster(allocatable={"pods": "100", "cpu": "40"}, models=[grade(0, cpu="2")], modelings=[(0, 10)])
    assert max_available_component_sets(c, (component("big", 1, cpu="4"),)) == 0


def test_sets_first_fit_places_whole_sets_across_nodes() -> None:
    # Three 4-cpu nodes (12 cpu); a set is 3 pods of 1 cpu + 1 pod of 2 cpu (5 cpu); the summary allows 20.
    # Set 1: node1 takes 3 small, node2 the big one. Set 2: node1 1 small, node2 2 small, node3 the big one.
    # Set 3: node3 has 2 cpu for 3 small pods -> no third set, although 2 cpu are still free in total.
    c = cluster(allocatable={"pods": "100", "cpu": "100"}, models=[grade(0, cpu="4")], modelings=[(0, 3)])
    components = (component("small", 3, cpu="1"), component("big", 1, cpu="2"))
    assert max_available_component_sets(c, components) == 2


def test_sets_model_bound_below_summary_bound() -> None:
    # Summary: 100 cpu, sets of 2 × 3 cpu -> 16. Models: four 4-cpu nodes hold one 3-cpu pod each -> 2 sets.
    c = cluster(allocatable={"pods": "100", "cpu": "100"}, models=[grade(0, cpu="4")], modelings=[(0, 4)])
    assert max_available_component_sets(c, (component("a", 2, cpu="3"),)) == 2


def test_sets_model_nodes_hold_110_pods_each() -> None:
    c = cluster(allocatable={"pods": "1000", "cpu": "1000"}, models=[grade(0, cpu="4")], modelings=[(0, 2)])
    assert max_available_component_sets(c, (component("a", 20, cpu="1m"),)) == 11


def test_sets_without_requests_return_pod_bound_before_models() -> None:
    # Step 6 returns podBound directly: the model nodes (220 pods) are not consulted.
    c = cluster(allocatable={"pods": "1000"}, models=[grade(0, cpu="4")], modelings=[(0, 2)])
    assert max_available_component_sets(c, (component("a", 20),)) == 50


def test_sets_broken_models_skip_model_bound() -> None:
    c = cluster(allocatable={"pods": "100", "cpu": "40"}, models=[grade(0, cpu="2")], modelings=[(0, -2)])
    assert max_available_component_sets(c, (component("big", 1, cpu="4"),)) == 10


def test_sets_gate_off_skips_model_bound() -> None:
    c = cluster(allocatable={"pods": "100", "cpu": "40"}, models=[grade(0, cpu="2")], modelings=[(0, 10)])
    assert max_available_component_sets(c, (component("big", 1, cpu="4"),), use_resource_models=False) == 10

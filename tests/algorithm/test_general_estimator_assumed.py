"""Assumed workloads deducted before the general estimator answers, for replicas and for component sets (the
scenarios of Karmada's `pkg/estimator/client/general_test.go`).

Each test pins one behaviour with an exact answer.
"""

from __future__ import annotations

from binding_scheduler.algorithm.general_estimator import (
    estimate_component_sets,
    estimate_replicas,
    max_available_component_sets,
    max_available_replicas,
)
from tests.algorithm.general_estimator_builders import ROOMY, assumed, cluster, component, grade, request

# ----------------------------------------------------------------- DeductAssumedWorkloadsFromSummary


def test_assumed_pods_are_deducted_from_allowed_pods() -> None:
    c = cluster(allocatable={"pods": "10"})
    assert max_available_replicas(c, None, [assumed(component("web", 4))]) == 6


def test_assumed_cpu_is_deducted_in_milli_units() -> None:
    c = cluster(allocatable={"pods": "110", "cpu": "2"})
    workload = assumed(component("web", 3, cpu="500m"))
    assert max_available_replicas(c, request(cpu="250m"), [workload]) == 2


def test_assumed_other_resources_are_deducted_in_whole_units() -> None:
    c = cluster(allocatable={"pods": "110", "memory": "10Gi"})
    workload = assumed(component("web", 2, memory="3Gi"))
    assert max_available_replicas(c, request(memory="1Gi"), [workload]) == 4


def test_assumed_workloads_add_up() -> None:
    c = cluster(allocatable={"pods": "20", "cpu": "10"})
    workloads = [assumed(component("a", 2, cpu="1"), component("b", 1, cpu="2")), assumed(component("c", 3))]
    assert max_available_replicas(c, request(cpu="1"), workloads) == 6
    assert max_available_replicas(c, None, workloads) == 14


def test_assumed_components_without_replicas_are_skipped() -> None:
    c = cluster(allocatable={"pods": "10", "cpu": "4"})
    workload = assumed(component("idle", 0, cpu="4"), component("bad", -3, cpu="4"))
    assert max_available_replicas(c, request(cpu="1"), [workload]) == 4


def test_bare_components_deduct_pods_only() -> None:
    c = cluster(allocatable={"pods": "5", "cpu": "4"})
    assert max_available_replicas(c, request(cpu="1"), [assumed(component("web", 2))]) == 3


def test_assumed_workloads_exhausting_pods_give_zero() -> None:
    c = cluster(allocatable={"pods": "5", "cpu": "40"})
    assert max_available_replicas(c, request(cpu="1"), [assumed(component("web", 5))]) == 0


def test_assumed_workloads_exhausting_resource_give_zero() -> None:
    c = cluster(allocatable={"pods": "50", "cpu": "4"})
    assert max_available_replicas(c, request(cpu="1"), [assumed(component("web", 4, cpu="1"))]) == 0


def test_assumed_workloads_are_placed_first_on_model_nodes() -> None:
    # Two 4-cpu nodes; the assumed 3-cpu pod leaves 1 cpu on the first one.
    c = cluster(allocatable=ROOMY, models=[grade(0, cpu="4")], modelings=[(0, 2)])
    workload = assumed(component("web", 1, cpu="3"))
    assert max_available_replicas(c, request(cpu="2"), [workload]) == 2
    assert max_available_replicas(c, request(cpu="2")) == 4


def test_assumed_workload_that_does_not_fit_keeps_what_it_placed() -> None:
    # The assumed 3-pod component of 3 cpu fits twice (two 4-cpu nodes) and the third fails: the two placed
    # pods still hold their cpu, so a 2-cpu replica fits nowhere.
    c = cluster(allocatable=ROOMY, models=[grade(0, cpu="4")], modelings=[(0, 2)])
    workload = assumed(component("web", 3, cpu="3"))
    assert max_available_replicas(c, request(cpu="2"), [workload]) == 0
    assert max_available_replicas(c, request(cpu="1"), [workload]) == 2


def test_model_deduction_capped_by_allowed_pods() -> None:
    c = cluster(allocatable={"pods": "6", "cpu": "1000"}, models=[grade(0, cpu="100")], modelings=[(0, 1)])
    assert max_available_replicas(c, request(cpu="1"), [assumed(component("web", 2, cpu="1"))]) == 4


# ---------------------------------------------------------- MaxAvailableComponentSets_AssumedWorkloadDeduction


def test_sets_assumed_pods_are_deducted() -> None:
    c = cluster(allocatable={"pods": "10"})
    assert max_available_component_sets(c, (component("a", 2),), [assumed(component("x", 4))]) == 3


def test_sets_assumed_resources_are_deducted() -> None:
    c = cluster(allocatable={"pods": "100", "cpu": "10"})
    workload = assumed(component("x", 2, cpu="2"))
    assert max_available_component_sets(c, (component("a", 1, cpu="2"),), [workload]) == 3


def test_sets_assumed_resources_are_deducted_in_their_own_units() -> None:
    # The assumed 1G is read in milli-units (1e12) against 16Gi in bytes: nothing is left (the QUIRK again).
    c = cluster(allocatable={"pods": "100", "memory": "16Gi"})
    workload = assumed(component("x", 1, memory="1G"))
    assert max_available_component_sets(c, (component("a", 1, memory="1Gi"),), [workload]) == 0
    assert max_available_component_sets(c, (component("a", 1, memory="1Gi"),)) == 16


def test_sets_assumed_workloads_exhausting_pods_give_zero() -> None:
    c = cluster(allocatable={"pods": "4"})
    assert max_available_component_sets(c, (), [assumed(component("x", 4))]) == 0


def test_sets_assumed_pods_left_are_answer_without_pods_per_set() -> None:
    c = cluster(allocatable={"pods": "10"})
    assert max_available_component_sets(c, (), [assumed(component("x", 3))]) == 7


def test_unallocatable_deduction_is_zero_only_if_requested() -> None:
    c = cluster(allocatable={"pods": "10", "cpu": "10"})
    workload = assumed(component("x", 1, nvidia__gpu="1"))
    assert max_available_component_sets(c, (component("a", 1, cpu="1"),), [workload]) == 9
    assert max_available_component_sets(c, (component("a", 1, nvidia__gpu="1"),), [workload]) == 0


def test_sets_resource_models_with_assumed_workloads() -> None:
    # Two 4-cpu nodes; the assumed 3-cpu pod takes most of node 1, so one 2-cpu pair fits (on node 2).
    c = cluster(allocatable={"pods": "100", "cpu": "100"}, models=[grade(0, cpu="4")], modelings=[(0, 2)])
    components = (component("a", 2, cpu="2"),)
    assert max_available_component_sets(c, components) == 2
    assert max_available_component_sets(c, components, [assumed(component("x", 1, cpu="3"))]) == 1


def test_assumed_workloads_are_routed_per_cluster() -> None:
    first = cluster("member1", allocatable={"pods": "10", "cpu": "10"})
    second = cluster("member2", allocatable={"pods": "10", "cpu": "10"})
    workloads = {"member2": [assumed(component("x", 1, cpu="6"))]}
    components = (component("a", 1, cpu="2"),)
    assert estimate_component_sets([first, second], components, workloads) == {"member1": 5, "member2": 2}
    assert estimate_replicas([first, second], request(cpu="2"), workloads) == {"member1": 5, "member2": 2}

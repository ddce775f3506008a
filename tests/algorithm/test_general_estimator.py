"""The general estimator (reference 3.2; the scenarios of Karmada's estimator/client/general_test.go, 6.2 row 30).

Clusters are written as the Kubernetes objects they are; each test pins one behaviour with an exact answer.
"""

from __future__ import annotations

from typing import Any

from binding_scheduler.algorithm.general_estimator import (
    MAX_INT32,
    AssumedWorkload,
    estimate_component_sets,
    estimate_replicas,
    max_available_component_sets,
    max_available_replicas,
)
from binding_scheduler.model import Cluster, Component, ReplicaRequirements, parse_cluster, parse_quantity

# --------------------------------------------------------------------------------------------- builders


def cluster(
    name: str = "member1",
    *,
    allocatable: dict[str, Any] | None = None,
    allocated: dict[str, Any] | None = None,
    allocating: dict[str, Any] | None = None,
    models: list[dict[str, Any]] | None = None,
    modelings: list[tuple[int, int]] | None = None,
    summary: bool = True,
) -> Cluster:
    status: dict[str, Any] = {}
    if summary:
        status["resourceSummary"] = {
            "allocatable": allocatable or {},
            "allocated": allocated or {},
            "allocating": allocating or {},
            "allocatableModelings": [{"grade": g, "count": c} for g, c in modelings or []],
        }
    return parse_cluster(
        {
            "apiVersion": "cluster.karmada.io/v1alpha1",
            "kind": "Cluster",
            "metadata": {"name": name},
            "spec": {"syncMode": "Push", "resourceModels": models or []},
            "status": status,
        }
    )


def grade(number: int, **minimums: str) -> dict[str, Any]:
    """A resource model grade; each range's max is irrelevant to the estimate (only min is used)."""
    return {
        "grade": number,
        "ranges": [
            {"name": name.replace("_", "-"), "min": value, "max": "1000000"} for name, value in minimums.items()
        ],
    }


def request(**resources: str) -> ReplicaRequirements:
    """ReplicaRequirements; keyword names use '_' for '-' and '__' for '/' (nvidia__gpu -> nvidia.com/gpu)."""
    return ReplicaRequirements(resource_request=_resources(resources))


def _resources(resources: dict[str, str]) -> dict[str, Any]:
    names = {"nvidia__gpu": "nvidia.com/gpu"}
    return {names.get(k, k.replace("_", "-")): parse_quantity(v, k) for k, v in resources.items()}


def component(name: str, replicas: int, **resources: str) -> Component:
    requirements = ReplicaRequirements(resource_request=_resources(resources)) if resources else None
    return Component(name=name, replicas=replicas, requirements=requirements)


def assumed(*components: Component) -> AssumedWorkload:
    return AssumedWorkload(namespace="default", components=components)


# --------------------------------------------------------------------------------------------- GetAllowedPodNumber


def test_allowed_pods_is_allocatable_minus_allocated_minus_allocating() -> None:
    c = cluster(allocatable={"pods": "100"}, allocated={"pods": "30"}, allocating={"pods": "20"})
    assert max_available_replicas(c, None) == 50


def test_allowed_pods_missing_values_count_as_zero() -> None:
    assert max_available_replicas(cluster(allocatable={"pods": "12"}), None) == 12
    assert max_available_replicas(cluster(allocatable={"cpu": "8"}), None) == 0


def test_allowed_pods_not_positive_gives_zero_whatever_the_request() -> None:
    c = cluster(allocatable={"pods": "10", "cpu": "100"}, allocated={"pods": "8"}, allocating={"pods": "5"})
    assert max_available_replicas(c, None) == 0
    assert max_available_replicas(c, request(cpu="1")) == 0


# --------------------------------------------------------------------------------------------- MaxAvailableReplicas


def test_no_resource_summary_gives_zero() -> None:
    assert max_available_replicas(cluster(summary=False), request(cpu="1")) == 0
    assert max_available_replicas(cluster(summary=False), None) == 0


def test_nil_requirements_gives_allowed_pods() -> None:
    assert max_available_replicas(cluster(allocatable={"pods": "42", "cpu": "1"}), None) == 42


def test_empty_request_gives_allowed_pods() -> None:
    assert max_available_replicas(cluster(allocatable={"pods": "42"}), request()) == 42


def test_answer_is_capped_at_max_int32() -> None:
    assert max_available_replicas(cluster(allocatable={"pods": "1e12"}), None) == MAX_INT32


# ---------------------------------------------------------------------- GetMaximumReplicasBasedOnClusterSummary


def test_summary_takes_the_minimum_over_requested_resources() -> None:
    c = cluster(allocatable={"pods": "110", "cpu": "10", "memory": "20Gi"})
    assert max_available_replicas(c, request(cpu="1", memory="4Gi")) == 5


def test_summary_is_bounded_by_allowed_pods() -> None:
    c = cluster(allocatable={"pods": "3", "cpu": "100"})
    assert max_available_replicas(c, request(cpu="1")) == 3


def test_summary_counts_cpu_in_milli_units() -> None:
    c = cluster(allocatable={"pods": "110", "cpu": "1"})
    assert max_available_replicas(c, request(cpu="300m")) == 3


def test_summary_counts_other_resources_in_whole_units_rounded_up() -> None:
    # Value() of 1.5 is 2, so 5 / 2 = 2 (the exact ratio would allow 3).
    c = cluster(allocatable={"pods": "110", "example.com/dongle": "5"})
    assert max_available_replicas(c, request(**{"example.com/dongle": "1.5"})) == 2


def test_summary_subtracts_allocated_and_allocating() -> None:
    c = cluster(allocatable={"pods": "110", "cpu": "10"}, allocated={"cpu": "4"}, allocating={"cpu": "2500m"})
    assert max_available_replicas(c, request(cpu="500m")) == 7


def test_summary_resource_absent_from_allocatable_gives_zero() -> None:
    c = cluster(allocatable={"pods": "110", "cpu": "10"})
    assert max_available_replicas(c, request(cpu="1", nvidia__gpu="1")) == 0


def test_summary_exhausted_resource_gives_zero() -> None:
    c = cluster(allocatable={"pods": "110", "cpu": "4", "memory": "8Gi"}, allocated={"memory": "9Gi"})
    assert max_available_replicas(c, request(cpu="1", memory="1Gi")) == 0


def test_summary_ignores_zero_requests() -> None:
    c = cluster(allocatable={"pods": "110", "cpu": "4"})
    assert max_available_replicas(c, request(cpu="1", nvidia__gpu="0")) == 4


def test_summary_small_cpu_request_still_counts_as_a_request() -> None:
    # 100m has Value() 1 > 0, so a cluster without cpu in allocatable cannot take it.
    assert max_available_replicas(cluster(allocatable={"pods": "110"}), request(cpu="100m")) == 0


# ----------------------------------------------------------------- GetMaximumReplicasBasedOnResourceModels

SMALL_AND_LARGE = [grade(0, cpu="1", memory="2Gi"), grade(1, cpu="4", memory="8Gi")]
ROOMY = {"pods": "1000", "cpu": "1000", "memory": "1000Gi"}


def test_models_sum_first_fit_over_all_grades() -> None:
    # 3 nodes of (1 cpu, 2Gi) take 1 each, 2 nodes of (4 cpu, 8Gi) take 4 each.
    c = cluster(allocatable=ROOMY, models=SMALL_AND_LARGE, modelings=[(0, 3), (1, 2)])
    assert max_available_replicas(c, request(cpu="1", memory="1Gi")) == 11


def test_models_use_the_range_minimum() -> None:
    c = cluster(allocatable=ROOMY, models=[grade(0, cpu="2")], modelings=[(0, 1)])
    c_models = c.resource_models[0].ranges[0]
    assert c_models.max.value() == 1000000
    assert max_available_replicas(c, request(cpu="1")) == 2


def test_models_count_cpu_in_milli_units() -> None:
    c = cluster(allocatable=ROOMY, models=[grade(0, cpu="1")], modelings=[(0, 2)])
    assert max_available_replicas(c, request(cpu="250m")) == 8


def test_models_limit_each_node_to_110_pods() -> None:
    c = cluster(allocatable={"pods": "10000", "cpu": "1000"}, models=[grade(0, cpu="64")], modelings=[(0, 3)])
    assert max_available_replicas(c, request(cpu="10m")) == 330


def test_models_pod_limit_applies_to_an_empty_request() -> None:
    c = cluster(allocatable={"pods": "10000"}, models=[grade(0, cpu="1")], modelings=[(0, 2)])
    assert max_available_replicas(c, request()) == 220


def test_models_result_is_capped_by_allowed_pods() -> None:
    c = cluster(allocatable={"pods": "7", "cpu": "1000"}, models=[grade(0, cpu="8")], modelings=[(0, 4)])
    assert max_available_replicas(c, request(cpu="1")) == 7


def test_models_answer_is_returned_without_the_summary_formula() -> None:
    # The summary says 1 cpu is left; the models say 10 nodes of 8 cpu. The model answer stands.
    c = cluster(allocatable={"pods": "100", "cpu": "1"}, models=[grade(0, cpu="8")], modelings=[(0, 10)])
    assert max_available_replicas(c, request(cpu="1")) == 80


def test_models_node_fit_is_the_minimum_over_requested_resources() -> None:
    c = cluster(allocatable=ROOMY, models=[grade(0, cpu="8", memory="4Gi")], modelings=[(0, 2)])
    assert max_available_replicas(c, request(cpu="1", memory="1Gi")) == 8


def test_models_requested_resource_absent_from_the_model_gives_zero() -> None:
    allocatable = {**ROOMY, "nvidia.com/gpu": "100"}
    c = cluster(allocatable=allocatable, models=[grade(0, cpu="8")], modelings=[(0, 2)])
    assert max_available_replicas(c, request(cpu="1", nvidia__gpu="1")) == 0


def test_models_scalar_resources_are_modelled() -> None:
    models = [grade(0, cpu="8", **{"nvidia.com/gpu": "2"})]
    c = cluster(allocatable=ROOMY, models=models, modelings=[(0, 3)])
    assert max_available_replicas(c, request(cpu="1", nvidia__gpu="1")) == 6


def test_models_ignore_resources_they_do_not_model() -> None:
    # "storage" is not a node resource: ignored by the models (the summary path would answer 0 for it).
    c = cluster(allocatable=ROOMY, models=[grade(0, cpu="4")], modelings=[(0, 1)])
    assert max_available_replicas(c, request(cpu="1", storage="1")) == 4
    assert max_available_replicas(c, request(cpu="1", storage="1"), use_resource_models=False) == 0


def test_models_duplicated_grades_sum_their_counts() -> None:
    c = cluster(allocatable=ROOMY, models=[grade(0, cpu="2")], modelings=[(0, 2), (0, 3)])
    assert max_available_replicas(c, request(cpu="1")) == 10


def test_models_grade_without_a_count_has_no_nodes() -> None:
    c = cluster(allocatable=ROOMY, models=SMALL_AND_LARGE, modelings=[(1, 1), (7, 50)])
    assert max_available_replicas(c, request(cpu="1")) == 4


def test_models_with_zero_nodes_give_zero() -> None:
    c = cluster(allocatable=ROOMY, models=SMALL_AND_LARGE, modelings=[(0, 0), (1, 0)])
    assert max_available_replicas(c, request(cpu="1")) == 0


def test_models_negative_count_falls_back_to_the_summary() -> None:
    c = cluster(allocatable={"pods": "110", "cpu": "5"}, models=[grade(0, cpu="64")], modelings=[(0, -1)])
    assert max_available_replicas(c, request(cpu="1")) == 5


def test_models_undefined_falls_back_to_the_summary() -> None:
    c = cluster(allocatable={"pods": "110", "cpu": "5"}, modelings=[(0, 3)])
    assert max_available_replicas(c, request(cpu="1")) == 5


def test_models_empty_modelings_use_the_summary() -> None:
    c = cluster(allocatable={"pods": "110", "cpu": "5"}, models=[grade(0, cpu="64")])
    assert max_available_replicas(c, request(cpu="1")) == 5


def test_models_gate_off_uses_the_summary() -> None:
    c = cluster(allocatable={"pods": "100", "cpu": "1"}, models=[grade(0, cpu="8")], modelings=[(0, 10)])
    assert max_available_replicas(c, request(cpu="1"), use_resource_models=False) == 1
    assert max_available_replicas(c, request(cpu="1")) == 80


def test_models_place_nodes_in_ascending_grade_order() -> None:
    # Grade 1 is listed first. The assumed 2-cpu pod lands on the grade-0 node (2 cpu), leaving the 4-cpu node
    # for one 3-cpu replica; had it gone to the grade-1 node, no node would have 3 cpu left.
    models = [grade(1, cpu="4"), grade(0, cpu="2")]
    c = cluster(allocatable=ROOMY, models=models, modelings=[(0, 1), (1, 1)])
    workload = assumed(component("web", 1, cpu="2"))
    assert max_available_replicas(c, request(cpu="3"), [workload]) == 1


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


def test_assumed_workloads_of_several_components_and_bindings_add_up() -> None:
    c = cluster(allocatable={"pods": "20", "cpu": "10"})
    workloads = [assumed(component("a", 2, cpu="1"), component("b", 1, cpu="2")), assumed(component("c", 3))]
    assert max_available_replicas(c, request(cpu="1"), workloads) == 6
    assert max_available_replicas(c, None, workloads) == 14


def test_assumed_components_without_replicas_are_skipped() -> None:
    c = cluster(allocatable={"pods": "10", "cpu": "4"})
    workload = assumed(component("idle", 0, cpu="4"), component("bad", -3, cpu="4"))
    assert max_available_replicas(c, request(cpu="1"), [workload]) == 4


def test_assumed_components_without_requirements_deduct_pods_only() -> None:
    c = cluster(allocatable={"pods": "5", "cpu": "4"})
    assert max_available_replicas(c, request(cpu="1"), [assumed(component("web", 2))]) == 3


def test_assumed_workloads_exhausting_pods_give_zero() -> None:
    c = cluster(allocatable={"pods": "5", "cpu": "40"})
    assert max_available_replicas(c, request(cpu="1"), [assumed(component("web", 5))]) == 0


def test_assumed_workloads_exhausting_a_resource_give_zero() -> None:
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


def test_assumed_deduction_from_model_answer_is_still_capped_by_allowed_pods() -> None:
    c = cluster(allocatable={"pods": "6", "cpu": "1000"}, models=[grade(0, cpu="100")], modelings=[(0, 1)])
    assert max_available_replicas(c, request(cpu="1"), [assumed(component("web", 2, cpu="1"))]) == 4


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


def test_sets_with_only_zero_requests_give_the_pod_bound() -> None:
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


def test_sets_quirk_decimal_request_against_binary_allocatable_gives_zero() -> None:
    # 500M is read in milli-units (5e11), 16Gi in bytes (1.7e10): no set fits, where 34 really would.
    c = cluster(allocatable={"pods": "100", "memory": "16Gi"})
    assert max_available_component_sets(c, (component("a", 1, memory="500M"),)) == 0
    assert max_available_replicas(c, request(memory="500M")) == 34


def test_sets_quirk_binary_request_against_decimal_allocatable_overstates() -> None:
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


def test_sets_model_bound_below_the_summary_bound() -> None:
    # Summary: 100 cpu, sets of 2 × 3 cpu -> 16. Models: four 4-cpu nodes hold one 3-cpu pod each -> 2 sets.
    c = cluster(allocatable={"pods": "100", "cpu": "100"}, models=[grade(0, cpu="4")], modelings=[(0, 4)])
    assert max_available_component_sets(c, (component("a", 2, cpu="3"),)) == 2


def test_sets_model_nodes_hold_110_pods_each() -> None:
    c = cluster(allocatable={"pods": "1000", "cpu": "1000"}, models=[grade(0, cpu="4")], modelings=[(0, 2)])
    assert max_available_component_sets(c, (component("a", 20, cpu="1m"),)) == 11


def test_sets_without_requests_return_the_pod_bound_before_the_models() -> None:
    # Step 6 returns podBound directly: the model nodes (220 pods) are not consulted.
    c = cluster(allocatable={"pods": "1000"}, models=[grade(0, cpu="4")], modelings=[(0, 2)])
    assert max_available_component_sets(c, (component("a", 20),)) == 50


def test_sets_broken_models_skip_the_model_bound() -> None:
    c = cluster(allocatable={"pods": "100", "cpu": "40"}, models=[grade(0, cpu="2")], modelings=[(0, -2)])
    assert max_available_component_sets(c, (component("big", 1, cpu="4"),)) == 10


def test_sets_gate_off_skips_the_model_bound() -> None:
    c = cluster(allocatable={"pods": "100", "cpu": "40"}, models=[grade(0, cpu="2")], modelings=[(0, 10)])
    assert max_available_component_sets(c, (component("big", 1, cpu="4"),), use_resource_models=False) == 10


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


def test_sets_assumed_pods_left_are_the_answer_without_pods_per_set() -> None:
    c = cluster(allocatable={"pods": "10"})
    assert max_available_component_sets(c, (), [assumed(component("x", 3))]) == 7


def test_sets_assumed_deduction_of_an_unallocatable_resource_gives_zero_only_if_requested() -> None:
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


# ----------------------------------------------------------------- caching must not change answers


def test_repeated_questions_get_the_same_answers() -> None:
    c = cluster(allocatable={"pods": "100", "cpu": "8"}, models=[grade(0, cpu="1")], modelings=[(0, 3)])
    one, two = request(cpu="1"), request(cpu="2")
    answers = [
        (max_available_replicas(c, one), max_available_replicas(c, two), max_available_replicas(c, one, ()))
        for _ in range(3)
    ]
    assert answers == [(3, 0, 3)] * 3
    assert max_available_replicas(c, one, use_resource_models=False) == 8
    assert max_available_replicas(c, one) == 3


def test_equal_requests_from_different_objects_get_the_same_answer() -> None:
    c = cluster(allocatable={"pods": "100", "cpu": "8"})
    assert [max_available_replicas(c, request(cpu="3")) for _ in range(3)] == [2, 2, 2]


def test_a_new_snapshot_of_the_same_cluster_is_not_answered_from_the_old_one() -> None:
    before = cluster(allocatable={"pods": "100", "cpu": "8"})
    after = cluster(allocatable={"pods": "100", "cpu": "2"})
    cpu = request(cpu="1")
    assert [max_available_replicas(before, cpu), max_available_replicas(after, cpu)] == [8, 2]
    assert estimate_replicas([after], cpu) == {"member1": 2}


def test_estimate_replicas_answers_zero_for_a_cluster_without_summary() -> None:
    clusters = [cluster("a", summary=False), cluster("b", allocatable={"pods": "3"})]
    assert estimate_replicas(clusters, None) == {"a": 0, "b": 3}


def test_allowed_pods_rounds_each_pods_value_away_from_zero() -> None:
    # Kubernetes' Value() rounds an inexact amount away from zero: allocating "-500m" pods is -1, not 0, so the
    # cluster allows 10 - 0 - (-1) = 11 pods (a ceiling toward +infinity would say 10).
    c = cluster(allocatable={"pods": "10"}, allocating={"pods": "-500m"})
    assert max_available_replicas(c, None) == 11

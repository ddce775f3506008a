"""How many replicas of one request a cluster takes, from its summary or its resource models (the scenarios of
Karmada's `pkg/estimator/client/general_test.go`).

Each test pins one behaviour with an exact answer.
"""

from __future__ import annotations

from binding_scheduler.algorithm.general_estimator import MAX_INT32, estimate_replicas, max_available_replicas
from tests.algorithm.general_estimator_builders import ROOMY, assumed, cluster, component, grade, request

# --------------------------------------------------------------------------------------------- GetAllowedPodNumber


def test_allowed_pods_is_what_is_left() -> None:
    c = cluster(allocatable={"pods": "100"}, allocated={"pods": "30"}, allocating={"pods": "20"})
    assert max_available_replicas(c, None) == 50


def test_allowed_pods_missing_values_count_as_zero() -> None:
    assert max_available_replicas(cluster(allocatable={"pods": "12"}), None) == 12
    assert max_available_replicas(cluster(allocatable={"cpu": "8"}), None) == 0


def test_allowed_pods_not_positive_gives_zero_whatever_request() -> None:
    c = cluster(allocatable={"pods": "10", "cpu": "100"}, allocated={"pods": "8"}, allocating={"pods": "5"})
    assert max_available_replicas(c, None) == 0
    assert max_available_replicas(c, request(cpu="1")) == 0


def test_allowed_pods_rounds_each_pods_value_away_from_zero() -> None:
    # Kubernetes' Value() rounds an inexact amount away from zero: allocating "-500m" pods is -1, not 0, so the
    # cluster allows 10 - 0 - (-1) = 11 pods (a ceiling toward +infinity would say 10).
    c = cluster(allocatable={"pods": "10"}, allocating={"pods": "-500m"})
    assert max_available_replicas(c, None) == 11


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


def test_summaryless_cluster_estimates_zero() -> None:
    clusters = [cluster("a", summary=False), cluster("b", allocatable={"pods": "3"})]
    assert estimate_replicas(clusters, None) == {"a": 0, "b": 3}


# ---------------------------------------------------------------------- GetMaximumReplicasBasedOnClusterSummary


def test_summary_takes_minimum_over_requested_resources() -> None:
    c = cluster(allocatable={"pods": "110", "cpu": "10", "memory": "20Gi"})
    assert max_available_replicas(c, request(cpu="1", memory="4Gi")) == 5


def test_summary_is_bounded_by_allowed_pods() -> None:
    c = cluster(allocatable={"pods": "3", "cpu": "100"})
    assert max_available_replicas(c, request(cpu="1")) == 3


def test_summary_counts_cpu_in_milli_units() -> None:
    c = cluster(allocatable={"pods": "110", "cpu": "1"})
    assert max_available_replicas(c, request(cpu="300m")) == 3


def test_summary_rounds_up_other_resources() -> None:
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


def test_summary_small_cpu_request_still_counts_as_request() -> None:
    # 100m has Value() 1 > 0, so a cluster without cpu in allocatable cannot take it.
    assert max_available_replicas(cluster(allocatable={"pods": "110"}), request(cpu="100m")) == 0


# ----------------------------------------------------------------- GetMaximumReplicasBasedOnResourceModels

SMALL_AND_LARGE = [grade(0, cpu="1", memory="2Gi"), grade(1, cpu="4", memory="8Gi")]
def test_models_sum_first_fit_over_all_grades() -> None:
    # 3 nodes of (1 cpu, 2Gi) take 1 each, 2 nodes of (4 cpu, 8Gi) take 4 each.
    c = cluster(allocatable=ROOMY, models=SMALL_AND_LARGE, modelings=[(0, 3), (1, 2)])
    assert max_available_replicas(c, request(cpu="1", memory="1Gi")) == 11


def test_models_use_range_minimum() -> None:
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


def test_models_pod_limit_applies_to_empty_request() -> None:
    c = cluster(allocatable={"pods": "10000"}, models=[grade(0, cpu="1")], modelings=[(0, 2)])
    assert max_available_replicas(c, request()) == 220


def test_models_result_is_capped_by_allowed_pods() -> None:
    c = cluster(allocatable={"pods": "7", "cpu": "1000"}, models=[grade(0, cpu="8")], modelings=[(0, 4)])
    assert max_available_replicas(c, request(cpu="1")) == 7


def test_models_answer_is_returned_without_summary_formula() -> None:
    # The summary says 1 cpu is left; the models say 10 nodes of 8 cpu. The model answer stands.
    c = cluster(allocatable={"pods": "100", "cpu": "1"}, models=[grade(0, cpu="8")], modelings=[(0, 10)])
    assert max_available_replicas(c, request(cpu="1")) == 80


def test_models_node_fit_is_minimum_over_requested_resources() -> None:
    c = cluster(allocatable=ROOMY, models=[grade(0, cpu="8", memory="4Gi")], modelings=[(0, 2)])
    assert max_available_replicas(c, request(cpu="1", memory="1Gi")) == 8


def test_models_requested_resource_absent_from_model_gives_zero() -> None:
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


def test_models_grade_without_count_has_no_nodes() -> None:
    c = cluster(allocatable=ROOMY, models=SMALL_AND_LARGE, modelings=[(1, 1), (7, 50)])
    assert max_available_replicas(c, request(cpu="1")) == 4


def test_models_with_zero_nodes_give_zero() -> None:
    c = cluster(allocatable=ROOMY, models=SMALL_AND_LARGE, modelings=[(0, 0), (1, 0)])
    assert max_available_replicas(c, request(cpu="1")) == 0


def test_models_negative_count_falls_back_to_summary() -> None:
    c = cluster(allocatable={"pods": "110", "cpu": "5"}, models=[grade(0, cpu="64")], modelings=[(0, -1)])
    assert max_available_replicas(c, request(cpu="1")) == 5


def test_models_undefined_falls_back_to_summary() -> None:
    c = cluster(allocatable={"pods": "110", "cpu": "5"}, modelings=[(0, 3)])
    assert max_available_replicas(c, request(cpu="1")) == 5


def test_models_empty_modelings_use_summary() -> None:
    c = cluster(allocatable={"pods": "110", "cpu": "5"}, models=[grade(0, cpu="64")])
    assert max_available_replicas(c, request(cpu="1")) == 5


def test_models_gate_off_uses_summary() -> None:
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

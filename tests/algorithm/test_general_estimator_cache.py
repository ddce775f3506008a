"""The general estimator's caches must not change its answers: repeated questions, equal requests from other
objects, a new object for a cluster of the same name."""

from __future__ import annotations

from binding_scheduler.algorithm.general_estimator import estimate_replicas, max_available_replicas
from tests.algorithm.general_estimator_builders import cluster, grade, request

# ----------------------------------------------------------------- caching must not change answers


def test_repeated_questions_get_same_answers() -> None:
    c = cluster(allocatable={"pods": "100", "cpu": "8"}, models=[grade(0, cpu="1")], modelings=[(0, 3)])
    one, two = request(cpu="1"), request(cpu="2")
    answers = [
        (max_available_replicas(c, one), max_available_replicas(c, two), max_available_replicas(c, one, ()))
        for _ in range(3)
    ]
    assert answers == [(3, 0, 3)] * 3
    assert max_available_replicas(c, one, use_resource_models=False) == 8
    assert max_available_replicas(c, one) == 3


def test_equal_requests_from_different_objects_get_same_answer() -> None:
    c = cluster(allocatable={"pods": "100", "cpu": "8"})
    assert [max_available_replicas(c, request(cpu="3")) for _ in range(3)] == [2, 2, 2]


def test_new_snapshot_not_answered_from_old() -> None:
    before = cluster(allocatable={"pods": "100", "cpu": "8"})
    after = cluster(allocatable={"pods": "100", "cpu": "2"})
    cpu = request(cpu="1")
    assert [max_available_replicas(before, cpu), max_available_replicas(after, cpu)] == [8, 2]
    assert estimate_replicas([after], cpu) == {"member1": 2}

"""Merging estimator answers per cluster (Karmada's pkg/scheduler/core/util.go: calAvailableReplicas)."""

from __future__ import annotations

from binding_scheduler.algorithm.estimates import MAX_INT32, UNAUTHENTIC_REPLICA, merge_estimates

CLUSTERS = ["member1", "member2", "member3"]


def test_merge_takes_the_minimum_per_cluster() -> None:
    general = {"member1": 10, "member2": 3, "member3": 7}
    accurate = {"member1": 4, "member2": 5, "member3": 7}
    assert merge_estimates(CLUSTERS, 20, [general, accurate]) == {"member1": 4, "member2": 3, "member3": 7}


def test_merge_ignores_unauthentic_answers() -> None:
    general = {"member1": 10, "member2": 3, "member3": 7}
    accurate = {"member1": UNAUTHENTIC_REPLICA, "member2": 1, "member3": UNAUTHENTIC_REPLICA}
    assert merge_estimates(CLUSTERS, 20, [general, accurate]) == {"member1": 10, "member2": 1, "member3": 7}


def test_merge_gives_spec_replicas_to_clusters_nobody_estimated() -> None:
    answers = [{"member1": UNAUTHENTIC_REPLICA}, {"member2": 2}]
    assert merge_estimates(CLUSTERS, 6, answers) == {"member1": 6, "member2": 2, "member3": 6}


def test_merge_without_answers_gives_spec_replicas_everywhere() -> None:
    assert merge_estimates(CLUSTERS, 6, []) == {"member1": 6, "member2": 6, "member3": 6}


def test_merge_treats_an_answer_of_max_int32_as_no_estimate() -> None:
    assert merge_estimates(["member1"], 6, [{"member1": MAX_INT32}]) == {"member1": 6}


def test_merge_keeps_zero() -> None:
    assert merge_estimates(["member1"], 6, [{"member1": 0}, {"member1": 9}]) == {"member1": 0}


def test_merge_ignores_clusters_that_are_not_candidates() -> None:
    assert merge_estimates(["member1"], 6, [{"member1": 3, "other": 1}]) == {"member1": 3}


def test_merge_follows_the_candidate_order() -> None:
    order = ["member3", "member1", "member2"]
    assert list(merge_estimates(order, 1, [{"member1": 1, "member2": 2, "member3": 3}])) == order

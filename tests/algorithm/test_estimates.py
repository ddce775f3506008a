"""Merging estimator answers per cluster (Karmada's pkg/scheduler/core/util.go: calAvailableReplicas), as
`apply_estimates` writes them into the candidates' allocatable column."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from binding_scheduler.algorithm.estimates import MAX_INT32, UNAUTHENTIC_REPLICA
from binding_scheduler.algorithm.plugins import AttemptContext
from binding_scheduler.algorithm.schedule import apply_estimates, candidates_of
from testsupport.builders import make_binding, snapshot

CLUSTERS = ["member1", "member2", "member3"]


def merge_estimates(clusters: Sequence[str], replicas: int, answers: Sequence[Mapping[str, int]]) -> dict[str, int]:
    """Each of `clusters`' merged estimate for a binding of `replicas`, in the order given."""
    binding = make_binding(replicas=replicas, requests={"cpu": "1"})
    fleet = snapshot(*clusters)
    candidates = candidates_of(binding, AttemptContext.of(binding, fleet), np.arange(len(clusters)), {}, {})
    apply_estimates(candidates, None, answers)
    return dict(zip(candidates.names, candidates.allocatable.tolist(), strict=True))


def test_merge_takes_minimum_per_cluster() -> None:
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


def test_merge_treats_answer_of_max_int32_as_no_estimate() -> None:
    assert merge_estimates(["member1"], 6, [{"member1": MAX_INT32}]) == {"member1": 6}


def test_merge_keeps_zero() -> None:
    assert merge_estimates(["member1"], 6, [{"member1": 0}, {"member1": 9}]) == {"member1": 0}


def test_merge_ignores_clusters_that_are_not_candidates() -> None:
    assert merge_estimates(["member1"], 6, [{"member1": 3, "other": 1}]) == {"member1": 3}


def test_merge_reads_column_and_answers_by_name_alike() -> None:
    binding = make_binding(replicas=6, requests={"cpu": "1"})
    fleet = snapshot(*CLUSTERS)
    candidates = candidates_of(binding, AttemptContext.of(binding, fleet), np.arange(3), {}, {})
    apply_estimates(candidates, np.array([5, UNAUTHENTIC_REPLICA, MAX_INT32], dtype=np.int64), [{"member1": 7}])
    assert candidates.allocatable.tolist() == [5, 6, 6]

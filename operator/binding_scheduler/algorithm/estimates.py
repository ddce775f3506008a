"""Merging the answers of several replica estimators into one number per cluster (Karmada's
`pkg/scheduler/core/util.go: calAvailableReplicas` and `mergeReplicaResults`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

MAX_INT32 = 2**31 - 1
UNAUTHENTIC_REPLICA = -1
"""An estimator's "I do not know" for one cluster: it takes no part in the minimum."""


def merge_estimates(clusters: Sequence[str], replicas: int, answers: Sequence[Mapping[str, int]]) -> dict[str, int]:
    """Karmada's `calAvailableReplicas` merge: per cluster, the minimum over the estimators' answers.

    Every cluster starts at MaxInt32. An answer of -1 is ignored, and so are answers for clusters not in
    `clusters`. A cluster still at MaxInt32 afterwards (no estimator knew, or one answered exactly MaxInt32)
    gets `replicas`, the binding's `spec.replicas`. Estimators that failed are not passed at all: the caller
    drops a failed estimator's whole answer, as `calAvailableReplicas` skips an estimator that returns an error
    (and Karmada's accurate estimator errs when any one cluster fails:
    `pkg/estimator/client/accurate.go: getClusterReplicasConcurrently`). The result follows the order of
    `clusters`.
    """
    merged: dict[str, int] = {}
    for name in clusters:
        best = MAX_INT32
        for answer in answers:
            value = answer.get(name)
            if value is not None and value != UNAUTHENTIC_REPLICA and value < best:
                best = value
        merged[name] = replicas if best == MAX_INT32 else best
    return merged

"""One scheduling decision for one binding, with the accurate estimators asked between filter and select.

This is the async driver of the pure walk (`algorithm.walk`): each attempt filters and scores, asks the
estimators for the feasible clusters (cancellable: cancelling the caller cancels every call), then selects
and assigns. The same code serves the operator's passes and `simulate`/`explain`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from ..algorithm.errors import SchedulingError
from ..algorithm.registry import PluginSet
from ..algorithm.schedule import (
    DEFAULT_OPTIONS,
    ScheduleOptions,
    apply_estimates,
    filter_and_score,
    general_estimates,
    needs_estimates,
    select_and_assign,
)
from ..algorithm.snapshot import Snapshot
from ..algorithm.walk import Attempt, Decision, Outcome, attempts, decide
from ..model import Binding, Cluster, ObjectReference, ReplicaRequirements, TargetCluster


class EstimateAnswerLike(Protocol):
    @property
    def replicas(self) -> Mapping[str, int]: ...


class ReplicaEstimator(Protocol):
    """An accurate estimator (the gRPC client satisfies it)."""

    async def max_available_replicas(
        self,
        clusters: Sequence[Cluster],
        requirements: ReplicaRequirements | None,
        *,
        resource: ObjectReference | None = None,
    ) -> EstimateAnswerLike: ...


async def run_attempt(
    binding: Binding,
    snapshot: Snapshot,
    plugins: PluginSet,
    estimator: ReplicaEstimator | None = None,
    options: ScheduleOptions = DEFAULT_OPTIONS,
) -> list[TargetCluster]:
    candidates = filter_and_score(binding, snapshot, plugins)
    answers: list[Mapping[str, int]] = []
    if needs_estimates(binding):
        answers.append(general_estimates(binding, candidates.clusters))
        if estimator is not None:
            answer = await estimator.max_available_replicas(
                candidates.clusters, binding.replica_requirements, resource=binding.resource
            )
            answers.append(answer.replicas)
    apply_estimates(candidates, answers)
    return select_and_assign(candidates, options)


async def decide_binding(
    binding: Binding,
    snapshot: Snapshot,
    plugins: PluginSet,
    estimator: ReplicaEstimator | None = None,
    options: ScheduleOptions = DEFAULT_OPTIONS,
) -> Decision:
    """Walk the affinity terms (or the single affinity) and decide what to write."""
    if binding.placement is None:
        error = SchedulingError(f"failed to get placement from {_describe(binding)}")
        return Decision(None, None, error)
    outcomes: list[tuple[Attempt, Outcome]] = []
    for attempt in attempts(binding):
        try:
            outcome: Outcome = await run_attempt(attempt.binding, snapshot, plugins, estimator, options)
        except SchedulingError as error:
            outcome = error
        outcomes.append((attempt, outcome))
        if not isinstance(outcome, SchedulingError):
            break
    return decide(binding, outcomes)


def _describe(binding: Binding) -> str:
    if binding.namespace:
        return f"resourceBinding({binding.namespace}/{binding.name})"
    return f"clusterResourceBinding({binding.name})"

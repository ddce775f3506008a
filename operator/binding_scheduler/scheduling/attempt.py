"""One scheduling decision for one binding, with the accurate estimators asked between filter and select.

This is the async driver of the pure walk (`algorithm.walk`): each attempt filters and scores, asks the
estimators for the feasible clusters (cancellable: cancelling the caller cancels every call), then selects
and assigns. The same code serves the operator's passes and `simulate`/`explain`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from ..algorithm.candidates import ClusterDetail
from ..algorithm.errors import SchedulingError
from ..algorithm.multi_template import multi_template_applicable
from ..algorithm.registry import PluginSet
from ..algorithm.schedule import (
    DEFAULT_OPTIONS,
    Candidates,
    ScheduleOptions,
    apply_estimates,
    assign,
    filter_and_score,
    general_estimates,
    needs_estimates,
    select,
)
from ..algorithm.snapshot import Snapshot
from ..algorithm.walk import Attempt, Decision, Outcome, attempts, decide
from ..model import Binding, Cluster, Component, ObjectReference, ReplicaRequirements, TargetCluster
from .cpu import compute


class EstimateAnswerLike(Protocol):
    @property
    def replicas(self) -> Mapping[str, int]: ...

    @property
    def failures(self) -> Mapping[str, str]: ...


class ReplicaEstimator(Protocol):
    """An accurate estimator (the gRPC client satisfies it). `max_available_component_sets` is only asked
    for multi-template bindings (gate `MultiplePodTemplatesScheduling`)."""

    async def max_available_replicas(
        self,
        clusters: Sequence[Cluster],
        requirements: ReplicaRequirements | None,
        *,
        resource: ObjectReference | None = None,
    ) -> EstimateAnswerLike: ...

    async def max_available_component_sets(
        self,
        clusters: Sequence[Cluster],
        components: Sequence[Component],
        namespace: str,
        *,
        resource: ObjectReference | None = None,
    ) -> EstimateAnswerLike: ...


@dataclass(slots=True)
class AttemptRecord:
    """What one attempt saw, for `explain`: candidates, every estimator's answers, selection and result."""

    binding: Binding
    candidates: Candidates | None = None
    general: Mapping[str, int] = field(default_factory=dict)
    accurate: Mapping[str, int] = field(default_factory=dict)
    accurate_failures: Mapping[str, str] = field(default_factory=dict)
    trace: list[str] = field(default_factory=list)
    selected: list[ClusterDetail] = field(default_factory=list)
    outcome: Outcome | None = None


async def run_attempt(
    binding: Binding,
    snapshot: Snapshot,
    plugins: PluginSet,
    estimator: ReplicaEstimator | None = None,
    *,
    options: ScheduleOptions = DEFAULT_OPTIONS,
    record: AttemptRecord | None = None,
) -> list[TargetCluster]:
    candidates = filter_and_score(binding, snapshot, plugins, options.observer)
    answers: list[Mapping[str, int]] = []
    if needs_estimates(binding):
        general = general_estimates(binding, candidates.clusters, snapshot, options)
        answers.append(general)
        if estimator is not None:
            if multi_template_applicable(binding, options.multiple_pod_templates):
                answer = await estimator.max_available_component_sets(
                    candidates.clusters, binding.components, binding.namespace, resource=binding.resource
                )
            else:
                answer = await estimator.max_available_replicas(
                    candidates.clusters, binding.replica_requirements, resource=binding.resource
                )
            answers.append(answer.replicas)
            if record is not None:
                record.accurate, record.accurate_failures = answer.replicas, answer.failures
        if record is not None:
            record.general = general
    apply_estimates(candidates, answers)
    if record is not None:
        record.candidates = candidates
    trace_length = len(record.trace) if record is not None else 0

    def select_and_assign(checkpoint: Callable[[], None]) -> list[TargetCluster]:
        if record is None:
            return assign(candidates, select(candidates, options=options, checkpoint=checkpoint), options)
        del record.trace[trace_length:]  # a computation moved off the event loop starts over
        record.selected = select(candidates, record.trace, options, checkpoint)
        return assign(candidates, record.selected, options)

    return await compute(select_and_assign, options.cpu_limit)


async def decide_binding(
    binding: Binding,
    snapshot: Snapshot,
    plugins: PluginSet,
    estimator: ReplicaEstimator | None = None,
    *,
    options: ScheduleOptions = DEFAULT_OPTIONS,
    records: list[AttemptRecord] | None = None,
) -> Decision:
    """Walk the affinity terms (or the single affinity) and decide what to write.

    With `records`, each attempt appends what it saw (for `explain`)."""
    if binding.placement is None:
        error = SchedulingError(f"failed to get placement from {_describe(binding)}")
        return Decision(None, None, error)
    outcomes: list[tuple[Attempt, Outcome]] = []
    for attempt in attempts(binding):
        record = AttemptRecord(attempt.binding) if records is not None else None
        try:
            outcome: Outcome = await run_attempt(
                attempt.binding, snapshot, plugins, estimator, options=options, record=record
            )
        except SchedulingError as error:
            outcome = error
        outcomes.append((attempt, outcome))
        if records is not None and record is not None:
            record.outcome = outcome
            records.append(record)
        if not isinstance(outcome, SchedulingError):
            break
    return decide(binding, outcomes)


def _describe(binding: Binding) -> str:
    if binding.namespace:
        return f"resourceBinding({binding.namespace}/{binding.name})"
    return f"clusterResourceBinding({binding.name})"

"""What the scheduling framework is given from outside it: the accurate estimator (the gRPC client satisfies it),
binding priority preemption (`scheduling.preemption.Preemption` satisfies it) and what others' assumptions take
(`scheduling.assumptions.AssumptionCache` satisfies it, and in a decision process what the scheduler sent)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

from ...algorithm.fleet import FleetColumns, Indices
from ...algorithm.general_estimator import AssumedLoad, AssumedWorkload
from ...algorithm.general_estimator.columns import AssumedAt
from ...algorithm.preemption import PreemptionPlan
from ...algorithm.schedule import Candidates
from ...model import Binding, Cluster, Component, ObjectReference, ReplicaRequirements


class EstimateAnswerLike(Protocol):
    @property
    def replicas(self) -> Mapping[str, int]: ...

    @property
    def failures(self) -> Mapping[str, str]: ...


class ReplicaEstimator(Protocol):
    """An accurate estimator (the gRPC client satisfies it). `max_available_component_sets` is only asked
    for multi-template bindings (gate `MultiplePodTemplatesScheduling`). `assumed`: the workloads assumed on
    each cluster (gate `SchedulingOvercommitProtection`), sent as `assumedWorkloads`."""

    async def max_available_replicas(
        self,
        clusters: Sequence[Cluster],
        requirements: ReplicaRequirements | None,
        *,
        resource: ObjectReference | None = None,
        assumed: Mapping[str, Sequence[AssumedWorkload]] | None = None,
    ) -> EstimateAnswerLike: ...

    async def max_available_component_sets(
        self,
        clusters: Sequence[Cluster],
        components: Sequence[Component],
        namespace: str,
        *,
        resource: ObjectReference | None = None,
        assumed: Mapping[str, Sequence[AssumedWorkload]] | None = None,
    ) -> EstimateAnswerLike: ...


class Preemptor(Protocol):
    """Binding priority preemption as the framework sees it (gates PriorityBasedScheduling and
    PriorityBasedPreemptiveScheduling): what live claims take from a binding's candidates at Estimate, and at
    PostFilter, after an attempt failed for capacity, a plan (or None: nothing to preempt)."""

    def claimed(self, binding: Binding, clusters: Sequence[str]) -> Mapping[str, int]: ...

    def plan(self, candidates: Candidates, unclaimed: Mapping[str, int]) -> PreemptionPlan | None: ...


class AssumedReading(Protocol):
    """Other bindings' assumptions at a decision's candidates: as columns for the general estimate, as loads by
    cluster (`CycleState.assumed`) and the clusters' versions when read (`CycleState.versions`)."""

    @property
    def columns(self) -> AssumedAt: ...

    @property
    def loads(self) -> Mapping[str, AssumedLoad]: ...

    @property
    def versions(self) -> Mapping[str, int]: ...


class AssumptionReader(Protocol):
    def at(
        self, binding: Binding, fleet: FleetColumns, indices: Indices, *, workloads: Callable[[str], bool] | bool
    ) -> AssumedReading: ...

"""What a scheduling plugin is, and what the framework hands it.

A plugin is a small object with a `name` and one method per extension point of the framework it implements
(see `scheduling.framework`): Filter, Score, Estimate, Select, Assign, Reserve (with Unreserve) and Bind:

    class OnlyEurope:
        name = "OnlyEurope"
        def filter(self, ctx: AttemptContext, cluster: Cluster) -> str | None:
            return None if cluster.region.startswith("eu-") else "cluster(s) are outside Europe"

`filter` returns None when the cluster passes and the unschedulable reason otherwise; `score` returns an
int added to the cluster's score; `estimate` (async) answers how many replicas each candidate still takes,
merged with the estimators' answers by minimum (-1: no answer for that cluster); `select` / `assign` replace
Karmada's spread selection / replica assignment (one plugin each at most); `reserve` / `unreserve` are told
of a decision before its writes and when they did not land; `bound` once they landed. In-tree plugins may also
offer `filter_many` / `score_many`, which answer for many clusters at once from the snapshot's indexes, and
`filter_mask`, which answers for the whole fleet as one array operation over its columns (same verdicts,
faster). Raising `SchedulingError` is a plugin's way to fail the attempt with its own message; any
other exception is a bug in it. Either way the binding's condition names the plugin.

Every decide-time point gets the same `AttemptContext`: one attempt of one binding (the affinity term under
trial set in its status) over one snapshot, and the pass's `CycleState`, whose `data` is the plugins' scratch
space for the pass (what a Filter computed, a Score may read).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol, runtime_checkable

import numpy as np

from ..model import Binding, Cluster, ClusterAffinity, TargetCluster
from .candidates import ClusterDetail
from .fleet import FleetColumns, Indices, Mask
from .general_estimator import AssumedLoad
from .lazy_mapping import LazyMapping
from .snapshot import Snapshot


class GroupMember(NamedTuple):
    """One ResourceBinding of a workload (anti-)affinity group, as the scheduler sees it now: its stored copy, or
    the copy our own spec write returned when that one is newer (Karmada's "assigning" bindings)."""

    namespace: str
    name: str
    affinity_group: str
    anti_affinity_group: str
    clusters: frozenset[str]
    """The names in its `spec.clusters`."""
    comparable: bool = True
    """False when its two copies' resourceVersions could not be compared (Karmada then fails the cluster)."""


class WorkloadGroups(Protocol):
    """A read-only view of which ResourceBindings are in which workload (anti-)affinity group, and which
    clusters they target (Karmada's binding indexers by `spec.workloadAffinityGroups`, gate `WorkloadAffinity`).
    Kept up to date by the scheduling layer; the filters only read it."""

    def affinity_members(self, group: str) -> Sequence[GroupMember]:
        """Every ResourceBinding whose stored `affinityGroup` is `group`, in any namespace."""

    def anti_affinity_members(self, group: str) -> Sequence[GroupMember]:
        """Every ResourceBinding whose stored `antiAffinityGroup` is `group`, in any namespace."""


@dataclass(slots=True)
class CycleState:
    """What one pass learns on its way through the framework (kube-scheduler's CycleState): the assumptions it
    estimated with and their versions per cluster (which Reserve checks), and `data`, the plugins' scratch space
    for the pass (key it by the plugin's name)."""

    assumed: Mapping[str, AssumedLoad] = field(default_factory=dict)
    versions: Mapping[str, int] = field(default_factory=dict)
    claimed: dict[str, int] = field(default_factory=dict)
    """The replicas other bindings' preemption claims took from each candidate (given back to plan a preemption)."""
    room: Mapping[str, int] = field(default_factory=dict)
    """Each candidate's room for the binding's new replicas as the merged estimates gave it (what `spec.clusters`
    already places there left out), recorded where Reserve may weigh what was assumed since against it instead
    of refusing any change (empty: it refuses)."""
    room_now: Callable[[Sequence[str]], Mapping[str, int]] | None = None
    """Where the pass's estimate can be made again exactly (the general estimator alone): the room each of the
    named candidates has for the binding's new replicas now, what is assumed there now deducted (Reserve weighs
    a changed cluster against it rather than against `room`)."""
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class AttemptContext:
    """What every plugin of one attempt sees: the binding being scheduled (with the affinity term under trial set
    in its status), the snapshot, the target names and affinities derived from the binding once, the workload
    groups view (None unless gate `WorkloadAffinity` is on) and the pass's cycle state."""

    binding: Binding
    snapshot: Snapshot
    targets: frozenset[str]
    affinities: tuple[ClusterAffinity, ...]
    workload_groups: WorkloadGroups | None = None
    state: CycleState = field(default_factory=CycleState)

    @classmethod
    def of(
        cls,
        binding: Binding,
        snapshot: Snapshot,
        workload_groups: WorkloadGroups | None = None,
        state: CycleState | None = None,
    ) -> AttemptContext:
        return cls(
            binding=binding,
            snapshot=snapshot,
            targets=binding.target_names,
            affinities=collect_affinities(binding),
            workload_groups=workload_groups,
            state=state if state is not None else CycleState(),
        )


def collect_affinities(binding: Binding) -> tuple[ClusterAffinity, ...]:
    """The affinities a cluster must match one of: clusterAffinity, or the observed term (+ its overflow
    affinities for workloads). Empty means no affinity constraint."""
    placement = binding.placement
    if placement is None:
        return ()
    if placement.cluster_affinity is not None:
        return (placement.cluster_affinity,)
    term = placement.term(binding.status.scheduler_observing_affinity_name)
    if term is None:
        return ()
    overflow = tuple(o.affinity for o in term.overflow_affinities or ()) if binding.is_workload else ()
    return (term.affinity, *overflow)


@runtime_checkable
class FilterPlugin(Protocol):
    name: str

    def filter(self, ctx: AttemptContext, cluster: Cluster) -> str | None: ...


@runtime_checkable
class ScorePlugin(Protocol):
    name: str

    def score(self, ctx: AttemptContext, cluster: Cluster) -> int: ...


@runtime_checkable
class BatchFilter(Protocol):
    def filter_many(self, ctx: AttemptContext, clusters: Sequence[Cluster]) -> Mapping[str, str]:
        """The failing clusters among `clusters`, by name, with their reasons."""


class FilterMask:
    """A filter's verdict over the whole fleet: `failed` is true at the clusters it fails, `reason` their
    unschedulable reason (one for all, or each one's by fleet index)."""

    __slots__ = ("_where", "failed", "reason")

    def __init__(self, failed: Mask, reason: str | Callable[[int], str]) -> None:
        self.failed = failed
        self.reason = reason
        self._where: list[int] | None = None

    @property
    def where(self) -> list[int]:
        """The fleet indices of the failed clusters, ascending."""
        if self._where is None:
            self._where = self.failed.nonzero()[0].tolist()
        return self._where

    def __bool__(self) -> bool:
        return bool(self._where) if self._where is not None else bool(self.failed.any())

    def reason_at(self, index: int) -> str:
        return self.reason if isinstance(self.reason, str) else self.reason(index)


class Diagnosis(LazyMapping[str, str]):
    """Each failed cluster's reason by name, in the order the filters failed them: read from their verdicts on
    first use, since only a decision that finds no cluster reports it."""

    __slots__ = ("_failures", "_names")

    def __init__(self, names: Sequence[str], failures: Sequence[FilterMask]) -> None:
        super().__init__()
        self._names = names
        self._failures = failures

    def reason_counts(self) -> dict[str, int]:
        """How many clusters failed for each reason (what a FitError's message says), without naming them: the
        filters' masks are disjoint (each sees only the clusters still feasible)."""
        counts: dict[str, int] = {}
        for failed in self._failures:
            reason = failed.reason
            if isinstance(reason, str):
                counts[reason] = counts.get(reason, 0) + int(np.count_nonzero(failed.failed))
            else:
                for index in failed.where:
                    text = reason(index)
                    counts[text] = counts.get(text, 0) + 1
        return counts

    def _build(self) -> dict[str, str]:
        names, by_name = self._names, {}
        for failed in self._failures:
            reason = failed.reason
            if isinstance(reason, str):
                by_name.update(dict.fromkeys(map(names.__getitem__, failed.where), reason))
            else:
                by_name.update((names[index], reason(index)) for index in failed.where)
        return by_name


@runtime_checkable
class MaskFilter(Protocol):
    """A filter that answers for the whole fleet at once: every in-tree filter. Out-of-tree plugins may implement
    it instead of `FilterPlugin.filter`."""

    name: str

    def filter_mask(self, ctx: AttemptContext, fleet: FleetColumns) -> FilterMask:
        """The verdict for every cluster of the snapshot (`fleet` is its columns); the framework keeps only the
        clusters still feasible."""


@runtime_checkable
class BatchScore(Protocol):
    def score_many(self, ctx: AttemptContext, clusters: Sequence[Cluster]) -> Mapping[str, int]:
        """The non-zero scores among `clusters`, by name."""


@runtime_checkable
class FleetScore(Protocol):
    def score_fleet(self, ctx: AttemptContext, fleet: FleetColumns, feasible: Indices) -> Mapping[str, int]:
        """The non-zero scores among the clusters at `feasible` (fleet indices, ascending), by name."""


@runtime_checkable
class EstimatePlugin(Protocol):
    name: str

    async def estimate(self, ctx: AttemptContext, clusters: Sequence[Cluster]) -> Mapping[str, int]:
        """Replicas each cluster still takes (-1 or absent: no answer); merged with the others by minimum."""


@runtime_checkable
class SelectPlugin(Protocol):
    name: str

    def select(self, ctx: AttemptContext, candidates: Sequence[ClusterDetail], need: int) -> Sequence[ClusterDetail]:
        """The clusters to place on, among the scored and estimated candidates (raise SchedulingError to fail)."""


@runtime_checkable
class AssignPlugin(Protocol):
    name: str

    def assign(self, ctx: AttemptContext, selected: Sequence[ClusterDetail]) -> Sequence[TargetCluster]:
        """The replicas per selected cluster (raise SchedulingError to fail)."""


@runtime_checkable
class ReservePlugin(Protocol):
    name: str

    def reserve(self, binding: Binding, result: Sequence[TargetCluster]) -> None:
        """A decision is about to be written."""

    def unreserve(self, binding: Binding, result: Sequence[TargetCluster]) -> None:
        """The decision reserved did not land (a conflict, an error, a cancellation)."""


@runtime_checkable
class BindPlugin(Protocol):
    name: str

    def bound(self, binding: Binding, result: Sequence[TargetCluster]) -> None:
        """The decision's writes landed."""


EXTENSION_METHODS = ("filter", "filter_mask", "score", "estimate", "select", "assign", "reserve", "bound")


class PluginError(ValueError):
    """A plugin set cannot be built (for example two plugins share a name)."""

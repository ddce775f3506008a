"""The pure steps of one scheduling attempt: candidates -> estimates -> select -> assign (Karmada's
`pkg/scheduler/core/generic_scheduler.go: genericScheduler.Schedule`).

The framework (`scheduling.framework`) runs them in order, with the plugins, the accurate estimators, the
hooks and the Reserve step around them; nothing here measures, records or awaits.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeAlias, overload

import numpy as np
import numpy.typing as npt

from ..model import (
    Binding,
    Cluster,
    ClusterAffinity,
    Placement,
    SpreadField,
    TargetCluster,
    TargetComponent,
)
from .affinity import cluster_matches
from .assign import assign_replicas
from .candidates import (
    DEFAULT_OVERFLOW_ORDER,
    UNMATCHED_OVERFLOW_ORDER,
    ClusterDetail,
    OrderedCandidates,
    names_of,
)
from .errors import SchedulingError, no_checkpoint
from .estimates import MAX_INT32, UNAUTHENTIC_REPLICA
from .fleet import FleetColumns, Indices
from .general_estimator import AssumedWorkload, estimate_component_sets, estimate_replicas
from .general_estimator.columns import AssumedAt, replicas_with_assumed, summary_columns
from .lazy_mapping import LazyMapping
from .multi_template import multi_template_applicable
from .plugins import AttemptContext
from .snapshot import Snapshot
from .spread import every_candidate_selected, every_selected_note
from .spread.groups import Keyed, Members, OrderedClusters, keyed_by_cluster_field, keyed_by_codes
from .spread.select import select_ordered
from .static_weight import SnapshotWeights

IntColumn: TypeAlias = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class ScheduleOptions:
    enable_empty_workload_propagation: bool = False
    multiple_pod_templates: bool = False
    """Karmada's alpha gate `MultiplePodTemplatesScheduling` (off by default)."""
    cpu_limit: float = 10.0
    """The CPU seconds one decision may take (`decisionCPULimit`); enforced by the caller's checkpoint."""


DEFAULT_OPTIONS = ScheduleOptions()


class Candidates:
    """The clusters that passed every filter, in snapshot order, as columns: their fleet `indices` (into
    `snapshot.columns`), `score`, `overflow` order and, once estimated, `allocatable` and `available`.

    `details` gives them as `ClusterDetail` objects, built on first use (the consumers that need objects: spread
    selection, the select and assign plugins, the preemption planner, `explain`); until then the columns are the
    truth, and `estimated` writes them (dropping any objects built before)."""

    __slots__ = ("_built", "_details", "allocatable", "available", "binding", "context", "diagnosis", "indices",
                 "overflow", "score")

    def __init__(
        self, binding: Binding, context: AttemptContext, indices: Indices, score: IntColumn, overflow: IntColumn,
        diagnosis: Mapping[str, str] | None = None,
    ) -> None:
        self.binding = binding
        self.context = context
        self.indices = indices
        self.score = score
        self.overflow = overflow
        self.diagnosis: Mapping[str, str] = diagnosis if diagnosis is not None else {}
        self.allocatable: IntColumn = np.zeros(len(indices), dtype=np.int64)
        self.available: IntColumn = np.zeros(len(indices), dtype=np.int64)
        self._details: list[ClusterDetail] | None = None
        self._built: dict[int, ClusterDetail] = {}

    def __len__(self) -> int:
        return len(self.indices)

    @property
    def fleet(self) -> FleetColumns:
        return self.context.snapshot.columns

    @property
    def names(self) -> list[str]:
        names = self.fleet.names
        return [names[i] for i in self.indices.tolist()]

    @property
    def clusters(self) -> list[Cluster]:
        return self.fleet.clusters_at(self.indices.tolist())

    @property
    def details(self) -> list[ClusterDetail]:
        if self._details is None:
            self._details = [
                ClusterDetail(cluster, score, allocatable, available, overflow)
                for cluster, score, allocatable, available, overflow in zip(
                    self.clusters, self.score.tolist(), self.allocatable.tolist(), self.available.tolist(),
                    self.overflow.tolist(), strict=True)
            ]
        return self._details

    def detail_at(self, position: int) -> ClusterDetail:
        """The `ClusterDetail` of the candidate at `position`, built alone when `details` has not been."""
        if self._details is not None:
            return self._details[position]
        detail = self._built.get(position)
        if detail is None:
            detail = ClusterDetail(self.fleet.snapshot.clusters[int(self.indices[position])],
                                   int(self.score[position]), int(self.allocatable[position]),
                                   int(self.available[position]), int(self.overflow[position]))
            self._built[position] = detail
        return detail

    def estimated(self, allocatable: IntColumn, available: IntColumn) -> None:
        self.allocatable, self.available = allocatable, available
        self._details = None
        self._built = {}

    def positions(self, names: Iterable[str]) -> dict[str, int]:
        """Where each of `names` that is a candidate stands in the columns."""
        return self.fleet.positions_in(self.indices, names)

    def order(self) -> Indices:
        """The positions in Karmada's candidate order: overflow order ascending, then score, then available
        replicas descending, then name ascending (`sort_candidates`, as one lexsort: its last key is the first)."""
        keys = [self.fleet.rank[self.indices], -self.available]
        if self.score.any():
            keys.append(-self.score)
        if self.overflow.any():
            keys.append(self.overflow)
        return np.lexsort(keys)  # a key that is 0 everywhere orders nothing: left out

    def ordered_details(self) -> list[ClusterDetail]:
        details = self.details
        return [details[k] for k in self.order().tolist()]

    def ordered_clusters(self) -> OrderedClusters:
        """The candidates in Karmada's order for spread selection: columns for the grouping, objects built only
        for the clusters selection looks at."""
        order = self.order()
        at = self.indices[order]
        fleet = self.fleet

        def keyed(field: SpreadField) -> Keyed:
            if field is SpreadField.ZONE:
                return keyed_by_cluster_field(field, fleet.clusters_at(at.tolist()))
            codes, names = fleet.topology_codes(field.value)
            return keyed_by_codes(codes[at], names)

        positions = order.tolist()
        return OrderedClusters(Members(_Positions(self), positions), self.available[order], self.score[order], keyed)


class _Positions(Sequence[ClusterDetail]):
    """A candidates' `ClusterDetail` by column position, each built on first access."""

    __slots__ = ("_candidates",)

    def __init__(self, candidates: Candidates) -> None:
        self._candidates = candidates

    def __len__(self) -> int:
        return len(self._candidates)

    @overload
    def __getitem__(self, index: int) -> ClusterDetail: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[ClusterDetail]: ...

    def __getitem__(self, index: int | slice) -> ClusterDetail | Sequence[ClusterDetail]:
        if isinstance(index, slice):
            return [self._candidates.detail_at(k) for k in range(len(self))[index]]
        return self._candidates.detail_at(index)


class ClusterValues(LazyMapping[str, int]):
    """One number per candidate, by cluster name, read from a column (the dict is built only when read)."""

    def __init__(self, candidates: Candidates, values: IntColumn) -> None:
        super().__init__()
        self._candidates = candidates
        self._values = values

    def _build(self) -> dict[str, int]:
        return dict(zip(self._candidates.names, self._values.tolist(), strict=True))

    def __len__(self) -> int:
        return len(self._values)


def _overflow_tiers(binding: Binding) -> list[ClusterAffinity] | None:
    """The observed term's affinity, then each of its overflow affinities; None without ClusterAffinities or an
    observed term (every cluster is then in tier 0)."""
    placement = binding.placement
    if placement is None or placement.cluster_affinity is not None or not placement.cluster_affinities:
        return None
    term = placement.term(binding.status.scheduler_observing_affinity_name)
    if term is None:
        return None
    return [term.affinity, *(o.affinity for o in term.overflow_affinities or ())]


def overflow_order(binding: Binding, cluster: Cluster, snapshot: Snapshot | None = None) -> int:
    """0 for the observed term's own affinity, i+1 for its i-th overflow affinity, 1000 for none."""
    tiers = _overflow_tiers(binding)
    if tiers is None:
        return DEFAULT_OVERFLOW_ORDER
    matches = snapshot.matches if snapshot is not None else cluster_matches
    return next((i for i, affinity in enumerate(tiers) if matches(cluster, affinity)), UNMATCHED_OVERFLOW_ORDER)


def _overflow_orders(binding: Binding, indices: Indices, fleet: FleetColumns) -> IntColumn:
    """`overflow_order` of each candidate, over the fleet's columns."""
    tiers = _overflow_tiers(binding)
    if tiers is None:
        return np.full(len(indices), DEFAULT_OVERFLOW_ORDER, dtype=np.int64)
    orders = np.full(len(indices), UNMATCHED_OVERFLOW_ORDER, dtype=np.int64)
    for tier in reversed(range(len(tiers))):  # the first matching tier is written last
        orders[fleet.matching((tiers[tier],))[indices]] = tier
    return orders


def candidates_of(
    binding: Binding, ctx: AttemptContext, feasible: Indices, scores: Mapping[str, int],
    diagnosis: Mapping[str, str],
) -> Candidates:
    """The feasible clusters (fleet indices, ascending) as candidates: their scores, and for a ClusterAffinities
    term with overflow affinities, which tier each one matches."""
    fleet = ctx.snapshot.columns
    score = np.zeros(len(feasible), dtype=np.int64)
    candidates = Candidates(binding, ctx, feasible, score, _overflow_orders(binding, feasible, fleet), diagnosis)
    if scores:
        for name, position in candidates.positions(scores).items():
            score[position] = scores[name]
    return candidates


def needs_estimates(binding: Binding) -> bool:
    """Non-workloads (no replicas, no components) get MaxInt32 everywhere; estimators are not asked."""
    return binding.replicas != 0 or bool(binding.components)


def general_estimates(
    binding: Binding,
    clusters: Sequence[Cluster],
    snapshot: Snapshot,
    options: ScheduleOptions = DEFAULT_OPTIONS,
    assumed: Mapping[str, Sequence[AssumedWorkload]] | None = None,
) -> dict[str, int]:
    """`general_column` by cluster name, for clusters of `snapshot`."""
    index = snapshot.columns.index
    indices = np.array([index[c.name] for c in clusters], dtype=np.intp)
    return dict(zip([c.name for c in clusters], general_column(binding, indices, snapshot, options, assumed).tolist(),
                    strict=True))


def general_column(
    binding: Binding,
    indices: Indices,
    snapshot: Snapshot,
    options: ScheduleOptions = DEFAULT_OPTIONS,
    assumed: Mapping[str, Sequence[AssumedWorkload]] | AssumedAt | None = None,
) -> IntColumn:
    """The general estimate at each of the fleet `indices`: replicas, or whole component sets for a
    multi-template binding. Without assumed workloads on a cluster, the answer is computed once per snapshot for
    all live clusters and each distinct request (bindings of one workload shape share it); `assumed` (the
    overcommit protection's assumptions: by cluster, or as columns over the candidates) are deducted where
    present."""
    cache = snapshot.estimator
    fleet = snapshot.columns
    multi = multi_template_applicable(binding, options.multiple_pod_templates)

    def fleet_column(answers: Mapping[str, int]) -> IntColumn:
        return np.fromiter((answers.get(name, 0) for name in fleet.names), dtype=np.int64, count=len(fleet))

    if multi:
        components = binding.components
        every = snapshot.memo(("general-sets", components), lambda: fleet_column(
            estimate_component_sets(snapshot.live, components, cache=cache)))
    else:
        requirements = binding.replica_requirements
        every = snapshot.memo(("general-estimate", requirements), lambda: fleet_column(
            estimate_replicas(snapshot.live, requirements, cache=cache)))
    answers = every[indices]
    if not assumed:
        return answers
    if isinstance(assumed, AssumedAt):
        return _with_assumed_columns(binding, indices, snapshot, multi, assumed, answers)
    names = fleet.names
    held = [(position, names[i]) for position, i in enumerate(indices.tolist()) if assumed.get(names[i])]
    _estimate_again(binding, snapshot, multi, held, {name: assumed[name] for _, name in held}, answers)
    return answers


def _with_assumed_columns(
    binding: Binding, indices: Indices, snapshot: Snapshot, multi: bool, assumed: AssumedAt, answers: IntColumn
) -> IntColumn:
    """`answers` with the assumptions deducted where held: as columns on the summary path, per cluster where
    resource models place the workloads, and for component sets."""
    held = assumed.held
    if not held.any():
        return answers
    columns = summary_columns(snapshot)
    summary = held & columns.has_summary[indices]
    if not multi:
        vector = summary & ~columns.modelled[indices]
        positions = np.flatnonzero(vector)
        if len(positions):
            answers[positions] = replicas_with_assumed(indices, binding.replica_requirements, assumed, columns,
                                                       snapshot.estimator, positions)
        summary &= ~vector
    names = snapshot.columns.names
    one_by_one = [(position, names[i]) for position, i in zip(np.flatnonzero(summary).tolist(),
                                                               indices[summary].tolist(), strict=True)]
    loads: dict[str, Sequence[AssumedWorkload]] = {}
    for _, name in one_by_one:
        load = assumed.load(name)
        if load is not None:
            loads[name] = load
    _estimate_again(binding, snapshot, multi, [(p, n) for p, n in one_by_one if n in loads], loads, answers)
    return answers


def _estimate_again(
    binding: Binding,
    snapshot: Snapshot,
    multi: bool,
    held: Sequence[tuple[int, str]],
    loads: Mapping[str, Sequence[AssumedWorkload]],
    answers: IntColumn,
) -> None:
    """The estimate again at each held (position, cluster), its assumed workloads deducted, into `answers`."""
    if not held:
        return
    index = snapshot.columns.index
    clusters = snapshot.clusters
    live = [clusters[index[name]] for _, name in held]
    cache = snapshot.estimator
    if multi:
        again = estimate_component_sets(live, binding.components, loads, cache=cache)
    else:
        again = estimate_replicas(live, binding.replica_requirements, loads, cache=cache)
    for position, name in held:
        answers[position] = again[name]


def apply_estimates(candidates: Candidates, general: IntColumn | None, others: Sequence[Mapping[str, int]]) -> None:
    """Merge the estimators' answers into allocatable/available (Karmada's
    `pkg/scheduler/core/util.go: calAvailableReplicas`, and
    `pkg/scheduler/core/spreadconstraint/group_clusters.go: generateClustersInfo` for available): `general` is
    the general estimator's column, `others` the accurate estimators' and the plugins' answers by name.

    Per cluster, the minimum over the answers, from MaxInt32; an answer of -1 ("I do not know") takes no part,
    nor do answers for clusters that are not candidates. A cluster still at MaxInt32 afterwards (no estimator
    knew, or one answered exactly MaxInt32) gets the binding's `spec.replicas`. A failed estimator is not passed
    at all: `calAvailableReplicas` skips an estimator that returns an error (and Karmada's accurate estimator errs
    when any one cluster fails: `pkg/estimator/client/accurate.go: getClusterReplicasConcurrently`). Available
    adds the replicas `spec.clusters` already gives the cluster."""
    binding = candidates.binding
    assigned = np.zeros(len(candidates), dtype=np.int64)
    previous = {t.name: t.replicas for t in binding.clusters}
    for name, position in candidates.positions(previous).items():
        assigned[position] = previous[name]
    if not needs_estimates(binding):
        allocatable = np.full(len(candidates), MAX_INT32, dtype=np.int64)
        candidates.estimated(allocatable, allocatable + assigned)
        return
    columns = [] if general is None else [general]
    if others:
        names = candidates.names
        columns += [_answer_column(answer, names) for answer in others]
    allocatable = merged_estimates(columns, len(candidates), binding.replicas)
    candidates.estimated(allocatable, allocatable + assigned)


def merged_estimates(columns: Sequence[IntColumn], size: int, replicas: int) -> IntColumn:
    """`apply_estimates`' merge of estimator columns of `size` clusters: per cluster the minimum from MaxInt32,
    -1 taking no part; a cluster still at MaxInt32 gets the binding's `replicas`."""
    best = np.full(size, MAX_INT32, dtype=np.int64)
    for column in columns:
        take = (column != UNAUTHENTIC_REPLICA) & (column < best)
        best[take] = column[take]
    return np.where(best == MAX_INT32, replicas, best)


def _answer_column(answer: Mapping[str, int], names: Sequence[str]) -> IntColumn:
    """An answer by name as a column over `names`: -1 where it says nothing; values past int32 are MaxInt32 (the
    merge ignores both alike)."""
    return np.fromiter((min(answer.get(name, UNAUTHENTIC_REPLICA), MAX_INT32) for name in names), dtype=np.int64,
                       count=len(names))


def needed_replicas(binding: Binding, options: ScheduleOptions = DEFAULT_OPTIONS) -> int:
    """What selection must find room for: the replicas, or one whole set for a multi-template binding."""
    return 1 if multi_template_applicable(binding, options.multiple_pod_templates) else binding.replicas


def select(
    candidates: Candidates,
    trace: list[str] | None = None,
    options: ScheduleOptions = DEFAULT_OPTIONS,
    checkpoint: Callable[[], None] = no_checkpoint,
) -> Sequence[ClusterDetail]:
    """Karmada's spread selection (every candidate in order, when no spread constraint applies: its names known
    without building objects). `checkpoint` is called along the searches that can be long (it may raise to
    abandon the decision)."""
    binding = candidates.binding
    reason = every_candidate_selected(binding.placement or Placement())
    if reason is not None:
        if trace is not None:
            trace.append(every_selected_note(reason, len(candidates)))
        fleet = candidates.fleet
        return OrderedCandidates(fleet.names, candidates.indices, candidates.ordered_details, order=candidates.order,
                                 targets_of=fleet.targets_of, allocatable=candidates.allocatable, ranks=fleet.rank)
    try:
        return select_ordered(
            binding, candidates.ordered_clusters(), needed_replicas(binding, options), trace=trace,
            checkpoint=checkpoint,
        )
    except SchedulingError as error:
        raise error.wrapped("failed to select clusters") from error


def assign(
    candidates: Candidates, selected: Sequence[ClusterDetail], options: ScheduleOptions = DEFAULT_OPTIONS
) -> list[TargetCluster]:
    try:
        result = assign_replicas(candidates.binding, selected, weights=SnapshotWeights(candidates.fleet))
    except SchedulingError as error:
        raise error.wrapped("failed to assign replicas") from error
    return with_empty_workloads(with_components(candidates.binding, result, options), selected, options)


def with_components(binding: Binding, result: list[TargetCluster], options: ScheduleOptions) -> list[TargetCluster]:
    """A multi-component workload placed on its one cluster carries each component's replicas there
    (`spec.clusters[].components`, karmada-io/karmada #7833, gate MultiplePodTemplatesScheduling); a single-component
    workload keeps the plain result."""
    if len(result) != 1 or len(binding.components) < 2:
        return result
    if not multi_template_applicable(binding, options.multiple_pod_templates):
        return result
    components = tuple(TargetComponent(c.name, c.replicas) for c in binding.components)
    return [result[0]._replace(components=components)]


def with_empty_workloads(
    result: list[TargetCluster], selected: Sequence[ClusterDetail], options: ScheduleOptions
) -> list[TargetCluster]:
    """`--enable-empty-workload-propagation`: selected clusters that received nothing are listed with 0."""
    if not options.enable_empty_workload_propagation:
        return result
    present = {t.name for t in result}
    return result + [TargetCluster(name) for name in names_of(selected) if name not in present]

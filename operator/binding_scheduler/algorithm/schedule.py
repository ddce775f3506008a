"""The pure steps of one scheduling attempt: candidates -> estimates -> select -> assign (Karmada's
`pkg/scheduler/core/generic_scheduler.go: genericScheduler.Schedule`).

The framework (`scheduling.framework`) runs them in order, with the plugins, the accurate estimators, the
hooks and the Reserve step around them; nothing here measures, records or awaits.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from ..model import Binding, Cluster, TargetCluster, TargetComponent, WeightPreference
from .affinity import cluster_matches
from .assign import assign_replicas
from .candidates import DEFAULT_OVERFLOW_ORDER, UNMATCHED_OVERFLOW_ORDER, ClusterDetail
from .errors import SchedulingError, no_checkpoint
from .estimates import merge_estimates
from .general_estimator import AssumedWorkload, estimate_component_sets, estimate_replicas
from .multi_template import multi_template_applicable
from .plugins import AttemptContext
from .snapshot import Snapshot
from .spread import select_best_clusters
from .static_weight import rule_weights

MAX_INT32 = 2**31 - 1


@dataclass(frozen=True, slots=True)
class ScheduleOptions:
    enable_empty_workload_propagation: bool = False
    multiple_pod_templates: bool = False
    """Karmada's alpha gate `MultiplePodTemplatesScheduling` (off by default)."""
    cpu_limit: float = 10.0
    """The CPU seconds one decision may take (`decisionCPULimit`); enforced by the caller's checkpoint."""


DEFAULT_OPTIONS = ScheduleOptions()


@dataclass(slots=True)
class Candidates:
    """The clusters that passed every filter, scored, in snapshot order; estimates not yet applied."""

    binding: Binding
    context: AttemptContext
    details: list[ClusterDetail]
    diagnosis: dict[str, str] = field(default_factory=dict)

    @property
    def clusters(self) -> list[Cluster]:
        return [d.cluster for d in self.details]


def overflow_order(binding: Binding, cluster: Cluster, snapshot: Snapshot | None = None) -> int:
    """0 for the observed term's own affinity, i+1 for its i-th overflow affinity, 1000 for none."""
    placement = binding.placement
    if placement is None or placement.cluster_affinity is not None or not placement.cluster_affinities:
        return DEFAULT_OVERFLOW_ORDER
    term = placement.term(binding.status.scheduler_observing_affinity_name)
    if term is None:
        return DEFAULT_OVERFLOW_ORDER
    matches = snapshot.matches if snapshot is not None else cluster_matches
    if matches(cluster, term.affinity):
        return 0
    for i, overflow in enumerate(term.overflow_affinities or ()):
        if matches(cluster, overflow.affinity):
            return i + 1
    return UNMATCHED_OVERFLOW_ORDER


def _overflow_orders(binding: Binding, clusters: Sequence[Cluster], snapshot: Snapshot) -> list[int]:
    """`overflow_order` of each cluster, with each tier's matching clusters looked up once (a memo lookup hashes
    the affinity: once per cluster was a fifth of a pass at 1,000 clusters)."""
    placement = binding.placement
    term = None if placement is None else placement.term(binding.status.scheduler_observing_affinity_name)
    if term is None:
        return [overflow_order(binding, c, snapshot) for c in clusters]
    tiers = [snapshot.matching(term.affinity), *(snapshot.matching(o.affinity) for o in term.overflow_affinities or ())]
    by_name = snapshot.by_name
    orders = []
    for cluster in clusters:
        if by_name.get(cluster.name) is not cluster:
            orders.append(overflow_order(binding, cluster, snapshot))
            continue
        name = cluster.name
        orders.append(next((i for i, tier in enumerate(tiers) if name in tier), UNMATCHED_OVERFLOW_ORDER))
    return orders


def _has_overflow_tiers(binding: Binding) -> bool:
    placement = binding.placement
    return placement is not None and placement.cluster_affinity is None and bool(placement.cluster_affinities)


def candidates_of(
    binding: Binding, ctx: AttemptContext, feasible: Sequence[Cluster], scores: Mapping[str, int],
    diagnosis: dict[str, str],
) -> Candidates:
    """The feasible clusters as candidates: their scores, and for a ClusterAffinities term with overflow
    affinities, which tier each one matches."""
    snapshot = ctx.snapshot
    if _has_overflow_tiers(binding):
        orders = _overflow_orders(binding, feasible, snapshot)
        details = [
            ClusterDetail(cluster=c, score=scores.get(c.name, 0), overflow_order=order)
            for c, order in zip(feasible, orders, strict=True)
        ]
    elif scores:
        details = [ClusterDetail(c, scores.get(c.name, 0)) for c in feasible]
    else:
        details = [ClusterDetail(c) for c in feasible]
    return Candidates(binding=binding, context=ctx, details=details, diagnosis=diagnosis)


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
    """The general estimate per cluster: replicas, or whole component sets for a multi-template binding.
    Without assumed workloads on a cluster, the answer is computed once per snapshot for all live clusters and
    each distinct request (bindings of one workload shape share it); `assumed` (the overcommit protection's
    assumptions, by cluster) are deducted where present."""
    cache = snapshot.estimator
    multi = multi_template_applicable(binding, options.multiple_pod_templates)
    if multi:
        components = binding.components
        every = snapshot.memo(
            ("general-sets", components),
            lambda: estimate_component_sets(snapshot.live, components, cache=cache),
        )
    else:
        requirements = binding.replica_requirements
        every = snapshot.memo(
            ("general-estimate", requirements),
            lambda: estimate_replicas(snapshot.live, requirements, cache=cache),
        )
    answers = {c.name: every[c.name] for c in clusters}
    held = {c.name: assumed[c.name] for c in clusters if assumed and assumed.get(c.name)}
    if held:
        live = [c for c in clusters if c.name in held]
        if multi:
            answers.update(estimate_component_sets(live, binding.components, held, cache=cache))
        else:
            answers.update(estimate_replicas(live, binding.replica_requirements, held, cache=cache))
    return answers


def apply_estimates(candidates: Candidates, answers: Sequence[Mapping[str, int]]) -> None:
    """Merge the estimators' answers into allocatable/available (Karmada's
    `pkg/scheduler/core/util.go: calAvailableReplicas`, and
    `pkg/scheduler/core/spreadconstraint/group_clusters.go: generateClustersInfo` for available)."""
    binding = candidates.binding
    assigned = {t.name: t.replicas for t in binding.clusters}
    details = candidates.details
    if not needs_estimates(binding):
        for detail in details:
            detail.allocatable = MAX_INT32
            detail.available = MAX_INT32 + assigned.get(detail.name, 0)
        return
    if len(answers) == 1:  # the general estimator alone: merge_estimates' rule without building its dict
        only, replicas = answers[0], binding.replicas
        for detail in details:
            value = only.get(detail.name)
            allocatable = replicas if value is None or value == -1 or value >= MAX_INT32 else value
            detail.allocatable = allocatable
            detail.available = allocatable + assigned.get(detail.name, 0)
        return
    merged = merge_estimates([d.name for d in details], binding.replicas, answers)
    for detail in details:
        detail.allocatable = merged[detail.name]
        detail.available = detail.allocatable + assigned.get(detail.name, 0)


def needed_replicas(binding: Binding, options: ScheduleOptions = DEFAULT_OPTIONS) -> int:
    """What selection must find room for: the replicas, or one whole set for a multi-template binding."""
    return 1 if multi_template_applicable(binding, options.multiple_pod_templates) else binding.replicas


def select(
    candidates: Candidates,
    trace: list[str] | None = None,
    options: ScheduleOptions = DEFAULT_OPTIONS,
    checkpoint: Callable[[], None] = no_checkpoint,
) -> list[ClusterDetail]:
    """Karmada's spread selection. `checkpoint` is called along the searches that can be long (it may raise to
    abandon the decision)."""
    binding = candidates.binding
    try:
        return select_best_clusters(
            binding, candidates.details, needed_replicas(binding, options), trace=trace, checkpoint=checkpoint
        )
    except SchedulingError as error:
        raise error.wrapped("failed to select clusters") from error


def assign(
    candidates: Candidates, selected: Sequence[ClusterDetail], options: ScheduleOptions = DEFAULT_OPTIONS
) -> list[TargetCluster]:
    snapshot = candidates.context.snapshot

    def weight_table(preference: WeightPreference) -> Mapping[str, int]:
        key = ("static-weights", preference.static_weight_list)
        return snapshot.memo(key, lambda: rule_weights(snapshot.clusters, preference))

    try:
        result = assign_replicas(candidates.binding, selected, weight_table=weight_table)
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
    return result + [TargetCluster(d.name) for d in selected if d.name not in present]

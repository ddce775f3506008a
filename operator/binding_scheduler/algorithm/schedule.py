"""One scheduling attempt (reference 2.1): filter -> score -> estimate -> select -> assign.

The attempt is split where the accurate estimators are asked: `filter_and_score` (pure, may raise FitError),
then the caller gathers estimates (the general estimator here, the gRPC ones in the async layer), then
`select_and_assign`. `schedule` runs all three with the general estimator only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from time import perf_counter

from ..model import Binding, Cluster, TargetCluster, WeightPreference
from .affinity import cluster_matches
from .assign import assign_replicas
from .candidates import DEFAULT_OVERFLOW_ORDER, UNMATCHED_OVERFLOW_ORDER, ClusterDetail
from .errors import FitError, SchedulingError, no_checkpoint
from .estimates import merge_estimates
from .general_estimator import estimate_component_sets, max_available_replicas
from .multi_template import multi_template_applicable
from .observe import Observer
from .plugins import FilterContext
from .registry import PluginSet
from .snapshot import Snapshot
from .spread import select_best_clusters
from .static_weight import rule_weights

MAX_INT32 = 2**31 - 1


@dataclass(frozen=True, slots=True)
class ScheduleOptions:
    enable_empty_workload_propagation: bool = False
    multiple_pod_templates: bool = False
    """Karmada's alpha gate `MultiplePodTemplatesScheduling` (off by default)."""
    observer: Observer | None = field(default=None, compare=False)
    """Told how long each step and plugin took (the scheduler's metrics); None measures nothing."""
    cpu_limit: float = 10.0
    """The CPU seconds one decision may take (`decisionCPULimit`); enforced by the caller's checkpoint."""


DEFAULT_OPTIONS = ScheduleOptions()


@dataclass(slots=True)
class Candidates:
    """The clusters that passed every filter, scored, in snapshot order; estimates not yet applied."""

    binding: Binding
    context: FilterContext
    details: list[ClusterDetail]
    diagnosis: dict[str, str] = field(default_factory=dict)

    @property
    def clusters(self) -> list[Cluster]:
        return [d.cluster for d in self.details]


def run_filters(
    ctx: FilterContext, plugins: PluginSet, observer: Observer | None = None
) -> tuple[list[Cluster], dict[str, str]]:
    """Every live cluster through the filters in order; a cluster stops at its first failure."""
    remaining: list[Cluster] = list(ctx.snapshot.live)
    diagnosis: dict[str, str] = {}
    for plugin_name, run_filter in plugins.filter_runners:
        if not remaining:
            break
        started = perf_counter()
        try:
            failures = run_filter(ctx, remaining)
        except Exception as error:  # a Python plugin's bug: the binding says which plugin, the others go on
            if observer is not None:
                observer.plugin(plugin_name, "Filter", "Error", perf_counter() - started)
            raise SchedulingError(f'failed to filter clusters: plugin "{plugin_name}" failed with: {error}') from error
        if observer is not None:
            observer.plugin(plugin_name, "Filter", "Unschedulable" if failures else "Success", perf_counter() - started)
        if failures:
            diagnosis.update(failures)
            remaining = [c for c in remaining if c.name not in failures]
    return remaining, diagnosis


def run_scores(
    ctx: FilterContext, plugins: PluginSet, clusters: Sequence[Cluster], observer: Observer | None = None
) -> dict[str, int]:
    totals: dict[str, int] = {}
    for plugin_name, run_score in plugins.score_runners:
        started = perf_counter()
        try:
            scores = run_score(ctx, clusters)
        except Exception as error:
            if observer is not None:
                observer.plugin(plugin_name, "Score", "Error", perf_counter() - started)
            message = f'failed to prioritize clusters: plugin "{plugin_name}" failed with: {error}'
            raise SchedulingError(message) from error
        if observer is not None:
            observer.plugin(plugin_name, "Score", "Success", perf_counter() - started)
        for name, score in scores.items():
            if score:
                totals[name] = totals.get(name, 0) + score
    return totals


def overflow_order(binding: Binding, cluster: Cluster) -> int:
    """0 for the observed term's own affinity, i+1 for its i-th overflow affinity, 1000 for none."""
    placement = binding.placement
    if placement is None or placement.cluster_affinity is not None or not placement.cluster_affinities:
        return DEFAULT_OVERFLOW_ORDER
    term = placement.term(binding.status.scheduler_observing_affinity_name)
    if term is None:
        return DEFAULT_OVERFLOW_ORDER
    if cluster_matches(cluster, term.affinity):
        return 0
    for i, overflow in enumerate(term.overflow_affinities or ()):
        if cluster_matches(cluster, overflow.affinity):
            return i + 1
    return UNMATCHED_OVERFLOW_ORDER


def _has_overflow_tiers(binding: Binding) -> bool:
    placement = binding.placement
    return placement is not None and placement.cluster_affinity is None and bool(placement.cluster_affinities)


def filter_and_score(
    binding: Binding, snapshot: Snapshot, plugins: PluginSet, observer: Observer | None = None
) -> Candidates:
    ctx = FilterContext.of(binding, snapshot)
    started = perf_counter()
    feasible, diagnosis = run_filters(ctx, plugins, observer)
    if observer is not None:
        elapsed = perf_counter() - started
        observer.step("Filter", elapsed)
        observer.extension_point("Filter", "Success" if feasible else "Unschedulable", elapsed)
    if not feasible:
        raise FitError(len(snapshot), diagnosis)
    started = perf_counter()
    scores = run_scores(ctx, plugins, feasible, observer)
    if observer is not None:
        elapsed = perf_counter() - started
        observer.step("Score", elapsed)
        observer.extension_point("Score", "Success", elapsed)
    if _has_overflow_tiers(binding):
        details = [
            ClusterDetail(cluster=c, score=scores.get(c.name, 0), overflow_order=overflow_order(binding, c))
            for c in feasible
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
    snapshot: Snapshot | None = None,
    options: ScheduleOptions = DEFAULT_OPTIONS,
) -> dict[str, int]:
    """The general estimate per cluster: replicas, or whole component sets for a multi-template binding.
    With the snapshot, computed once per snapshot for all live clusters and each distinct replicaRequirements
    (bindings of one workload shape share it)."""
    if multi_template_applicable(binding, options.multiple_pod_templates):
        components = binding.components
        if snapshot is None:
            return estimate_component_sets(clusters, components)
        sets = snapshot.memo(("general-sets", components), lambda: estimate_component_sets(snapshot.live, components))
        return {c.name: sets[c.name] for c in clusters}
    requirements = binding.replica_requirements
    if snapshot is None:
        return {c.name: max_available_replicas(c, requirements) for c in clusters}
    every = snapshot.memo(
        ("general-estimate", requirements),
        lambda: {c.name: max_available_replicas(c, requirements) for c in snapshot.live},
    )
    return {c.name: every[c.name] for c in clusters}


def apply_estimates(candidates: Candidates, answers: Sequence[Mapping[str, int]]) -> None:
    """Merge the estimators' answers into allocatable/available (reference 2.5)."""
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


def select(
    candidates: Candidates,
    trace: list[str] | None = None,
    options: ScheduleOptions = DEFAULT_OPTIONS,
    checkpoint: Callable[[], None] = no_checkpoint,
) -> list[ClusterDetail]:
    """Spread selection; a multi-template binding needs room for one whole set (needReplicas = 1).
    `checkpoint` is called along the searches that can be long (it may raise to abandon the decision)."""
    binding = candidates.binding
    need = 1 if multi_template_applicable(binding, options.multiple_pod_templates) else binding.replicas
    started = perf_counter()
    try:
        return select_best_clusters(binding, candidates.details, need, trace=trace, checkpoint=checkpoint)
    except SchedulingError as error:
        raise error.wrapped("failed to select clusters") from error
    finally:
        if options.observer is not None:
            options.observer.step("Select", perf_counter() - started)


def assign(
    candidates: Candidates, selected: Sequence[ClusterDetail], options: ScheduleOptions = DEFAULT_OPTIONS
) -> list[TargetCluster]:
    snapshot = candidates.context.snapshot

    def weight_table(preference: WeightPreference) -> Mapping[str, int]:
        key = ("static-weights", preference.static_weight_list)
        return snapshot.memo(key, lambda: rule_weights(snapshot.clusters, preference))

    started = perf_counter()
    try:
        result = assign_replicas(candidates.binding, selected, weight_table=weight_table)
    except SchedulingError as error:
        raise error.wrapped("failed to assign replicas") from error
    finally:
        if options.observer is not None:
            options.observer.step("AssignReplicas", perf_counter() - started)
    if options.enable_empty_workload_propagation:
        present = {t.name for t in result}
        result = result + [TargetCluster(d.name) for d in selected if d.name not in present]
    return result


def select_and_assign(candidates: Candidates, options: ScheduleOptions = DEFAULT_OPTIONS) -> list[TargetCluster]:
    return assign(candidates, select(candidates, options=options), options)


def schedule(
    binding: Binding,
    snapshot: Snapshot,
    plugins: PluginSet,
    *,
    accurate: Sequence[Mapping[str, int]] = (),
    options: ScheduleOptions = DEFAULT_OPTIONS,
) -> list[TargetCluster]:
    """One attempt with the general estimator (plus any accurate answers already gathered)."""
    candidates = filter_and_score(binding, snapshot, plugins, options.observer)
    answers: list[Mapping[str, int]] = []
    if needs_estimates(binding):
        answers = [general_estimates(binding, candidates.clusters, snapshot, options), *accurate]
    apply_estimates(candidates, answers)
    return select_and_assign(candidates, options)

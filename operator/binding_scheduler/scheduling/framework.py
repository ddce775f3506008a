"""The scheduling framework: the one pipeline every caller runs (the operator's passes, `simulate`, `explain`,
the tests and the benchmarks).

```
decide:  for each affinity term, until one succeeds:
           Filter -> Score -> Estimate (general + accurate + plugins) -> Select -> Assign
reserve: Reserve (the decision's footprint is assumed on its clusters, plugins told)
bind:    the fenced writes, done by the caller (`scheduling.passes`) -> `bound`, or `unreserve` when they
         did not land
```

The walk over the affinity terms is Karmada's
`pkg/scheduler/scheduler.go: scheduleResourceBindingWithClusterAffinities`, and one attempt its
`pkg/scheduler/core/generic_scheduler.go: genericScheduler.Schedule`. Each extension point runs the enabled
plugins for it (`algorithm.plugins`); Select and Assign are Karmada's own unless one plugin implements them. What
a pass learns on the way lives in its `CycleState`, never in globals; what is memoised per snapshot lives on the
snapshot. Hooks (`FrameworkHook`) are told how long each point and plugin took and what each attempt saw: the
scheduler's metrics and `explain`'s record are hooks, the algorithm does not know about them.

Reserve and concurrent passes: with an `AssumptionCache`, the general estimator deducts the footprints other
passes reserved, the accurate estimators are sent them, and `reserve` refuses a decision when a cluster it
places replicas on gained or lost an assumption after the pass read them (another pass reserved meanwhile:
the caller decides again on fresh data). So capacity is never handed out twice, however many passes run.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from functools import partial
from typing import Any, Protocol

from ..algorithm.candidates import ClusterDetail
from ..algorithm.errors import FitError, SchedulingError
from ..algorithm.general_estimator import AssumedLoad, AssumedWorkload
from ..algorithm.multi_template import multi_template_applicable
from ..algorithm.plugins import FilterContext, WorkloadGroups
from ..algorithm.registry import PluginSet
from ..algorithm.schedule import (
    DEFAULT_OPTIONS,
    Candidates,
    ScheduleOptions,
    apply_estimates,
    assign,
    candidates_of,
    general_estimates,
    needed_replicas,
    needs_estimates,
    select,
    with_empty_workloads,
)
from ..algorithm.snapshot import Snapshot
from ..algorithm.walk import Attempt, Decision, Outcome, attempts, decide
from ..model import Binding, Cluster, Component, ObjectReference, ReplicaRequirements, TargetCluster
from .assumptions import AssumptionCache, Footprint
from .cpu import compute
from .labels import PluginResult


class ExtensionPoint(StrEnum):
    FILTER = "Filter"
    SCORE = "Score"
    ESTIMATE = "Estimate"
    SELECT = "Select"
    ASSIGN = "Assign"
    RESERVE = "Reserve"
    UNRESERVE = "Unreserve"
    BIND = "Bind"


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


class FrameworkHook:
    """Told what the framework does; every method does nothing unless overridden. `wants_trace`: the hook
    reads `selected`'s trace of the spread selection (building it costs a little)."""

    wants_trace = False

    def step(self, point: ExtensionPoint, result: PluginResult, seconds: float) -> None:
        """An extension point ran for one attempt."""

    def plugin(self, plugin: str, point: ExtensionPoint, result: PluginResult, seconds: float) -> None:
        """One plugin ran at one extension point."""

    def attempt_started(self, binding: Binding) -> None:
        """An attempt begins (the binding with the affinity term under trial as its observed term)."""

    def estimated(
        self, candidates: Candidates, general: Mapping[str, int], accurate: Mapping[str, int],
        failures: Mapping[str, str],
    ) -> None:
        """The candidates with their estimates applied, and what the estimators answered."""

    def selected(self, selected: Sequence[ClusterDetail], trace: Sequence[str]) -> None:
        """What selection kept (and its trace, when a hook wants it)."""

    def attempt_ended(self, outcome: Outcome) -> None:
        """The attempt's result or its error."""


@dataclass(slots=True)
class CycleState:
    """What one pass learns on its way through the framework (kube-scheduler's CycleState): the assumptions it
    estimated with, their versions per cluster, and a scratch space for plugins."""

    assumed: Mapping[str, AssumedLoad] = field(default_factory=dict)
    versions: Mapping[str, int] = field(default_factory=dict)
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Reservation:
    """A decision reserved: what it assumed (to undo on Unreserve) and the plugins to tell."""

    binding: Binding
    result: tuple[TargetCluster, ...]
    previous: Footprint | None
    """The binding's assumptions before this one (restored by Unreserve); None when nothing was assumed."""
    assumed: bool


class Framework:
    """The pipeline with its plugins, estimators, options, hooks, (optional) assumption cache and (optional)
    workload groups view."""

    def __init__(
        self,
        plugins: PluginSet,
        *,
        estimator: ReplicaEstimator | None = None,
        options: ScheduleOptions = DEFAULT_OPTIONS,
        hooks: Sequence[FrameworkHook] = (),
        assumptions: AssumptionCache | None = None,
        workload_groups: WorkloadGroups | None = None,
    ) -> None:
        self.plugins = plugins
        self.estimator = estimator
        self.options = options
        self.hooks = tuple(hooks)
        self.assumptions = assumptions
        self.workload_groups = workload_groups
        """Which bindings are in which workload (anti-)affinity group (gate `WorkloadAffinity`), for the filters."""

    # -- decide ------------------------------------------------------------------------------------------------

    async def decide(self, binding: Binding, snapshot: Snapshot, state: CycleState | None = None) -> Decision:
        """Walk the affinity terms (or the single affinity) and decide what to write."""
        state = state if state is not None else CycleState()
        if binding.placement is None:
            return Decision(None, None, SchedulingError(f"failed to get placement from {_describe(binding)}"))
        outcomes: list[tuple[Attempt, Outcome]] = []
        for attempt in attempts(binding):
            try:
                outcome: Outcome = await self.attempt(attempt.binding, snapshot, state)
            except SchedulingError as error:
                outcome = error
            outcomes.append((attempt, outcome))
            if not isinstance(outcome, SchedulingError):
                break
        return decide(binding, outcomes)

    async def attempt(
        self, binding: Binding, snapshot: Snapshot, state: CycleState | None = None
    ) -> list[TargetCluster]:
        """One attempt for the binding as it stands (its observed affinity term): the result, or the
        SchedulingError that ends it."""
        for hook in self.hooks:
            hook.attempt_started(binding)
        try:
            result = await self._attempt(binding, snapshot, state if state is not None else CycleState())
        except SchedulingError as error:
            for hook in self.hooks:
                hook.attempt_ended(error)
            raise
        for hook in self.hooks:
            hook.attempt_ended(result)
        return result

    async def _attempt(self, binding: Binding, snapshot: Snapshot, state: CycleState) -> list[TargetCluster]:
        ctx = FilterContext.of(binding, snapshot, self.workload_groups)
        feasible, diagnosis = self.filter_clusters(ctx)
        if not feasible:
            raise FitError(len(snapshot), diagnosis)
        scores = self.score_clusters(ctx, feasible)
        candidates = candidates_of(binding, ctx, feasible, scores, diagnosis)
        await self._estimate(candidates, state)
        return await compute(lambda checkpoint: self._select_and_assign(candidates, checkpoint),
                             self.options.cpu_limit)

    def _timed(self, plugin: str, point: ExtensionPoint, run: Callable[[], Any]) -> Any:
        started = time.perf_counter()
        try:
            value = run()
        except Exception:
            self._tell_plugin(plugin, point, PluginResult.ERROR, time.perf_counter() - started)
            raise
        result = PluginResult.UNSCHEDULABLE if point is ExtensionPoint.FILTER and value else PluginResult.SUCCESS
        self._tell_plugin(plugin, point, result, time.perf_counter() - started)
        return value

    def _tell_plugin(self, plugin: str, point: ExtensionPoint, result: PluginResult, seconds: float) -> None:
        for hook in self.hooks:
            hook.plugin(plugin, point, result, seconds)

    def _tell_step(self, point: ExtensionPoint, result: PluginResult, started: float) -> None:
        seconds = time.perf_counter() - started
        for hook in self.hooks:
            hook.step(point, result, seconds)

    def filter_clusters(self, ctx: FilterContext) -> tuple[list[Cluster], dict[str, str]]:
        """Every live cluster through the filters in order; a cluster stops at its first failure."""
        started = time.perf_counter()
        remaining: list[Cluster] = list(ctx.snapshot.live)
        diagnosis: dict[str, str] = {}
        for name, run_filter in self.plugins.filter_runners:
            if not remaining:
                break
            clusters = remaining
            try:
                failures = self._timed(name, ExtensionPoint.FILTER, partial(run_filter, ctx, clusters))
            except Exception as error:  # a Python plugin's bug: the binding says which plugin
                self._tell_step(ExtensionPoint.FILTER, PluginResult.ERROR, started)
                raise SchedulingError(f'failed to filter clusters: plugin "{name}" failed with: {error}') from error
            if failures:
                diagnosis.update(failures)
                remaining = [c for c in remaining if c.name not in failures]
        result = PluginResult.SUCCESS if remaining else PluginResult.UNSCHEDULABLE
        self._tell_step(ExtensionPoint.FILTER, result, started)
        return remaining, diagnosis

    def score_clusters(self, ctx: FilterContext, clusters: Sequence[Cluster]) -> dict[str, int]:
        started = time.perf_counter()
        totals: dict[str, int] = {}
        for name, run_score in self.plugins.score_runners:
            try:
                scores = self._timed(name, ExtensionPoint.SCORE, partial(run_score, ctx, clusters))
            except Exception as error:
                self._tell_step(ExtensionPoint.SCORE, PluginResult.ERROR, started)
                message = f'failed to prioritize clusters: plugin "{name}" failed with: {error}'
                raise SchedulingError(message) from error
            for cluster, score in scores.items():
                if score:
                    totals[cluster] = totals.get(cluster, 0) + score
        self._tell_step(ExtensionPoint.SCORE, PluginResult.SUCCESS, started)
        return totals

    async def _estimate(self, candidates: Candidates, state: CycleState) -> None:
        """The general estimator, the accurate estimators and the estimate plugins, merged as Karmada's
        `pkg/scheduler/core/util.go: calAvailableReplicas` merges its estimators.
        The assumptions read here are the ones `reserve` checks are still current."""
        binding = candidates.binding
        general: Mapping[str, int] = {}
        accurate: Mapping[str, int] = {}
        failures: Mapping[str, str] = {}
        answers: list[Mapping[str, int]] = []
        if needs_estimates(binding):
            started = time.perf_counter()
            clusters = candidates.clusters
            if self.assumptions is not None:
                state.assumed, state.versions = self.assumptions.others(
                    binding, [c.name for c in clusters], workloads=self._listed_workloads(clusters)
                )
            general = general_estimates(binding, clusters, candidates.context.snapshot, self.options, state.assumed)
            answers.append(general)
            if self.estimator is not None:
                answer = await self._ask_estimator(binding, clusters, state)
                accurate, failures = answer.replicas, answer.failures
                answers.append(accurate)
            for plugin in self.plugins.estimators:
                plugin_started = time.perf_counter()
                try:
                    answers.append(await plugin.estimate(candidates.context, clusters))
                except Exception as error:
                    self._tell_plugin(plugin.name, ExtensionPoint.ESTIMATE, PluginResult.ERROR,
                                      time.perf_counter() - plugin_started)
                    raise SchedulingError(
                        f'failed to estimate available replicas: plugin "{plugin.name}" failed with: {error}'
                    ) from error
                self._tell_plugin(plugin.name, ExtensionPoint.ESTIMATE, PluginResult.SUCCESS,
                                  time.perf_counter() - plugin_started)
            self._tell_step(ExtensionPoint.ESTIMATE, PluginResult.SUCCESS, started)
        apply_estimates(candidates, answers)
        for hook in self.hooks:
            hook.estimated(candidates, general, accurate, failures)

    def _listed_workloads(self, clusters: Sequence[Cluster]) -> Callable[[str], bool] | bool:
        """Where a pass needs the assumed workloads one by one, not only their sums: everywhere when an accurate
        estimator is asked (they are sent), else on the clusters whose resource models place them."""
        if self.estimator is not None:
            return True
        modelled = {
            c.name for c in clusters if c.resource_summary is not None and c.resource_summary.allocatable_modelings
        }
        return modelled.__contains__

    async def _ask_estimator(
        self, binding: Binding, clusters: Sequence[Cluster], state: CycleState
    ) -> EstimateAnswerLike:
        assert self.estimator is not None
        assumed = state.assumed or None
        if multi_template_applicable(binding, self.options.multiple_pod_templates):
            return await self.estimator.max_available_component_sets(
                clusters, binding.components, binding.namespace, resource=binding.resource, assumed=assumed
            )
        return await self.estimator.max_available_replicas(
            clusters, binding.replica_requirements, resource=binding.resource, assumed=assumed
        )

    def _select_and_assign(self, candidates: Candidates, checkpoint: Callable[[], None]) -> list[TargetCluster]:
        """Pure: may run twice (moved off the event loop when long), so it reports to the hooks at its end."""
        trace: list[str] = []
        wants_trace = any(hook.wants_trace for hook in self.hooks)
        started = time.perf_counter()
        selector = self.plugins.selector
        try:
            if selector is None:
                selected = select(candidates, trace if wants_trace else None, self.options, checkpoint)
            else:
                need = needed_replicas(candidates.binding, self.options)
                selected = list(self._plugin_step(
                    selector.name, ExtensionPoint.SELECT, "failed to select clusters",
                    lambda: selector.select(candidates.context, candidates.details, need),
                ))
        except SchedulingError:
            self._tell_step(ExtensionPoint.SELECT, PluginResult.ERROR, started)
            raise
        self._tell_step(ExtensionPoint.SELECT, PluginResult.SUCCESS, started)
        for hook in self.hooks:
            hook.selected(selected, trace)
        started = time.perf_counter()
        assigner = self.plugins.assigner
        try:
            if assigner is None:
                result = assign(candidates, selected, self.options)
            else:
                assigned = self._plugin_step(
                    assigner.name, ExtensionPoint.ASSIGN, "failed to assign replicas",
                    lambda: assigner.assign(candidates.context, selected),
                )
                result = with_empty_workloads(list(assigned), selected, self.options)
        except SchedulingError:
            self._tell_step(ExtensionPoint.ASSIGN, PluginResult.ERROR, started)
            raise
        self._tell_step(ExtensionPoint.ASSIGN, PluginResult.SUCCESS, started)
        return result

    def _plugin_step(self, name: str, point: ExtensionPoint, failure: str, run: Callable[[], Any]) -> Any:
        try:
            return self._timed(name, point, run)
        except SchedulingError as error:
            raise error.wrapped(failure) from error
        except Exception as error:
            raise SchedulingError(f'{failure}: plugin "{name}" failed with: {error}') from error

    # -- reserve / unreserve / bound ---------------------------------------------------------------------------

    def reserve(self, binding: Binding, decision: Decision, state: CycleState) -> Reservation | None:
        """Reserve the decision's clusters before its writes. None: a cluster it places replicas on had its
        assumptions changed since the pass estimated (decide again)."""
        result = tuple(decision.clusters or ())
        previous: Footprint | None = None
        assumed = False
        if self.assumptions is not None and decision.clusters is not None and needs_estimates(binding):
            if not self.assumptions.unchanged(state.versions, [t.name for t in result]):
                return None
            multi = multi_template_applicable(binding, self.options.multiple_pod_templates)
            previous = self.assumptions.assume(binding, result, multi)
            assumed = True
        reserved: list[Any] = []
        try:
            for plugin in self.plugins.reservers:
                self._timed(plugin.name, ExtensionPoint.RESERVE, partial(plugin.reserve, binding, result))
                reserved.append(plugin)
        except Exception:
            for plugin in reversed(reserved):
                plugin.unreserve(binding, result)
            if assumed and self.assumptions is not None:
                self.assumptions.restore(binding, previous)
            raise
        return Reservation(binding, result, previous, assumed)

    def unreserve(self, reservation: Reservation) -> None:
        """The reserved decision did not land: the assumptions and every Reserve plugin are undone."""
        started = time.perf_counter()
        for plugin in reversed(self.plugins.reservers):
            self._timed(plugin.name, ExtensionPoint.UNRESERVE,
                        partial(plugin.unreserve, reservation.binding, reservation.result))
        if reservation.assumed and self.assumptions is not None:
            self.assumptions.restore(reservation.binding, reservation.previous)
        self._tell_step(ExtensionPoint.UNRESERVE, PluginResult.SUCCESS, started)

    def bound(self, reservation: Reservation) -> None:
        """The decision's writes landed."""
        for plugin in self.plugins.binders:
            self._timed(plugin.name, ExtensionPoint.BIND,
                        partial(plugin.bound, reservation.binding, reservation.result))


def _describe(binding: Binding) -> str:
    if binding.namespace:
        return f"resourceBinding({binding.namespace}/{binding.name})"
    return f"clusterResourceBinding({binding.name})"

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
plugins for it (`algorithm.plugins`); Select and Assign are Karmada's own unless one plugin implements them.
Every point goes through one runner: `_step` times the point and tells the hooks how it ended, `_call` times
each plugin, tells the hooks, and turns its failure into the attempt's error in one shape (`plugin_failure`).
Every decide-time plugin gets the attempt's `AttemptContext`, which carries the pass's `CycleState`: what a pass
learns on the way lives there, never in globals; what is memoised per snapshot lives on the snapshot. Hooks
(`FrameworkHook`) are told how long each point and plugin took and what each attempt saw: the scheduler's
metrics and `explain`'s record are hooks, the algorithm does not know about them.

Reserve and concurrent passes: with an `AssumptionCache`, the general estimator deducts the footprints other
passes reserved, the accurate estimators are sent them, and `reserve` checks that every cluster the decision
gives new replicas still has room for them (the arithmetic is `scheduling/reserve/room.py`). So capacity is never
handed out twice, however many passes run, and passes that estimated side by side on roomy clusters all land.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from types import MappingProxyType
from typing import TypeVar

import numpy as np

from ...algorithm.candidates import ClusterDetail
from ...algorithm.errors import FitError, SchedulingError
from ...algorithm.fleet import Indices
from ...algorithm.general_estimator.columns import AssumedAt
from ...algorithm.multi_template import multi_template_applicable
from ...algorithm.plugins import AttemptContext, CycleState, Diagnosis, FilterMask, ReservePlugin, WorkloadGroups
from ...algorithm.preemption import PreemptingError, PreemptionPlan, deduct_claims, starts_preemption
from ...algorithm.registry import PluginSet
from ...algorithm.schedule import (
    DEFAULT_OPTIONS,
    Candidates,
    ClusterValues,
    IntColumn,
    ScheduleOptions,
    apply_estimates,
    assign,
    candidates_of,
    general_column,
    needed_replicas,
    needs_estimates,
    select,
    with_empty_workloads,
)
from ...algorithm.snapshot import Snapshot
from ...algorithm.walk import Attempt, Decision, Outcome, attempts, decide
from ...model import Binding, Cluster, TargetCluster
from ..observability.labels import PluginResult
from ..reserve.room import bounded_by_assumptions, room_now, still_fits
from ..state.assumptions import AssumptionCache, Footprint
from .cpu import Compute, compute
from .hooks import ExtensionPoint, FrameworkHook
from .ports import AssumptionReader, EstimateAnswerLike, Preemptor, ReplicaEstimator

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Reservation:
    """A decision reserved: what it assumed (to undo on Unreserve) and the plugins to tell."""

    binding: Binding
    result: tuple[TargetCluster, ...]
    previous: Footprint | None
    """The binding's assumptions before this one (restored by Unreserve); None when nothing was assumed."""
    assumed: bool


class _Step:
    """How one extension point ended for one attempt (told to the hooks once, at its end)."""

    __slots__ = ("result",)

    def __init__(self) -> None:
        self.result = PluginResult.SUCCESS


_FAILURES: Mapping[ExtensionPoint, str] = MappingProxyType({
    ExtensionPoint.FILTER: "failed to filter clusters",
    ExtensionPoint.SCORE: "failed to prioritize clusters",
    ExtensionPoint.ESTIMATE: "failed to estimate available replicas",
    ExtensionPoint.SELECT: "failed to select clusters",
    ExtensionPoint.ASSIGN: "failed to assign replicas",
    ExtensionPoint.POST_FILTER: "failed to preempt",
    ExtensionPoint.RESERVE: "failed to reserve the decision",
    ExtensionPoint.UNRESERVE: "failed to unreserve the decision",
    ExtensionPoint.BIND: "failed to tell the bind plugins",
})
"""What a plugin's failure at each point means for the attempt: the first words of its error (Karmada's own
wording for the points Karmada has)."""


def plugin_failure(point: ExtensionPoint, plugin: str, error: Exception) -> SchedulingError:
    """A plugin's failure as the attempt's error, in one shape: a SchedulingError the plugin raised keeps its
    kind and message behind the point's words; any other exception is the plugin's bug and says so."""
    failure = _FAILURES[point]
    if isinstance(error, SchedulingError):
        return error.wrapped(failure)
    return SchedulingError(f'{failure}: plugin "{plugin}" failed with: {error}')


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
        preemptor: Preemptor | None = None,
        assumed: AssumptionReader | None = None,
        computes: Compute = compute,
    ) -> None:
        self.plugins = plugins
        self.preemptor = preemptor
        self.estimator = estimator
        self.options = options
        self.hooks = tuple(hooks)
        self.assumptions = assumptions
        """The cache Reserve records in (and, unless `assumed` is given, what the estimates read)."""
        self.assumed: AssumptionReader | None = assumed if assumed is not None else assumptions
        """What the estimates deduct: the cache, or in a decision process what the scheduler sent."""
        self.compute = computes
        """How the pure selection runs (`cpu.compute`: off the event loop when long)."""
        self.workload_groups = workload_groups
        """Which bindings are in which workload (anti-)affinity group (gate `WorkloadAffinity`), for the filters."""

    # -- the runner every extension point goes through -----------------------------------------------------------

    @contextmanager
    def _step(self, point: ExtensionPoint) -> Iterator[_Step]:
        """Time one extension point and tell the hooks how it ended: ERROR when it raised the attempt's
        SchedulingError, else what the point set (SUCCESS unless it says UNSCHEDULABLE). A cancellation or an
        abandoned computation is no result of the point: nothing is told."""
        started = time.perf_counter()
        step = _Step()
        try:
            yield step
        except SchedulingError:
            self._tell_step(point, PluginResult.ERROR, started)
            raise
        self._tell_step(point, step.result, started)

    def _call(self, point: ExtensionPoint, plugin: str, run: Callable[[], T]) -> T:
        """One plugin at one point: timed, the hooks told, its failure made a `plugin_failure`."""
        started = time.perf_counter()
        try:
            value = run()
        except Exception as error:
            self._tell_plugin(plugin, point, PluginResult.ERROR, started)
            raise plugin_failure(point, plugin, error) from error
        self._tell_plugin(plugin, point, _plugin_result(point, value), started)
        return value

    async def _call_async(self, point: ExtensionPoint, plugin: str, run: Callable[[], Awaitable[T]]) -> T:
        """`_call` for a plugin that awaits (Estimate): cancelled with the pass."""
        started = time.perf_counter()
        try:
            value = await run()
        except Exception as error:
            self._tell_plugin(plugin, point, PluginResult.ERROR, started)
            raise plugin_failure(point, plugin, error) from error
        self._tell_plugin(plugin, point, _plugin_result(point, value), started)
        return value

    def _tell_plugin(self, plugin: str, point: ExtensionPoint, result: PluginResult, started: float) -> None:
        seconds = time.perf_counter() - started
        for hook in self.hooks:
            hook.plugin(plugin, point, result, seconds)

    def _tell_step(self, point: ExtensionPoint, result: PluginResult, started: float) -> None:
        seconds = time.perf_counter() - started
        for hook in self.hooks:
            hook.step(point, result, seconds)

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
        ctx = AttemptContext.of(binding, snapshot, self.workload_groups, state)
        try:
            result = await self._attempt(ctx)
        except SchedulingError as error:
            for hook in self.hooks:
                hook.attempt_ended(error)
            raise
        for hook in self.hooks:
            hook.attempt_ended(result)
        return result

    async def _attempt(self, ctx: AttemptContext) -> list[TargetCluster]:
        feasible, diagnosis = self.filter_clusters(ctx)
        if not len(feasible):
            raise FitError(len(ctx.snapshot), diagnosis)
        scores = self.score_clusters(ctx, feasible)
        candidates = candidates_of(ctx.binding, ctx, feasible, scores, diagnosis)
        await self._estimate(candidates)
        try:
            return await self.compute(lambda checkpoint: self._select_and_assign(candidates, checkpoint),
                                      self.options.cpu_limit)
        except SchedulingError as error:
            plan = self._post_filter(candidates, error)
            if plan is None:
                raise
            raise PreemptingError(plan, error) from error

    def _post_filter(self, candidates: Candidates, error: SchedulingError) -> PreemptionPlan | None:
        """PostFilter (kube-scheduler's name for the point after a failed attempt): preemption, when it is on and
        the attempt failed for capacity."""
        if self.preemptor is None or not starts_preemption(error):
            return None
        with self._step(ExtensionPoint.POST_FILTER):
            return self.preemptor.plan(candidates, candidates.context.state.claimed)

    def filter_clusters(self, ctx: AttemptContext) -> tuple[Indices, Diagnosis]:
        """Every live cluster through the filters in order, as masks over the fleet; a cluster stops at its first
        failure, whose reason is its diagnosis. Returns the feasible clusters' fleet indices (ascending: snapshot
        order) and the diagnosis by name."""
        fleet = ctx.snapshot.columns
        remaining = fleet.live.copy()
        failures: list[FilterMask] = []
        with self._step(ExtensionPoint.FILTER) as step:
            left = int(np.count_nonzero(remaining))
            for name, run_filter in self.plugins.filter_runners:
                if not left:
                    break
                failed = self._call(ExtensionPoint.FILTER, name, partial(run_filter, ctx, fleet, remaining))
                if failed.failed is fleet.nothing:
                    continue
                count = int(np.count_nonzero(failed.failed))
                if count:
                    failures.append(failed)
                    remaining &= ~failed.failed
                    left -= count
            feasible = np.flatnonzero(remaining)
            if not left:
                step.result = PluginResult.UNSCHEDULABLE
        return feasible, Diagnosis(fleet.names, failures)

    def score_clusters(self, ctx: AttemptContext, feasible: Indices) -> dict[str, int]:
        """Every score plugin over the feasible clusters (fleet indices): the non-zero totals by name."""
        totals: dict[str, int] = {}
        fleet = ctx.snapshot.columns
        with self._step(ExtensionPoint.SCORE):
            for name, run_score in self.plugins.score_runners:
                scored = self._call(ExtensionPoint.SCORE, name, partial(run_score, ctx, fleet, feasible))
                for cluster, score in scored.items():
                    if score:
                        totals[cluster] = totals.get(cluster, 0) + score
        return totals

    async def _estimate(self, candidates: Candidates) -> None:
        """The general estimator, the accurate estimators and the estimate plugins, merged as Karmada's
        `pkg/scheduler/core/util.go: calAvailableReplicas` merges its estimators.
        The assumptions read here are the ones `reserve` checks are still current."""
        ctx = candidates.context
        binding, state = ctx.binding, ctx.state
        general: IntColumn | None = None
        accurate: Mapping[str, int] = {}
        failures: Mapping[str, str] = {}
        answers: list[Mapping[str, int]] = []
        if needs_estimates(binding):
            with self._step(ExtensionPoint.ESTIMATE):
                assumed: AssumedAt | None = None
                if self.assumed is not None:
                    held = self.assumed.at(binding, ctx.snapshot.columns, candidates.indices,
                                           workloads=self.listed_workloads(ctx.snapshot))
                    state.assumed, state.versions, assumed = held.loads, held.versions, held.columns
                general = general_column(binding, candidates.indices, ctx.snapshot, self.options, assumed)
                if self.estimator is not None or self.plugins.estimators:
                    clusters = candidates.clusters
                    if self.estimator is not None:
                        answer = await self._ask_estimator(binding, clusters, state)
                        accurate, failures = answer.replicas, answer.failures
                        answers.append(accurate)
                    for plugin in self.plugins.estimators:
                        answers.append(await self._call_async(
                            ExtensionPoint.ESTIMATE, plugin.name, partial(plugin.estimate, ctx, clusters)
                        ))
        apply_estimates(candidates, general, answers)
        if self.preemptor is not None and needs_estimates(binding):
            deduct_claims(candidates, self.preemptor.claimed(candidates.binding, candidates.names))
        alone = self.estimator is None and not self.plugins.estimators  # the general estimate: made again at will
        if general is not None and self.assumptions is not None and alone:
            state.room_now = partial(room_now, self.assumptions, self.options, self.listed_workloads(ctx.snapshot),
                                     ctx.binding, ctx.snapshot, candidates, dict(state.claimed))
        elif general is not None and bounded_by_assumptions(self.assumptions, self.plugins, ctx.snapshot):
            state.room = ClusterValues(candidates, candidates.allocatable.copy())
        told = ClusterValues(candidates, general) if general is not None else {}
        for hook in self.hooks:
            hook.estimated(candidates, told, accurate, failures)

    def listed_workloads(self, snapshot: Snapshot) -> Callable[[str], bool] | bool:
        """Where a pass needs the assumed workloads one by one, not only their sums: everywhere when an accurate
        estimator is asked (they are sent), else on the clusters whose resource models place them."""
        if self.estimator is not None:
            return True
        return snapshot.modelled().__contains__

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
        selected = self._select(candidates, checkpoint)
        with self._step(ExtensionPoint.ASSIGN):
            assigner = self.plugins.assigner
            if assigner is None:
                return assign(candidates, selected, self.options)
            assigned = self._call(ExtensionPoint.ASSIGN, assigner.name,
                                  partial(assigner.assign, candidates.context, selected))
            return with_empty_workloads(list(assigned), selected, self.options)

    def _select(self, candidates: Candidates, checkpoint: Callable[[], None]) -> Sequence[ClusterDetail]:
        trace: list[str] = []
        wants_trace = any(hook.wants_trace for hook in self.hooks)
        with self._step(ExtensionPoint.SELECT):
            selector = self.plugins.selector
            if selector is None:
                selected: Sequence[ClusterDetail] = select(candidates, trace if wants_trace else None, self.options,
                                                           checkpoint)
            else:
                need = needed_replicas(candidates.binding, self.options)
                selected = list(self._call(ExtensionPoint.SELECT, selector.name,
                                           partial(selector.select, candidates.context, candidates.details, need)))
        for hook in self.hooks:
            hook.selected(selected, trace)
        return selected

    # -- reserve / unreserve / bound ---------------------------------------------------------------------------

    def reserve(self, binding: Binding, decision: Decision, state: CycleState) -> Reservation | None:
        """Reserve the decision's clusters before its writes. None: a cluster it places replicas on had its
        assumptions changed since the pass estimated (decide again). A Reserve plugin's failure undoes what was
        reserved and raises its `plugin_failure`."""
        result = tuple(decision.clusters or ())
        previous: Footprint | None = None
        assumed = False
        if self.assumptions is not None and decision.clusters is not None and needs_estimates(binding):
            multi = multi_template_applicable(binding, self.options.multiple_pod_templates)
            if not still_fits(self.assumptions, binding, result, state, multi):
                return None
            previous = self.assumptions.assume(binding, result, multi)
            assumed = True
        reserved: list[ReservePlugin] = []
        try:
            with self._step(ExtensionPoint.RESERVE):
                for plugin in self.plugins.reservers:
                    self._call(ExtensionPoint.RESERVE, plugin.name, partial(plugin.reserve, binding, result))
                    reserved.append(plugin)
        except SchedulingError:
            for plugin in reversed(reserved):
                plugin.unreserve(binding, result)
            if assumed and self.assumptions is not None:
                self.assumptions.restore(binding, previous)
            raise
        return Reservation(binding, result, previous, assumed)

    def unreserve(self, reservation: Reservation) -> None:
        """The reserved decision did not land: the assumptions and every Reserve plugin are undone."""
        with self._step(ExtensionPoint.UNRESERVE):
            for plugin in reversed(self.plugins.reservers):
                self._call(ExtensionPoint.UNRESERVE, plugin.name,
                           partial(plugin.unreserve, reservation.binding, reservation.result))
            if reservation.assumed and self.assumptions is not None:
                self.assumptions.restore(reservation.binding, reservation.previous)

    def bound(self, reservation: Reservation, *, written: bool) -> None:
        """The decision's placement is in the binding's `spec.clusters`: written by this pass, or held already.
        A result the binding held already is not assumed (its assumption goes back to what it was before the
        pass): Karmada assumes only after a patch that changed something (scheduler.go,
        patchScheduleResultForResourceBinding returns on an empty patch before updateAssumptionsCache), so a new
        leader deciding again what already runs does not count those replicas a second time."""
        if not written and reservation.assumed and self.assumptions is not None:
            self.assumptions.restore(reservation.binding, reservation.previous)
        with self._step(ExtensionPoint.BIND):
            for plugin in self.plugins.binders:
                self._call(ExtensionPoint.BIND, plugin.name,
                           partial(plugin.bound, reservation.binding, reservation.result))


def _plugin_result(point: ExtensionPoint, value: object) -> PluginResult:
    """A filter that failed some clusters was Unschedulable for them (Karmada's plugin result label)."""
    return PluginResult.UNSCHEDULABLE if point is ExtensionPoint.FILTER and value else PluginResult.SUCCESS


def _describe(binding: Binding) -> str:
    if binding.namespace:
        return f"resourceBinding({binding.namespace}/{binding.name})"
    return f"clusterResourceBinding({binding.name})"

"""The scheduler at run time: event intake, the queue, `workers` concurrent passes, and the bounded drain.

Intake follows Karmada's informer rules (`pkg/scheduler/event_handler.go: addAllEventHandlers`, with
`resourceBindingEventFilter`, `onResourceBindingUpdate`, `updateCluster` and `enqueueAffectedBindings`): the
binding filter with its false->true = add and true->false = delete transitions (client-go's
`k8s.io/client-go/tools/cache/controller.go: FilteringResourceEventHandler.OnUpdate`), enqueue on add and on
generation change only, and cluster label or generation changes (or a starting deletion) requeue the bindings
they may affect.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ...algorithm.requeue import (
    affected_by_cluster,
    cluster_change_requeues,
    event_filter_refusal,
    gained_apis,
    passes_event_filter,
    waits_for_an_api,
)
from ...kube.errors import KubeError
from ...kube.gate import WriteGateClosed
from ...model import Binding, Cluster, ObjectMeta, ValidationError, parse_cluster
from ...model.body import BindingBody
from ..observability.labels import BindingEvent, PassOutcome
from ..observability.metrics import SchedulerMetrics
from ..passes.context import PassContext, PassSettings, PassTracker, Phase
from ..passes.run import run_pass
from ..state.claims import CLAIM_ANNOTATION
from ..state.queue import QueuedBinding, SchedulingQueue
from ..state.stores import binding_key
from .stop_report import DrainReport

logger = logging.getLogger(__name__)

STRAGGLER_GRACE = 2.0
"""How long a stop waits for cancelled passes to unwind. Well-behaved passes take milliseconds; one that
ignores its cancellation is abandoned after this (it can no longer write: the gate closes next)."""
REQUEUE_SLICE = 1_000
"""Bindings a cluster change tests before it lets the event loop run: at 50,000 bindings, testing them all in
one go held the loop (watch streams, lease renewals, the metrics endpoint) for seconds."""


@dataclass(slots=True)
class _InFlight:
    tracker: PassTracker
    task: asyncio.Task[PassOutcome]


class StoppingError(Exception):
    """A pass reached its commit point after the stop was asked: it must not write."""


class Scheduler:
    def __init__(
        self,
        ctx: PassContext,
        settings: PassSettings,
        *,
        queue: SchedulingQueue,
        metrics: SchedulerMetrics,
        workers: int = 1,
    ) -> None:
        self.ctx = ctx
        self.settings = settings
        self.queue = queue
        self.metrics = metrics
        self.workers = workers
        self._in_flight: dict[str, _InFlight] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self._requeues: set[asyncio.Task[None]] = set()
        self._stopping = False
        self._cancelled_at_stop = 0
        self._cancelled_by_stop: set[asyncio.Task[PassOutcome]] = set()
        self._committing_at_stop: set[asyncio.Task[PassOutcome]] = set()
        self._updated_while_committing: set[str] = set()
        self._fit_nowhere: set[str] = set()  # keys whose last pass here ended NoClusterFit
        self._skipped_said: dict[str, str] = {}  # why each binding the event filter refuses was left alone, once said
        ctx.claims.on_free = self._woken_preemptor

    # -- intake (called from Kopf's event handlers; synchronous, never blocks) -----------------------------

    @property
    def scheduler_name(self) -> str:
        return self.settings.scheduler_name

    def on_binding(self, body: Mapping[str, Any]) -> None:
        """An ADDED/MODIFIED (or listed) binding body."""
        key = binding_key(body)
        previous = self.ctx.bindings.upsert(body)
        if self.ctx.workload_groups is not None:
            self.ctx.workload_groups.stored(body)
        if self.ctx.assumptions.holds(key):
            for cluster in _newly_healthy(previous, body):
                self.ctx.assumptions.release_cluster(key, cluster)
        self.queue.cache_updated(key, _version(body))
        annotations = BindingBody(body).annotations
        if CLAIM_ANNOTATION in annotations:
            self.ctx.claims.take_up(key, annotations)
        now_passes = passes_event_filter(body, self.scheduler_name)
        was_passing = previous is not None and passes_event_filter(previous, self.scheduler_name)
        if not now_passes:
            self._say_skipped(key, body)
        elif key in self._skipped_said:
            del self._skipped_said[key]
        if now_passes and not was_passing:
            self._enqueue(body, BindingEvent.ADD)
        elif now_passes and was_passing and _generation(previous) != _generation(body):
            entry = self._in_flight.get(key)
            if entry is not None and entry.tracker.phase is Phase.COMMITTING:
                # Maybe our own spec write, whose watch event can beat its response to the pass: decide once
                # the pass has recorded the generation it wrote.
                self._updated_while_committing.add(key)
            elif not self.ctx.bindings.is_own_write(body):  # our spec write: the pass that made it records it
                self._enqueue(body, BindingEvent.UPDATE)
            elif self._placed_on_a_missing_cluster(key):  # our write, onto a cluster removed since
                self._enqueue(body, BindingEvent.CLUSTER_CHANGED)
        elif now_passes and self._placed_on_a_missing_cluster(key):
            self._enqueue(body, BindingEvent.CLUSTER_CHANGED)

    def _say_skipped(self, key: str, body: Mapping[str, Any]) -> None:
        """Once per binding and reason, at Karmada's default verbosity: why this scheduler leaves it alone."""
        reason = sys.intern(event_filter_refusal(body, self.scheduler_name) or "Karmada's event filter refuses it")
        if self._skipped_said.get(key) != reason:
            self._skipped_said[key] = reason  # interned: a handful of texts for any number of bindings
            logger.info("binding %s is not scheduled here: %s", key, reason)

    def _placed_on_a_missing_cluster(self, key: str) -> bool:
        """The stored body places the binding on a cluster we no longer know: its removal reached us before this
        body did (a relist after a watch gap), so `_cluster_gone` could not requeue it then. Read from the raw
        body as the store keeps it: every watch event comes through here, and most are never parsed."""
        stored = self.ctx.bindings.body(key)
        return stored is not None and not self.ctx.clusters.places_only_known(stored)

    def _waits_for_an_api(self, binding: Binding) -> bool:
        """Its last pass found no cluster fit: by its condition, or, when that status write's watch event has
        not reached us yet (the cluster's stream can beat the binding's), by the outcome of our own pass."""
        return waits_for_an_api(binding) or binding.key in self._fit_nowhere

    def on_binding_deleted(self, body: Mapping[str, Any]) -> None:
        self._forget_binding(binding_key(body))

    def _forget_binding(self, key: str) -> None:
        """The binding is gone: out of the stores and the queue, and what it was assumed to take or claimed is
        free again."""
        if self.ctx.workload_groups is not None:
            self.ctx.workload_groups.forget(key)
        self.ctx.assumptions.release(key)
        self.ctx.claims.clear(key)
        self._fit_nowhere.discard(key)
        self._skipped_said.pop(key, None)
        self._updated_while_committing.discard(key)
        self.ctx.bindings.remove(key)
        self.queue.discard(key)

    def on_bindings_relisted(
        self, namespaced: bool, bodies: Iterable[Mapping[str, Any]], *, keep: Collection[str] = ()
    ) -> list[str]:
        """A complete list of ResourceBindings (`namespaced`) or ClusterResourceBindings: every stored binding of
        that kind missing from it (but those in `keep`) is forgotten as a deleted one is (its assumptions and claims
        released too). Returns their keys."""
        listed = {binding_key(body) for body in bodies}
        stored = list(self.ctx.bindings.keys())
        gone = [key for key in stored if ("/" in key) == namespaced and key not in listed and key not in keep]
        for key in gone:
            self._forget_binding(key)
        return gone

    def on_clusters_relisted(self, bodies: Iterable[Mapping[str, Any]], *, keep: Collection[str] = ()) -> list[str]:
        """A complete list of Clusters: every stored cluster missing from it (but those in `keep`) leaves the
        snapshot."""
        listed = {ObjectMeta.of(body).name for body in bodies}
        gone = [name for name in self.ctx.clusters.names() if name not in listed and name not in keep]
        for name in gone:
            self._cluster_gone(name)
        return gone

    def on_cluster(self, body: Mapping[str, Any]) -> None:
        """An ADDED/MODIFIED (or listed) cluster body: update the snapshot, requeue affected bindings."""
        name = ObjectMeta.of(body).name
        try:
            cluster = parse_cluster(body)
        except ValidationError as error:
            logger.error("cluster %s is invalid and is left out of scheduling: %s", name, error)
            self.ctx.clusters.reject(name, error)
            return
        previous = self.ctx.clusters.upsert(cluster)
        for changed in cluster_change_requeues(previous, cluster):
            self._requeue_affected(changed)
        if gained_apis(previous, cluster):
            self._requeue_affected(cluster, only=self._waits_for_an_api)
        self._wake_preemptors(previous, cluster)

    def _wake_preemptors(self, previous: Cluster | None, cluster: Cluster) -> None:
        """A preemptor waits for what its victims free on `cluster`: when the cluster's summary changes, that
        capacity may show, so its pass runs now instead of at the unschedulable flush (Karmada's PR waits for the
        flush, up to 5 minutes); so do the preemptors that found another's claim there. The claims are looked at
        first: most clusters have none, and the summaries of a large fleet change every few seconds."""
        claims = self.ctx.claims.on(cluster.name)
        if not claims and not self.ctx.claims.waiting_on(cluster.name):
            return
        if previous is None or previous.resource_summary == cluster.resource_summary:
            return
        for claim in claims:
            if self.queue.push(claim.key, claim.priority):
                self.metrics.binding_event(BindingEvent.CLUSTER_CHANGED)
        self.ctx.claims.freed(cluster.name)  # the preemptors that waited behind a claim there

    def _woken_preemptor(self, key: str, priority: int) -> None:
        """A preemptor that waited behind another's claim: the claim ended or its cluster's capacity changed."""
        if self.queue.push(key, priority):
            self.metrics.binding_event(BindingEvent.CLUSTER_CHANGED)

    def on_cluster_deleted(self, body: Mapping[str, Any]) -> None:
        self._cluster_gone(ObjectMeta.of(body).name)

    def _cluster_gone(self, name: str) -> None:
        """Out of the snapshot; the bindings placed on it are scheduled again. Karmada relies on seeing the
        cluster `deleting` first; a deletion missed across a watch gap (or one without finalizers) would leave
        its bindings on a cluster that no longer exists."""
        self.ctx.clusters.forget(name)

        def requeue_if_placed_there(key: str) -> None:
            body = self.ctx.bindings.body(key)
            if body is None or name not in BindingBody(body).target_names:
                return
            if not passes_event_filter(body, self.scheduler_name):
                return
            parsed = self.ctx.bindings.parsed(key)
            if self.queue.push(key, parsed.schedule_priority if isinstance(parsed, Binding) else 0):
                self.metrics.binding_event(BindingEvent.CLUSTER_CHANGED)

        self._for_each_binding(requeue_if_placed_there, f"requeue-off-{name}")

    def _requeue_affected(self, cluster: Cluster, *, only: Callable[[Binding], bool] = lambda _: True) -> None:
        def requeue_if_affected(key: str) -> None:
            parsed = self.ctx.bindings.parsed(key)
            if (isinstance(parsed, Binding) and only(parsed)
                    and affected_by_cluster(parsed, cluster, self.scheduler_name)):
                self.queue.push(key, parsed.schedule_priority)
                self.metrics.binding_event(BindingEvent.CLUSTER_CHANGED)

        self._for_each_binding(requeue_if_affected, f"requeue-for-{cluster.name}")

    def _for_each_binding(self, action: Callable[[str], None], name: str) -> None:
        """`action` on every stored binding (ResourceBindings first): the first `REQUEUE_SLICE` at once, the
        rest in slices from a task that lets the event loop run between them (none after the stop)."""
        keys = sorted(self.ctx.bindings.keys(), key=lambda k: "/" not in k)
        for key in keys[:REQUEUE_SLICE]:
            action(key)
        if len(keys) <= REQUEUE_SLICE:
            return
        try:
            task = asyncio.get_running_loop().create_task(self._in_slices(action, keys[REQUEUE_SLICE:]), name=name)
        except RuntimeError:  # no event loop (a synchronous caller): all at once
            for key in keys[REQUEUE_SLICE:]:
                action(key)
            return
        self._requeues.add(task)
        task.add_done_callback(self._requeues.discard)

    async def _in_slices(self, action: Callable[[str], None], keys: list[str]) -> None:
        for start in range(0, len(keys), REQUEUE_SLICE):
            if self._stopping:
                return
            for key in keys[start:start + REQUEUE_SLICE]:
                action(key)
            await asyncio.sleep(0)

    def _enqueue(self, body: Mapping[str, Any], event: BindingEvent) -> None:
        if self.queue.push(binding_key(body), BindingBody(body).priority):
            self.metrics.binding_event(event)
            self._report_depth()

    # -- workers ---------------------------------------------------------------------------------------

    def start(self) -> None:
        """Spawn the workers and the queue's flushers (in the current event loop)."""
        if self._tasks:
            return
        self._tasks = [asyncio.create_task(self._worker(i), name=f"scheduling-worker-{i}") for i in range(self.workers)]
        self._tasks.append(asyncio.create_task(self.queue.run_flushers(), name="scheduling-queue-flushers"))

    def set_workers(self, workers: int) -> None:
        """Change the number of concurrent passes: extra workers are spawned, surplus ones leave after their
        current pass."""
        self.workers = max(1, workers)
        if not self._tasks or self._stopping:
            return
        live = {t.get_name() for t in self._tasks if not t.done()}
        for index in range(self.workers):
            name = f"scheduling-worker-{index}"
            if name not in live:
                self._tasks.append(asyncio.create_task(self._worker(index), name=name))

    async def _worker(self, index: int) -> None:
        while index < self.workers and (info := await self.queue.pop()) is not None:
            try:
                await self._run_one(info)
            finally:
                self.queue.done(info)
                self._report_depth()

    async def _run_one(self, info: QueuedBinding) -> None:
        read_version = _version(self.ctx.bindings.body(info.key) or {})
        tracker = PassTracker(info.key, on_commit=self._check_commit, attempt=info.attempts)  # pop counted it
        task = asyncio.create_task(run_pass(info.key, self.ctx, self.settings, tracker), name=f"pass:{info.key}")
        self._in_flight[info.key] = _InFlight(tracker, task)
        self.metrics.pass_started()
        try:
            await asyncio.wait({task})
        finally:
            self._in_flight.pop(info.key, None)
            tracker.phase = Phase.DONE
            self._settle_updates(info.key)
        outcome = self._outcome(info, task)
        self.metrics.pass_finished(outcome)
        self._route(info, outcome, read_version)

    def _settle_updates(self, key: str) -> None:
        """Generation changes seen while the pass for `key` was committing: a pass for the latest body unless
        its generation is the one our own spec write produced."""
        if key not in self._updated_while_committing:
            return
        self._updated_while_committing.discard(key)
        body = self.ctx.bindings.body(key)
        if body is not None and passes_event_filter(body, self.scheduler_name) and not self.ctx.bindings.is_own_write(
            body
        ):
            self._enqueue(body, BindingEvent.UPDATE)

    def _check_commit(self, tracker: PassTracker) -> None:
        if self._stopping:
            raise StoppingError(f"pass for {tracker.key} reached its commit point after the stop")

    def _outcome(self, info: QueuedBinding, task: asyncio.Task[PassOutcome]) -> PassOutcome:
        if task.cancelled():
            return PassOutcome.CANCELLED
        error = task.exception()
        if isinstance(error, StoppingError):
            return PassOutcome.CANCELLED
        if isinstance(error, KubeError | WriteGateClosed):  # the API's answer (or none): one line says it all
            logger.warning("pass for %s failed: %s", info.key, error)
            return PassOutcome.ERROR
        if error is not None:
            logger.error("pass for %s failed: %s", info.key, error, exc_info=error)
            return PassOutcome.ERROR
        return task.result()

    def _route(self, info: QueuedBinding, outcome: PassOutcome, read_version: str) -> None:
        """Karmada's handleErr: forget on success (and on a FitError, which is not retried), park when
        unschedulable, back off on errors; on a conflict, run again as soon as the cache holds a version newer
        than the one the pass read; nothing after a stop. A preemptor waiting for its victims' capacity backs off
        too (1 s doubling to 10 s) besides being woken by its cluster's summary: a summary change that came before
        the estimators saw the capacity free must not leave it to the unschedulable flush (PR #7832 waits for
        that flush, up to 5 minutes)."""
        if outcome is PassOutcome.CANCELLED or self._stopping:
            return
        if outcome is PassOutcome.NO_CLUSTER_FIT:
            self._fit_nowhere.add(info.key)
        else:
            self._fit_nowhere.discard(info.key)
        if outcome in (PassOutcome.SCHEDULED, PassOutcome.NO_CLUSTER_FIT, PassOutcome.SKIPPED, PassOutcome.FORGOTTEN):
            self.queue.forget(info.key)
            return
        self.metrics.binding_event(BindingEvent.ATTEMPT_FAILURE)
        if outcome is PassOutcome.UNSCHEDULABLE:
            self.queue.push_unschedulable(info)
        elif outcome is PassOutcome.CONFLICT:
            self.queue.requeue_when_newer(info, read_version, _version(self.ctx.bindings.body(info.key) or {}))
        else:
            self.queue.push_backoff(info)

    def _report_depth(self) -> None:
        depth = self.queue.depth()
        self.metrics.set_queue_depth(depth.active, depth.backoff, depth.unschedulable)

    # -- stop ------------------------------------------------------------------------------------------

    @property
    def in_flight(self) -> Mapping[str, Phase]:
        return {key: entry.tracker.phase for key, entry in self._in_flight.items()}

    def request_stop(self) -> int:
        """Stop intake and cancel every pass that has not reached its commit point; returns how many were newly
        cancelled (a pass still unwinding from an earlier call is cancelled again, not counted again).
        Synchronous, so it can run straight from a signal handler. Passes inside their commit are noted: they
        are the ones the drain lets finish."""
        self._stopping = True
        self.queue.close()
        cancelled = 0
        for entry in self._in_flight.values():
            if entry.task.done():
                continue
            if entry.tracker.phase is Phase.DECIDING:
                entry.task.cancel()
                if entry.task not in self._cancelled_by_stop:  # still unwinding from an earlier ask: counted then
                    self._cancelled_by_stop.add(entry.task)
                    cancelled += 1
            else:
                self._committing_at_stop.add(entry.task)
        self._cancelled_at_stop += cancelled
        return cancelled

    def abort(self) -> None:
        """Cancel every pass, committing or not (the lease is lost: the gate is already closed)."""
        self.request_stop()
        for entry in self._in_flight.values():
            entry.task.cancel()

    async def drain(self, drain_timeout: float) -> DrainReport:
        """The bounded stop: cancel passes before their commit point, let committing ones finish within
        `drain_timeout`, cut the rest, and await every pass and worker. Returns only when nothing is left
        running."""
        started = time.monotonic()
        self.request_stop()
        committing = set(self._committing_at_stop)
        pending = {task for task in committing if not task.done()}
        if pending:
            _, pending = await asyncio.wait(pending, timeout=max(drain_timeout, 0.0))
            for task in pending:
                task.cancel()
        stuck: set[asyncio.Task[PassOutcome]] = set()
        everything = [e.task for e in self._in_flight.values()]
        if everything:
            _, stuck = await asyncio.wait(everything, timeout=STRAGGLER_GRACE)
        if stuck:
            keys = sorted(k for k, e in self._in_flight.items() if e.task in stuck)
            logger.error(
                "passes for %s ignored their cancellation (a plugin swallowing CancelledError?); abandoned: the "
                "write gate closes next, so they cannot write", ", ".join(keys),
            )
        for worker in self._tasks:
            if worker.get_name() == "scheduling-queue-flushers" or stuck:
                worker.cancel()
        if self._tasks or self._requeues:
            await asyncio.wait([*self._tasks, *self._requeues])
        return DrainReport(
            cancelled=self._cancelled_at_stop,
            drained=len(committing) - len(pending),
            cut=len(pending | stuck),
            seconds=time.monotonic() - started,
        )


def _generation(body: Mapping[str, Any] | None) -> int | None:
    return ObjectMeta.of(body).generation if body is not None else None


def _version(body: Mapping[str, Any]) -> str:
    return ObjectMeta.of(body).resource_version


def _newly_healthy(previous: Mapping[str, Any] | None, body: Mapping[str, Any]) -> set[str]:
    """The clusters whose workload of this binding just turned Healthy: their summaries count it from now on,
    so its assumption there is released (Karmada's
    `pkg/scheduler/event_handler.go: releaseHealthyClusterAssumptions`, with `newlyHealthyClusters`)."""
    now = BindingBody(body).healthy_clusters
    return now - BindingBody(previous).healthy_clusters if now else now

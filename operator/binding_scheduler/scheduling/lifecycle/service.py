"""The whole scheduler process minus Kopf: API client and write gate, estimators, Lease, health, passes.

`start()` acquires the Lease (a standby instance makes no other API call) and starts the passes.
`shutdown()` is the headline guarantee, in this order (docs/architecture.md, "Shutdown"):

1. stop intake; 2. cancel every pass before its commit point; 3. drain the committing ones within
`shutdown.drainTimeout`, cutting them at the deadline; 4. await every pass task, and let the queued Events be
posted (at most `EVENT_FLUSH_TIMEOUT`); 5. release the Lease; 6. close the write gate, stop the decision
processes, close the gRPC channels and the HTTP session; 7. report (one log line and metrics). Everything after
the drain shares `STOP_TAIL`, each step bounded by what is left (`stop_budget`), whatever the API server does.

It returns only when all of that is done: after it, nothing of ours writes. On Lease loss the gate is closed
first, then everything is cancelled, and the process exits non-zero.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import replace
from typing import Any

from ... import __version__
from ...algorithm.schedule import ScheduleOptions
from ...estimation import AccurateEstimator
from ...kube.connection import Connection
from ...kube.errors import KubeError, NotFound, ServerError, TooManyRequests, TransportError
from ...kube.events import EventRecorder
from ...kube.gate import WriteGate
from ...kube.lease import default_identity
from ...model import ObjectMeta
from ...model.config import SchedulerConfig, overcommit_protected
from ..framework.plugins import load_plugins, plugin_warnings
from ..framework.preemptor import Preemption
from ..observability.health import readiness
from ..observability.metrics import MetricsHook, SchedulerMetrics
from ..passes.context import PassContext, PassSettings
from ..passes.events import BackgroundEvents
from ..state.stores import BindingStore, ClusterStore
from ..state.workload_groups import WorkloadGroupIndex
from .config_views import estimator_settings, needs_every_binding
from .event_source import LISTED_AT_START, EventSource
from .runtime import Scheduler
from .stop_budget import CLOSE_RESERVE, STOP_TAIL, StopBudget, release_within
from .stop_report import ShutdownReport
from .wiring import api_clients, decision_pool, health_server, lease_elector, scheduling_queue

logger = logging.getLogger(__name__)

CLUSTERS = "/apis/cluster.karmada.io/v1alpha1/clusters"
SYNC_RETRY_INITIAL, SYNC_RETRY_CAP = 0.5, 30.0
LIST_PAGE = 500  # objects per list request, as client-go's pager: no answer of 50,000 bindings in one piece
SYNC_YIELD_EVERY = 256  # objects taken in between two turns of the event loop
EVENT_FLUSH_TIMEOUT = 1.0  # seconds a stop waits for queued Events (usually milliseconds: a few posts)
BINDINGS = (
    ("/apis/work.karmada.io/v1alpha2/resourcebindings", "ResourceBinding"),
    ("/apis/work.karmada.io/v1alpha2/clusterresourcebindings", "ClusterResourceBinding"),
)


class SchedulerService:
    def __init__(
        self,
        connection: Connection,
        config: SchedulerConfig,
        *,
        metrics: SchedulerMetrics | None = None,
        identity: str | None = None,
        plugins: Sequence[object] = (),
        config_source: str = "from the defaults",
        event_source: EventSource = LISTED_AT_START,
    ) -> None:
        self.config = config
        self.event_source = event_source
        self.connection = connection
        self.plugins = tuple(plugins)
        """Out-of-tree plugins given in code (Karmada's `app.WithPlugin`): registered beside the entry points'
        and enabled by `spec.plugins` like every other plugin."""
        self.config_source = config_source
        """Where the configuration came from, for the startup line (`from file F`, `from SchedulerConfiguration
        NS/NAME`, `from the defaults`, each `and flags ...` when flags override it)."""
        self.metrics = metrics or SchedulerMetrics()
        self.gate = WriteGate()
        self.identity = identity or default_identity()
        self.client, self.lease_client = api_clients(connection, self.gate, config, self.identity,
                                                     self.metrics.rest_client)
        self.events = EventRecorder(self.client, component=config.scheduler_name)
        self.background_events = BackgroundEvents(self.events)  # a pass queues its Events and goes on
        self._estimators: list[AccurateEstimator] = []
        self.queue = scheduling_queue(config)
        self.context = PassContext(client=self.client, events=self.background_events, bindings=BindingStore(),
                                   clusters=ClusterStore(), metrics=self.metrics)
        self._preemption: Preemption | None = None
        self.decisions = decision_pool(config)
        """The decision processes (`decisionProcesses`), started with the service and stopped after its passes."""
        self._starting_decisions: asyncio.Task[None] | None = None
        self.scheduler = Scheduler(
            self.context, self._pass_settings(config), queue=self.queue, metrics=self.metrics, workers=config.workers
        )
        self.lease = lease_elector(self.lease_client, config, self.identity)
        self.health = health_server(self.metrics, config, lambda: self.probe_ready)
        self._init_lifecycle()

    def _init_lifecycle(self) -> None:
        """Where the service is in its life: readiness, leadership, the shutdown's tasks and report."""
        self.exit_code = 0
        self.on_fatal: Callable[[], None] | None = None
        self._first_lists: dict[str, float] = {}
        """Binding plurals whose first complete list is awaited from the event source, each with when the sync
        started (for its log line)."""
        self._resyncing: asyncio.Task[None] | None = None
        self._ready = False
        self._standing_by = False
        self._acquiring: asyncio.Task[None] | None = None
        self._keeper: asyncio.Task[None] | None = None
        self._shutdown: asyncio.Task[ShutdownReport] | None = None
        self._stop_requested_at: float | None = None
        self.finished_at: float | None = None
        """`time.monotonic()` when shutdown finished: nothing of ours writes after it."""
        self.lost_at: float | None = None
        self.report: ShutdownReport | None = None

    # -- configuration ------------------------------------------------------------------------------------

    def _estimator(self, config: SchedulerConfig) -> AccurateEstimator | None:
        """The accurate estimator for `config`: the current one when its settings did not change (its
        channels stay open), a new one otherwise. Replaced ones are closed at shutdown: passes still running
        may hold them."""
        if not config.estimator.enabled:
            return None
        settings = estimator_settings(config)
        if self._estimators and self._estimators[-1].settings == settings:
            return self._estimators[-1]
        estimator = AccurateEstimator(settings, service_lookup=self._lookup_service, registry=self.metrics.registry)
        self._estimators.append(estimator)
        return estimator

    def _pass_settings(self, config: SchedulerConfig) -> PassSettings:
        workload_affinity = config.feature_gates.workload_affinity
        plugins = load_plugins(config.plugins, self.plugins, workload_affinity=workload_affinity,
                               allow_unknown=config.allow_unknown_plugins)
        for line in plugin_warnings("spec.plugins", plugins):
            logger.warning("%s; running: %s", line, ", ".join(plugins.names) or "none")
        return PassSettings(
            scheduler_name=config.scheduler_name,
            plugins=plugins,
            options=ScheduleOptions(
                enable_empty_workload_propagation=config.enable_empty_workload_propagation,
                multiple_pod_templates=config.feature_gates.multiple_pod_templates_scheduling,
                cpu_limit=config.decision_cpu_limit,
            ),
            estimator=self._estimator(config),
            hooks=(MetricsHook(self.metrics),),
            assumptions=self.context.assumptions if overcommit_protected(config) else None,
            workload_groups=self._workload_groups(workload_affinity),
            preemptor=self._preemptor(config),
            decisions=self.decisions,
        )

    def _preemptor(self, config: SchedulerConfig) -> Preemption | None:
        """Binding priority preemption while both its gates are on. One planner for the service's life, its
        bounds set from each configuration: its claims and its rate window outlive configuration changes."""
        if not config.feature_gates.preemption:
            return None
        if self._preemption is None:
            self._preemption = Preemption(self.context.bindings.parsed_bindings, self.context.claims,
                                          max_victims=config.preemption.max_victims,
                                          on_limited=self.metrics.preemption_limited)
        self._preemption.max_victims = config.preemption.max_victims
        self._preemption.max_per_minute = config.preemption.max_per_minute
        return self._preemption

    def _workload_groups(self, enabled: bool) -> WorkloadGroupIndex | None:
        """The workload groups index while gate `WorkloadAffinity` is on: built from the bindings stored when the
        gate is turned on, then fed by intake; dropped when it is turned off (nothing pays for it then)."""
        if not enabled:
            self.context.workload_groups = None
        elif self.context.workload_groups is None:
            self.context.workload_groups = WorkloadGroupIndex.of_store(self.context.bindings)
        return self.context.workload_groups

    def apply_config(self, config: SchedulerConfig) -> None:
        """Apply a new valid configuration to the next passes; fields that need a restart keep their value."""
        merged = replace(
            config,
            scheduler_name=self.config.scheduler_name,
            decision_processes=self.config.decision_processes,
            leader_election=self.config.leader_election,
            metrics=self.config.metrics,
            kube_api=self.config.kube_api,
        )
        self.scheduler.settings = self._pass_settings(merged)
        self.scheduler.set_workers(merged.workers)
        self.queue.initial_backoff = merged.queue.initial_backoff
        self.queue.max_backoff = merged.queue.max_backoff
        self.queue.unschedulable_timeout = merged.queue.unschedulable_timeout
        self.config = merged

    async def relisted(
        self, plural: str, bodies: list[Mapping[str, Any]], *, keep: Collection[str] = ()
    ) -> None:
        """A complete list of `plural`: objects the stores hold but the list lacks (but those in `keep`) were
        deleted meanwhile."""
        if plural == "clusters":
            for name in self.scheduler.on_clusters_relisted(bodies, keep=keep):
                logger.info("cluster %s is gone (not in the new list)", name)
                await self._forget_estimator_channels(name)
        elif plural in ("resourcebindings", "clusterresourcebindings"):
            for key in self.scheduler.on_bindings_relisted(plural == "resourcebindings", bodies, keep=keep):
                logger.info("binding %s is gone (not in the new list)", key)
            started = self._first_lists.pop(plural, None)
            if started is not None:
                logger.info("%s listed: %d in %.1f s since the sync began (passes ran meanwhile)", plural,
                            len(bodies), time.monotonic() - started)

    async def resync(self, every: float) -> None:
        """Forever: every `every` seconds, list each watched resource with our own client and forget what the
        stores hold but the list lacks, for an event source that cannot say when it lists again (Kopf's public
        API). Only deletions are taken from the list, never its bodies (a watch event newer than the list may have
        arrived meanwhile), and an object first seen while the list ran is kept (its ADDED may be newer too)."""
        while True:
            await asyncio.sleep(every)
            for path in (CLUSTERS, *(path for path, _ in BINDINGS)):
                plural = path.rsplit("/", 1)[1]
                before = self._known(plural)
                try:
                    bodies = await self._list(path)
                except KubeError as error:
                    logger.warning("the resync could not list %s (%s): again in %gs", plural, error, every)
                    continue
                await self.relisted(plural, bodies, keep=self._known(plural) - before)

    def _known(self, plural: str) -> set[str]:
        if plural == "clusters":
            return set(self.scheduler.ctx.clusters.names())
        namespaced = plural == "resourcebindings"
        stored = self.scheduler.ctx.bindings.keys()
        return {key for key in stored if ("/" in key) == namespaced}

    async def cluster_deleted(self, body: Mapping[str, Any]) -> None:
        """A Cluster is gone: out of the snapshot, and its estimator channels closed (as Karmada does)."""
        self.scheduler.on_cluster_deleted(body)
        await self._forget_estimator_channels(ObjectMeta.of(body).name)

    async def _forget_estimator_channels(self, name: str) -> None:
        for estimator in self._estimators:
            await estimator.forget(name)

    async def _lookup_service(self, namespace: str, name: str) -> Mapping[str, Any] | None:
        try:
            return await self.client.get(f"/api/v1/namespaces/{namespace}/services/{name}")
        except NotFound:
            return None

    # -- lifecycle ----------------------------------------------------------------------------------------

    @property
    def ready(self) -> bool:
        """Leading and scheduling: the Lease is held, the caches are synced and the passes run."""
        return self._ready

    @property
    def probe_ready(self) -> bool:
        """What `/readyz` answers: leading, or standing by for the Lease and able to take part in the election;
        not once stopping or after a lost Lease, nor while the caches are being listed.

        A standby is ready on purpose: a Deployment's rolling update waits for each new pod to be ready, and a
        new pod cannot win the Lease while an old one holds it, so a leader-only readiness would stall every
        rollout. But a standby whose attempts get no decision (the API server unreachable, TLS refused, a 403,
        the Lease's namespace missing) could never take over: it is not ready. Nor is a leader whose watches
        fail (its decisions would rest on a view going stale) until they list again. Whether this instance
        leads is the `leader` metric (and the Lease's holderIdentity).
        """
        return readiness(
            stopping=self._stop_requested_at is not None,
            lease_lost=self.lost_at is not None,
            standing_by=self._standing_by,
            lease_problem=self.lease.problem if self.lease is not None else None,
            scheduling=self._ready,
            watch_problem=self.event_source.watch_problem() if not self._standing_by else None,
        )

    def startup_line(self) -> str:
        """What an operator checks first: which version, which API server, which configuration, where it serves."""
        lease = self.lease
        election = f"lease {lease.namespace}/{lease.name} as {lease.identity}" if lease else "no leader election"
        source = f" from {self.connection.source}" if self.connection.source else ""
        return (f"binding-scheduler {__version__}: API server {self.connection.server}{source}; "
                f"configuration {self.config_source}; scheduler name {self.config.scheduler_name}; "
                f"{self.health.describe()}; {election}")

    async def start(self) -> None:
        """Serve health, wait for the Lease, then start the passes. Cancellable while waiting."""
        await self.health.start()
        logger.info(self.startup_line())
        if self.decisions is not None:  # started beside the Lease and the lists: passes decide here until ready
            self._starting_decisions = asyncio.create_task(self.decisions.start(), name="decision-processes")
        if self.lease is not None:
            logger.info("waiting for lease %s/%s as %s", self.lease.namespace, self.lease.name, self.lease.identity)
            self._acquiring = asyncio.ensure_future(self.lease.acquire())
            self._standing_by = True
            try:
                await self._acquiring
            finally:
                self._standing_by = False
            if self._shutdown is not None:  # the stop came as the Lease was won: lead nothing (it hands it back)
                raise asyncio.CancelledError
            self.client.leadership_doubt = self.lease.doubt  # every write of ours, not the Lease's own
            self.metrics.set_leader(True)
            logger.info("acquired lease %s/%s", self.lease.namespace, self.lease.name)
            self._keeper = asyncio.create_task(self.lease.keep(self._lease_lost), name="lease-keeper")
        await self.sync()
        self.scheduler.start()
        if self.event_source.resync_every is not None:
            self._resyncing = asyncio.create_task(self.resync(self.event_source.resync_every), name="resync")
        self._ready = self.gate.is_open  # not when the Lease was lost meanwhile

    async def sync(self) -> None:
        """List the Clusters before any pass runs (Karmada waits for its caches the same way): a pass against a
        half-listed fleet could clear a binding's clusters. The bindings are listed here too unless the event
        source lists them (`EventSource.reports_lists`) and no gate needs every one of them before the first pass
        (`needs_every_binding`): then each binding is scheduled as its page arrives, and 50,000 bindings
        are not listed twice (once here, once by the watch)."""
        started = time.monotonic()
        clusters = await self._list(CLUSTERS)
        for index, item in enumerate(clusters):
            self.scheduler.on_cluster(item)
            if index % SYNC_YIELD_EVERY == SYNC_YIELD_EVERY - 1:
                await asyncio.sleep(0)  # tens of thousands of objects: the Lease keeper must not wait
        if self.event_source.reports_lists and not needs_every_binding(self.config):
            for path, _ in BINDINGS:  # a refused list still ends the start here, not in the watch's backoff
                await self._list(path, whole=False)
            self._first_lists = {path.rsplit("/", 1)[1]: started for path, _ in BINDINGS}
            logger.info("caches synced: %d clusters listed in %.1f s; the bindings are scheduled as the watch lists "
                        "them", len(clusters), time.monotonic() - started)
            return
        bindings = 0
        for path, kind in BINDINGS:
            for index, item in enumerate(await self._list(path)):
                self.scheduler.on_binding({"kind": kind, **item})  # a list's items may leave their kind out
                bindings += 1
                if index % SYNC_YIELD_EVERY == SYNC_YIELD_EVERY - 1:
                    await asyncio.sleep(0)
        logger.info("caches synced: %d clusters, %d bindings listed in %.1f s", len(clusters), bindings,
                    time.monotonic() - started)

    async def _list(self, path: str, *, whole: bool = True) -> list[Mapping[str, Any]]:
        """One complete list (`whole`), or its first object only (whether we may list it at all). A transient
        failure (5xx, 429, no answer) is retried with a backoff until it succeeds, as an informer's first list
        is (a lost Lease or a stop ends the wait); any other is final."""
        delay = SYNC_RETRY_INITIAL
        while True:
            try:
                if whole:
                    answer = await self.client.list(path, params={"limit": LIST_PAGE})
                else:
                    answer = await self.client.get(path, params={"limit": 1})
                break
            except (ServerError, TooManyRequests, TransportError) as error:
                logger.warning("listing %s failed (%s): again in %gs", path, error, delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, SYNC_RETRY_CAP)
        return list(answer.get("items") or [])

    def request_stop(self) -> None:
        """The first, synchronous step of a stop (safe in a signal handler): intake closes and every pass
        before its commit point is cancelled now."""
        if self._stop_requested_at is None:
            self._stop_requested_at = time.monotonic()
        self._ready = False
        self.scheduler.request_stop()

    async def shutdown(self) -> ShutdownReport:
        """The whole bounded shutdown; concurrent or repeated calls share one run."""
        if self._shutdown is None:
            self._shutdown = asyncio.ensure_future(self._shutdown_once())
        return await asyncio.shield(self._shutdown)

    async def _shutdown_once(self) -> ShutdownReport:
        """Every step bounded by what is left of the stop's budget (`StopBudget`), counted from the request."""
        self.request_stop()
        started = self._stop_requested_at or time.monotonic()
        drain_timeout = self.config.shutdown.drain_timeout
        budget = StopBudget.starting(started, drain_timeout)
        if self._resyncing is not None:
            self._resyncing.cancel()
            await asyncio.wait({self._resyncing})
        drain = await self.scheduler.drain(budget.share(drain_timeout, keep=STOP_TAIL))
        # Before the gate closes: the drained passes' Events, then the Lease.
        await self.background_events.close(budget.share(EVENT_FLUSH_TIMEOUT, keep=CLOSE_RESERVE))
        released, lease = await self._stop_lease(budget)
        self.gate.close("scheduler shut down")
        await self._stop_decisions()  # local: the decision processes write nothing, the successor need not wait
        await self._close_connections(budget)
        report = ShutdownReport(drain.cancelled, drain.drained, drain.cut, time.monotonic() - started, released,
                                lease, self.gate.in_doubt)
        self.metrics.shutdown_report(report.cancelled, report.drained, report.cut, report.seconds)
        self.metrics.set_leader(False)
        logger.info(report.line())
        await self.health.stop()
        self.finished_at = time.monotonic()
        self.report = report
        return report

    async def _stop_decisions(self) -> None:
        """After the drain (no pass awaits a decision any more): the decision processes stop, bounded."""
        if self.decisions is None:
            return
        if self._starting_decisions is not None:
            self._starting_decisions.cancel()
            await asyncio.wait({self._starting_decisions})
        await self.decisions.close()

    async def _stop_lease(self, budget: StopBudget) -> tuple[bool, str]:
        """Stop acquiring and renewing, then hand the Lease back if it names us, within what is left of the
        stop's budget (and `renewDeadline`). An acquisition the stop cut short may have sent its write:
        `release()` then reads the Lease to know. Returns whether it was released, and what happened if not."""
        for task in (self._acquiring, self._keeper):
            if task is not None:
                task.cancel()
                await asyncio.wait({task})
        if self.lease is None:
            return False, "not held"
        if not self.gate.is_open:
            return False, "lost"
        if not self.lease.may_hold:
            return False, "not held"
        election = self.config.leader_election
        return await release_within(self.lease, budget, election.renew_deadline, election.lease_duration)

    async def _close_connections(self, budget: StopBudget) -> None:
        """Close the gRPC channels and HTTP sessions: local work, bounded all the same (at least
        `CLOSE_RESERVE`), since a stalled peer must not hold the exit."""
        try:
            async with asyncio.timeout(max(budget.left(), CLOSE_RESERVE)):
                for estimator in self._estimators:
                    await estimator.close()
                await self.client.close()
                await self.lease_client.close()
        except TimeoutError:
            logger.warning("closing the connections took longer than the stop's budget: left to the exit")

    async def _lease_lost(self, reason: str) -> None:
        """Fatal: close the gate first, then cancel everything, and exit non-zero."""
        self.gate.close(f"lease lost: {reason}")
        self.lost_at = time.monotonic()
        logger.error("lost the lease (%s): write gate closed, cancelling every pass", reason)
        self.metrics.set_leader(False)
        self.exit_code = 1
        self._ready = False
        self.scheduler.abort()
        if self.on_fatal is not None:
            self.on_fatal()

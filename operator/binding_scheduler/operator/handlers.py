"""Kopf registrations only: startup, login, the event handlers, and the bounded cleanup.

The event path starts here. Each watched resource has one `on.event` handler, and each handler calls the app's
entry point for its resource (`routes`): bindings to `app.binding_event`, Clusters to `app.cluster_changed` and
`app.cluster_deleted`, our SchedulerConfiguration to `app.config_event`. On a Kopf release `watch_guard` was
verified against, the fast path hands each binding and cluster event to that same entry point straight from the
watch stream (Kopf's per-event machinery skipped: a third of the CPU at 100 clusters), survives watch failures
and reports every relist; on any other Kopf, or with `--event-path=kopf`, the handlers below receive the events
through Kopf's public API, and the leader resyncs every `RESYNC_PERIOD` to find what vanished while a watch was
down (Kopf does not say when it lists again). The startup says which path runs, in one line.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Mapping
from typing import Any

import kopf

from ..scheduling.lifecycle.event_source import EventSource
from ..scheduling.lifecycle.stop_budget import STOP_TAIL
from . import watch_guard
from .app import CONFIG_GROUP, CONFIG_PLURAL, CONFIG_VERSION, OperatorApp
from .storages import NoDiffBaseStorage, NoProgressStorage

logger = logging.getLogger(__name__)

CLEANUP_MARGIN = 2.0
RESYNC_PERIOD = 300.0  # seconds, on Kopf's own event path only
KOPF_PATH_BACKOFFS = (1.0, 2.0, 4.0, 8.0, 16.0, *(30.0,) * 20)
"""On Kopf's own path no guard outlives a failing watch: Kopf retries each request this long (about 10 min)
before it ends the operator."""
KOPF_REQUEST_BACKOFFS = (1.0, 2.0, 4.0)
LIST_CHUNK = 500


def configure(settings: kopf.OperatorSettings) -> None:
    """Kopf must write nothing and stop at once: posting off (and its level raised, because `kopf.warn`
    ignores `enabled`), no drain window for its own workers, no peering. Nor may it need more than the
    scheduler's RBAC rules: scanning off, so it resolves our fixed resources by discovery instead of watching
    CustomResourceDefinitions and Namespaces cluster-wide."""
    settings.posting.enabled = False
    objects = logging.getLogger("kopf.objects")
    if not objects.isEnabledFor(logging.DEBUG):  # "Handler ... succeeded" per watch event: noise unless debugging
        objects.setLevel(logging.WARNING)
    settings.posting.level = logging.CRITICAL
    settings.queueing.exit_timeout = 0
    settings.peering.standalone = True
    settings.peering.mandatory = False
    settings.scanning.disabled = True
    # A failing list/watch request is retried briefly by Kopf; past that, watch_guard backs off (up to 30 s)
    # and lists again, for as long as the outage lasts (Kopf alone would end the operator after ~54 s).
    settings.networking.error_backoffs = KOPF_REQUEST_BACKOFFS
    settings.networking.request_timeout = 60
    # Lists in pages, as client-go's pager does: 50,000 bindings in one answer blocked the API server (and the
    # Lease renewals behind it) for seconds.
    settings.watching.chunk_size = LIST_CHUNK
    # Our handlers are `on.event` only: Kopf's per-event copies for change detection and handler progress
    # serve nothing (and would be written into the objects, which Kopf must never do).
    settings.persistence.diffbase_storage = NoDiffBaseStorage()
    settings.persistence.progress_storage = NoProgressStorage()


ROUTED = (
    ("work.karmada.io", "v1alpha2", "resourcebindings"),
    ("work.karmada.io", "v1alpha2", "clusterresourcebindings"),
    ("cluster.karmada.io", "v1alpha1", "clusters"),
)
"""(group, version, plural) of the resources whose watch events go straight to the app (see `routes`)."""


def routes(app: OperatorApp) -> dict[str, watch_guard.Route]:
    """What each watch event of a routed resource does, by plural: watch_guard calls these in stream order,
    without Kopf's per-event machinery. This is the one way bindings and clusters reach the scheduler's
    stores after its start, beside watch_guard's relists (`app.relisted`), which replace them. The
    SchedulerConfiguration keeps Kopf's path (its events are rare)."""

    def cluster(event: Mapping[str, Any]) -> Awaitable[None] | None:
        body = event.get("object")
        if not isinstance(body, Mapping):
            return None
        if event.get("type") == "DELETED":
            return app.cluster_deleted(body)  # it closes the cluster's estimator channels
        app.cluster_changed(body)
        return None

    return {"resourcebindings": app.binding_event, "clusterresourcebindings": app.binding_event, "clusters": cluster}


def register(registry: kopf.OperatorRegistry, app: OperatorApp) -> None:
    event_routes = routes(app)

    # A failed start is final (the process exits 1): Kopf's default would retry it every 60 s forever, and a
    # second `app.start()` would build a second service beside the first one's lease keeper and servers.
    @kopf.on.startup(registry=registry, errors=kopf.ErrorsMode.PERMANENT)
    async def startup(settings: kopf.OperatorSettings, **_: Any) -> None:
        configure(settings)
        refusal = "--event-path=kopf" if app.options.event_path == "kopf" else watch_guard.unsupported()
        if refusal is None:
            attachment = watch_guard.attach(settings, app.relisted, routes=event_routes)
            app.event_source = EventSource.streamed(lambda: dict(attachment.failures))
            logger.debug("event path: watch_guard's fast path (kopf %s)", ", ".join(sorted(watch_guard.VERIFIED_KOPF)))
        else:
            settings.networking.error_backoffs = KOPF_PATH_BACKOFFS
            app.event_source = EventSource.resynced(RESYNC_PERIOD)
            logger.info("event path: Kopf's handlers (%s): slower per event, and a resync every %gs finds what was "
                        "deleted while a watch was down", refusal, RESYNC_PERIOD)
        await app.start()

    @kopf.on.login(registry=registry)
    def login(**_: Any) -> kopf.ConnectionInfo:
        return app.connection_info()

    @kopf.on.cleanup(registry=registry, retries=1, errors=kopf.ErrorsMode.IGNORED)
    async def cleanup(**_: Any) -> None:
        """The shutdown bounds itself (`StopBudget`); this bound only guards Kopf's exit against a bug there."""
        drain = app.service.config.shutdown.drain_timeout if app.service is not None else 0.0
        try:
            async with asyncio.timeout(drain + STOP_TAIL + CLEANUP_MARGIN):
                await app.shutdown()
        except TimeoutError:
            logger.error("the shutdown outlasted its budget (drainTimeout %gs + %gs) by %gs: exiting without it",
                         drain, STOP_TAIL, CLEANUP_MARGIN)

    for group, version, plural in ROUTED:
        _declare_watch(registry, group, version, plural, event_routes[plural])

    if app.options.config_name:

        @kopf.on.event(CONFIG_GROUP, CONFIG_VERSION, CONFIG_PLURAL, registry=registry)
        async def configuration(event: kopf.RawEvent, **_: Any) -> None:
            await app.config_event(event)


def _declare_watch(
    registry: kopf.OperatorRegistry, group: str, version: str, plural: str, route: watch_guard.Route
) -> None:
    """Kopf watches only the resources that have handlers, so a routed resource still needs one. Its events
    never reach it (watch_guard hands them to the route first); were they to, it would do the same."""

    async def routed(event: kopf.RawEvent, **_: Any) -> None:
        pending = route(event)
        if pending is not None:
            await pending

    kopf.on.event(group, version, plural, id=plural, registry=registry)(routed)

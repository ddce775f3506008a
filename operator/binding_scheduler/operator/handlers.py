"""Kopf registrations only: startup, login, the event and index handlers, and the bounded cleanup."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Mapping
from typing import Any

import kopf

from . import watch_guard
from .app import CONFIG_GROUP, CONFIG_PLURAL, CONFIG_VERSION, OperatorApp
from .storages import NoDiffBaseStorage, NoProgressStorage

CLEANUP_MARGIN = 10.0
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
    # Our handlers are `on.event` and `index` only: Kopf's per-event copies for change detection and handler
    # progress serve nothing (and would be written into the objects, which Kopf must never do).
    settings.persistence.diffbase_storage = NoDiffBaseStorage()
    settings.persistence.progress_storage = NoProgressStorage()


def routes(app: OperatorApp) -> dict[str, watch_guard.Route]:
    """The resources whose watch events go straight to the app (see watch_guard): the same calls as the
    handlers below, in stream order, without Kopf's per-event machinery. The SchedulerConfiguration keeps
    Kopf's path (its events are rare)."""

    def cluster(event: Mapping[str, Any]) -> Awaitable[None] | None:
        if event.get("type") == "DELETED":
            return app.cluster_event(event)
        body = event.get("object")
        if isinstance(body, Mapping):
            app.cluster_indexed(body)
        return None

    return {"resourcebindings": app.binding_event, "clusterresourcebindings": app.binding_event, "clusters": cluster}


def register(registry: kopf.OperatorRegistry, app: OperatorApp) -> None:
    # The binding and cluster handlers below declare what Kopf watches; their events take `routes` instead.
    # A failed start is final (the process exits 1): Kopf's default would retry it every 60 s forever, and a
    # second `app.start()` would build a second service beside the first one's lease keeper and servers.
    @kopf.on.startup(registry=registry, errors=kopf.ErrorsMode.PERMANENT)
    async def startup(settings: kopf.OperatorSettings, **_: Any) -> None:
        configure(settings)
        watch_guard.attach(settings, app.relisted, routes=routes(app))
        await app.start()

    @kopf.on.login(registry=registry)
    def login(**_: Any) -> kopf.ConnectionInfo:
        return app.connection_info()

    @kopf.on.cleanup(registry=registry, retries=1, errors=kopf.ErrorsMode.IGNORED)
    async def cleanup(**_: Any) -> None:
        drain = app.service.config.shutdown.drain_timeout if app.service is not None else 0.0
        async with asyncio.timeout(drain + CLEANUP_MARGIN):
            await app.shutdown()

    @kopf.on.event("work.karmada.io", "v1alpha2", "resourcebindings", registry=registry)
    async def resource_binding(event: kopf.RawEvent, **_: Any) -> None:
        app.binding_event(event)

    @kopf.on.event("work.karmada.io", "v1alpha2", "clusterresourcebindings", registry=registry)
    async def cluster_resource_binding(event: kopf.RawEvent, **_: Any) -> None:
        app.binding_event(event)

    @kopf.index("cluster.karmada.io", "v1alpha1", "clusters", registry=registry)
    async def clusters(body: kopf.Body, name: str, **_: Any) -> dict[str, Any]:
        app.cluster_indexed(dict(body))
        return {name: body.get("metadata", {}).get("resourceVersion")}

    @kopf.on.event("cluster.karmada.io", "v1alpha1", "clusters", registry=registry)
    async def cluster(event: kopf.RawEvent, **_: Any) -> None:
        await app.cluster_event(event)

    if app.options.config_name:

        @kopf.on.event(CONFIG_GROUP, CONFIG_VERSION, CONFIG_PLURAL, registry=registry)
        async def configuration(event: kopf.RawEvent, **_: Any) -> None:
            await app.config_event(event)

"""Kopf's watch streams made to survive what client-go's informers survive, and to report every relist.

Kopf 1.45 ends the whole operator when a watch stream fails in a way it does not expect: an `ERROR` event with
a code other than 410, an event cut mid-JSON, or an API outage longer than its request retries (about 54 s of
5xx). client-go's reflector logs, backs off and lists again. And after a 410 Kopf lists again without telling
its handlers which objects vanished meanwhile (an informer's `Replace` would delete them from its store).

Kopf has no hook for either, so this module wraps its `continuous_watch` (one list, then watches from the
list's resourceVersion): a failure of one stream is logged and ends that stream after an exponential backoff,
and Kopf's own loop (`infinite_watch`) starts the next one with a fresh list; when a list completes, the
objects it held go to the listener of that operator's `Attachment` (`attach`: kept here by the operator's
settings, the one argument Kopf passes that says which operator a stream belongs to; nothing is set on them).
The wrapper is installed once per process and is a no-op for operators without an attachment (Kopf's behaviour).

It also routes events straight to the scheduler (`attach(..., routes=...)`): for a resource with a route, each
watch event goes to its route, in stream order, and Kopf's per-event machinery never sees it. The scheduler's
handlers are `on.event`/`index` handlers that only read the raw event, and Kopf writes nothing, so what Kopf
would do per event is all overhead: a per-object queue and worker task, a `Body` wrapper, three loggers, the
error throttler, the index, cause detection, the handler invocation machinery and an empty patch; a route
costs a function call. What that buys today, measured (benchmarks.e2e, 100 clusters, 2,000 bindings, one worker,
two interleaved rounds on 2 cores, the scheduler with `--event-path=kopf` against the default): 2.4-2.6 ms of
the scheduler's CPU per binding instead of 3.2-3.3 (a quarter less), 125 MiB peak RSS instead of 185, and the
same bindings/s, which the API server's CPU bounds there. Kopf still lists, watches, reconnects, lists again after
a 410 or a failure, authenticates and keeps its readiness (the `LISTED` bookmark still reaches it); its
handlers stay registered, because Kopf watches only resources that have handlers.

And Kopf's watch streams parse their events, and its lists their pages, with orjson (`_KopfJson`,
`_get_through_orjson`).

This relies on Kopf internals (`kopf._cogs.clients.watching`), so it turns itself on only for the Kopf versions
it was verified against (`VERIFIED_KOPF`): `unsupported()` says why not on any other, and the operator then runs
on Kopf's public API alone (`handlers.register`), with a periodic resync in place of the relist reports.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import inspect
import json
import logging
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from kopf._cogs.clients import api as kopf_api
from kopf._cogs.clients import errors as kopf_errors
from kopf._cogs.clients import watching

from ..kube import jsonio

logger = logging.getLogger(__name__)

RelistListener = Callable[[str, list[Mapping[str, Any]]], Awaitable[None]]
"""Awaited with the resource's plural and every object of a completed list (before Kopf hears the list ended)."""
Route = Callable[[Mapping[str, Any]], Awaitable[None] | None]
"""Called (and awaited, when it returns an awaitable) with each raw watch event of one resource: `type` is None
for a listed object, else ADDED, MODIFIED or DELETED (BOOKMARKs are not routed)."""

YIELD_EVERY = 64  # routed events between two turns of the event loop
BACKOFF_INITIAL = 0.5
BACKOFF_CAP = 30.0
EXPECTED_PARAMETERS = ("settings", "resource", "namespace", "operator_pause_waiter")
EXPECTED_GET_PARAMETERS = ("url", "settings", "payload", "headers", "timeout", "logger")

_wrapped: dict[str, Any] = {}  # "continuous_watch": Kopf's own function, once installed


@dataclass(slots=True)
class Attachment:
    """What one operator's watch streams report to and route through (its settings, Kopf's one argument to the
    wrapped function, say which operator a stream belongs to)."""

    listener: RelistListener
    routes: Mapping[str, Route] = field(default_factory=dict)
    failures: dict[str, int] = field(default_factory=dict)
    """The resources (by plural) whose last watch or list failed and has not listed again, with the failures."""


_attached: dict[int, Attachment] = {}
"""By the id of the operator's settings (Kopf's OperatorSettings is unhashable); dropped with the settings."""

STREAM_FAILURES: tuple[type[BaseException], ...] = (
    watching.WatchingError,  # an ERROR event other than 410
    json.JSONDecodeError,  # an event cut mid-line
    UnicodeDecodeError,
    kopf_errors.APIError,  # a list/watch request that failed after Kopf's own retries (5xx, 403, 429, ...)
    aiohttp.ClientError,
    TimeoutError,
)


VERIFIED_KOPF = frozenset({"1.45.2"})
"""The Kopf releases whose `continuous_watch` and API module this wrapper was read against and tested with."""


class UnsupportedKopf(RuntimeError):
    """The installed Kopf lacks the watch internals this module wraps."""


def unsupported() -> str | None:
    """Why the fast path cannot run on the installed Kopf (None when it can)."""
    try:
        version = importlib.metadata.version("kopf")
    except importlib.metadata.PackageNotFoundError:
        version = "unknown"
    if version not in VERIFIED_KOPF:
        return f"kopf {version} is not a release it was verified against ({', '.join(sorted(VERIFIED_KOPF))})"
    original = _wrapped.get("continuous_watch", getattr(watching, "continuous_watch", None))
    if original is None or tuple(inspect.signature(original).parameters) != EXPECTED_PARAMETERS:
        return f"kopf {version} has no continuous_watch{EXPECTED_PARAMETERS}"
    return None


def install() -> None:
    """Wrap Kopf's `continuous_watch` (idempotent)."""
    if "continuous_watch" in _wrapped:
        return
    original = getattr(watching, "continuous_watch", None)
    if original is None or tuple(inspect.signature(original).parameters) != EXPECTED_PARAMETERS:
        raise UnsupportedKopf(
            "kopf._cogs.clients.watching.continuous_watch is missing or changed: this Kopf version is not supported"
        )
    _wrapped["continuous_watch"] = original
    watching.continuous_watch = guarded_continuous_watch
    if getattr(kopf_api, "json", None) is json:  # the one use is `json.loads(line)` of each watch event
        kopf_api.json = _KopfJson()  # type: ignore[assignment,attr-defined]
    get = getattr(kopf_api, "get", None)
    if get is not None and tuple(inspect.signature(get).parameters) == EXPECTED_GET_PARAMETERS:
        kopf_api.get = _get_through_orjson


async def _get_through_orjson(
    url: str, *, settings: Any, payload: object | None = None, headers: dict[str, str] | None = None,
    timeout: Any = None, logger: Any,  # noqa: ASYNC109 - Kopf's own signature, passed through
) -> Any:
    """Kopf's `api.get` (its lists' pages, its discovery) with the answer parsed by orjson: aiohttp's
    `response.json()` uses the standard library's parser, which was 10 % of the scheduler's CPU while it listed
    50,000 bindings (benchmarks.profile's share for the watch, at the cold start). The same request (Kopf's, with
    its retries and credentials), the same checks of the answer's content type."""
    response = await kopf_api.request(method="get", url=url, payload=payload, headers=headers, timeout=timeout,
                                      settings=settings, logger=logger)
    async with response:
        return await response.json(loads=jsonio.loads)


class _KopfJson:
    """What Kopf's API module sees as `json`: `loads` through orjson (`kube.jsonio`, with the standard library
    as its fallback), everything else the standard library's. Parsing the watch events was ~4 % of the
    scheduler's CPU at 100 clusters; orjson parses them in less than half the time."""

    loads = staticmethod(jsonio.loads)

    def __getattr__(self, name: str) -> Any:
        return getattr(json, name)


def attach(settings: Any, listener: RelistListener, routes: Mapping[str, Route] | None = None) -> Attachment:
    """Send the lists of the operator that runs with `settings` to `listener`, and the events of each resource
    (by plural) in `routes` to its route instead of Kopf's handlers."""
    install()
    attachment = Attachment(listener, dict(routes or {}))
    key = id(settings)
    _attached[key] = attachment
    weakref.finalize(settings, _attached.pop, key, None)
    return attachment


def failing_watches(settings: Any) -> dict[str, int]:
    """The resources (by plural) whose last watch or list failed and has not listed again since, each with its
    failures in a row: while one is here, the scheduler's view of it is going stale."""
    attachment = _attached.get(id(settings))
    return dict(attachment.failures) if attachment is not None else {}


async def guarded_continuous_watch(
    *, settings: Any, resource: Any, namespace: Any, operator_pause_waiter: Any
) -> AsyncIterator[Any]:
    attachment = _attached.get(id(settings))
    if attachment is None:  # an operator on Kopf's own path (another in this process attached): Kopf's behaviour
        async for event in _wrapped["continuous_watch"](
            settings=settings, resource=resource, namespace=namespace, operator_pause_waiter=operator_pause_waiter
        ):
            yield event
        return
    plural = str(getattr(resource, "plural", resource))
    listed: list[Mapping[str, Any]] | None = []
    listener, route, failures = attachment.listener, attachment.routes.get(plural), attachment.failures
    routed = 0
    try:
        async for event in _wrapped["continuous_watch"](
            settings=settings, resource=resource, namespace=namespace, operator_pause_waiter=operator_pause_waiter
        ):
            if event is watching.Bookmark.LISTED:
                failures.pop(plural, None)
                if listed is not None:
                    await listener(plural, listed)
                listed = None
            elif isinstance(event, Mapping):
                kind = event.get("type")
                if listed is not None and kind is None:
                    listed.append(event.get("object") or {})
                if route is not None:
                    if kind != "BOOKMARK":
                        await _deliver(route, event, plural)
                        routed += 1
                        if routed % YIELD_EVERY == 0:
                            await asyncio.sleep(0)  # a long list arrives without a pause: let the passes run
                    continue
            yield event
    except STREAM_FAILURES as error:
        count = failures[plural] = failures.get(plural, 0) + 1
        delay = min(BACKOFF_INITIAL * 2 ** (count - 1), BACKOFF_CAP)
        logger.warning(
            "the watch of %s failed (%s: %s); listing again in %gs (failure %d in a row)",
            plural, type(error).__name__, _short(error), delay, count,
        )
        await asyncio.sleep(delay)


async def _deliver(route: Route, event: Mapping[str, Any], plural: str) -> None:
    """One event to its route. A failure is logged and the stream goes on, as Kopf does for a failing
    `on.event` handler (a watch event is never retried)."""
    try:
        pending = route(event)
        if pending is not None:
            await pending
    except Exception:
        metadata = (event.get("object") or {}).get("metadata") or {}
        logger.exception("handling a %s event of %s %s failed", event.get("type") or "listed", plural,
                         "/".join(filter(None, (metadata.get("namespace"), metadata.get("name")))))


def _short(error: BaseException, limit: int = 300) -> str:
    text = str(error)
    return text if len(text) <= limit else text[:limit] + "..."

"""Kopf's watch streams survive stream failures (logged, backed off, listed again) and report each list."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Mapping
from typing import Any

import pytest
from kopf._cogs.clients import errors as kopf_errors
from kopf._cogs.clients import watching

from binding_scheduler.operator import watch_guard


class FakeSettings:
    """Any object can key the listeners (Kopf's OperatorSettings in production); attached, as `watch_guard.attach`
    leaves an operator on the fast path, with a listener that hears nothing."""

    def __init__(self) -> None:
        watch_guard.attach(self, _deaf)


async def _deaf(plural: str, bodies: list[Mapping[str, Any]]) -> None:
    return None


def stream_of(*items: Any, then: BaseException | None = None) -> Any:
    async def original(**_: Any) -> AsyncIterator[Any]:
        for item in items:
            yield item
        if then is not None:
            raise then
    return original


async def consume(settings: object, monkeypatch: pytest.MonkeyPatch, original: Any) -> list[Any]:
    monkeypatch.setitem(watch_guard._wrapped, "continuous_watch", original)
    monkeypatch.setattr(watch_guard, "BACKOFF_INITIAL", 0.01)
    return [
        event async for event in watch_guard.guarded_continuous_watch(
            settings=settings, resource="clusters", namespace=None, operator_pause_waiter=None
        )
    ]


def listed(name: str) -> dict[str, Any]:
    return {"type": None, "object": {"metadata": {"name": name}}}


async def test_listener_hears_list_end_before_kopf(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings = FakeSettings()
    heard: list[tuple[str, list[str]]] = []

    async def listener(plural: str, bodies: list[Mapping[str, Any]]) -> None:
        heard.append((plural, [b["metadata"]["name"] for b in bodies]))

    watch_guard.attach(settings, listener)
    modified = {"type": "MODIFIED", "object": {"metadata": {"name": "a"}}}
    events = await consume(
        settings, monkeypatch, stream_of(listed("a"), listed("b"), watching.Bookmark.LISTED, modified)
    )
    assert heard == [("clusters", ["a", "b"])]
    assert events == [listed("a"), listed("b"), watching.Bookmark.LISTED, modified]


@pytest.mark.parametrize(
    "failure",
    [
        watching.WatchingError("Error in the watch-stream: {'code': 500}"),
        json.JSONDecodeError("Unterminated string", '{"type": "MODI', 14),
        kopf_errors.APIServerError({"code": 503, "message": "unavailable"}, status=503, headers={}),
        kopf_errors.APIForbiddenError({"code": 403, "message": "forbidden"}, status=403, headers={}),
    ],
    ids=["error-event", "cut-mid-json", "outage-past-kopf-retries", "forbidden"],
)
async def test_failed_stream_ends_quietly_so_kopf_lists_again(
    failure: BaseException, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    events = await consume(FakeSettings(), monkeypatch, stream_of(listed("a"), then=failure))
    assert events == [listed("a")]
    assert "the watch of clusters failed" in caplog.text
    assert "listing again in 0.01s (failure 1 in a row)" in caplog.text


async def test_failures_back_off_until_good_list(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    settings = FakeSettings()
    sleeps: list[float] = []

    async def no_sleep(delay: float) -> None:
        sleeps.append(delay)

    monkeypatch.setattr(asyncio, "sleep", no_sleep)
    broken = stream_of(then=watching.WatchingError("boom"))
    for _ in range(3):
        await consume(settings, monkeypatch, broken)
    await consume(settings, monkeypatch, stream_of(watching.Bookmark.LISTED))
    await consume(settings, monkeypatch, broken)
    assert sleeps == [0.01, 0.02, 0.04, 0.01]


async def test_failing_stream_reported_among_others(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each watch of the operator shares one record of failures: a stream started after another, while none had
    failed yet, must not replace the record the first one writes into."""
    settings = FakeSettings()
    fail_clusters, end = asyncio.Event(), asyncio.Event()

    async def original(*, resource: str, **_: Any) -> AsyncIterator[Any]:
        yield watching.Bookmark.LISTED
        await (fail_clusters if resource == "clusters" else end).wait()
        if resource == "clusters":
            raise watching.WatchingError("boom")

    async def watch(resource: str) -> None:
        async for _ in watch_guard.guarded_continuous_watch(
            settings=settings, resource=resource, namespace=None, operator_pause_waiter=None
        ):
            pass

    monkeypatch.setitem(watch_guard._wrapped, "continuous_watch", original)
    monkeypatch.setattr(watch_guard, "BACKOFF_INITIAL", 0.01)
    clusters = asyncio.create_task(watch("clusters"))
    await asyncio.sleep(0)
    bindings = asyncio.create_task(watch("resourcebindings"))
    await asyncio.sleep(0)
    fail_clusters.set()
    await clusters

    assert watch_guard.failing_watches(settings) == {"clusters": 1}
    end.set()
    await bindings


async def test_cancellation_is_not_swallowed(monkeypatch: pytest.MonkeyPatch) -> None:
    watching = asyncio.Event()

    async def hanging(**_: Any) -> AsyncIterator[Any]:
        watching.set()
        await asyncio.Event().wait()
        yield None

    task = asyncio.create_task(consume(FakeSettings(), monkeypatch, hanging))
    await watching.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


def test_guard_wraps_kopfs_own_watch_function() -> None:
    watch_guard.install()
    assert watching.continuous_watch is watch_guard.guarded_continuous_watch
    assert "continuous_watch" in watch_guard._wrapped


async def test_routed_events_go_in_order_kopf_sees_list_end(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings = FakeSettings()
    routed: list[tuple[Any, str]] = []
    deleted: list[str] = []

    async def on_delete(name: str) -> None:
        await asyncio.sleep(0)
        deleted.append(name)

    def route(event: Mapping[str, Any]) -> Any:
        routed.append((event["type"], event["object"]["metadata"]["name"]))
        return on_delete(event["object"]["metadata"]["name"]) if event["type"] == "DELETED" else None

    async def listener(plural: str, bodies: list[Mapping[str, Any]]) -> None:
        routed.append(("listed", plural))

    watch_guard.attach(settings, listener, routes={"clusters": route})
    bookmark = {"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "9"}}}
    gone = {"type": "DELETED", "object": {"metadata": {"name": "a"}}}
    modified = {"type": "MODIFIED", "object": {"metadata": {"name": "b"}}}
    events = await consume(settings, monkeypatch, stream_of(listed("a"), watching.Bookmark.LISTED, bookmark, gone,
                                                           modified))
    assert events == [watching.Bookmark.LISTED]  # Kopf keeps its readiness, and does nothing per event
    assert routed == [(None, "a"), ("listed", "clusters"), ("DELETED", "a"), ("MODIFIED", "b")]
    assert deleted == ["a"]  # an awaitable answer is awaited before the next event


async def test_failing_route_is_logged_and_stream_goes_on(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    settings = FakeSettings()
    seen: list[str] = []

    def route(event: Mapping[str, Any]) -> None:
        name = event["object"]["metadata"]["name"]
        if name == "bad":
            raise ValueError("no good")
        seen.append(name)

    async def listener(plural: str, bodies: list[Mapping[str, Any]]) -> None:
        return None

    watch_guard.attach(settings, listener, routes={"resourcebindings": route})
    monkeypatch.setitem(watch_guard._wrapped, "continuous_watch", stream_of(listed("bad"), listed("good")))
    events = [event async for event in watch_guard.guarded_continuous_watch(
        settings=settings, resource="resourcebindings", namespace=None, operator_pause_waiter=None)]
    assert events == []
    assert seen == ["good"]
    assert "handling a listed event of resourcebindings bad failed" in caplog.text


async def test_resources_without_route_still_go_to_kopf(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = FakeSettings()

    async def listener(plural: str, bodies: list[Mapping[str, Any]]) -> None:
        return None

    watch_guard.attach(settings, listener, routes={"resourcebindings": lambda event: None})
    modified = {"type": "MODIFIED", "object": {"metadata": {"name": "a"}}}
    assert await consume(settings, monkeypatch, stream_of(modified)) == [modified]  # resource "clusters"


async def test_kopfs_path_gets_kopfs_stream_as_is(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    unattached = object()
    failure = watching.WatchingError("Error in the watch-stream: {'code': 500}")
    with pytest.raises(watching.WatchingError):
        await consume(unattached, monkeypatch, stream_of(listed("a"), then=failure))

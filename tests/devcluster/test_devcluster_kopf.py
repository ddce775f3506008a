"""The real Kopf operator machinery against devcluster: discovery, list+watch, an index, watch resume.

Kopf runs `kopf.operator()` in its own thread and loop (asyncio flags), talking HTTP to the emulator in the
test's loop: in the same loop, Kopf's end-of-run sweep would cancel the test's own tasks.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import kopf
import pytest

from binding_scheduler.devcluster import DevCluster
from tests.devcluster.helpers import cluster_path, rb_body, rb_path


@dataclass
class Seen:
    """What the handlers saw (written from Kopf's thread, polled from the test's loop)."""

    loop: asyncio.AbstractEventLoop
    events: list[tuple[str | None, str, str]] = field(default_factory=list)
    index: dict[str, list[str]] | None = None
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    def record(self, event: tuple[str | None, str, str]) -> None:
        self.events.append(event)
        self.loop.call_soon_threadsafe(self.changed.set)

    async def until(self, check: Callable[[], bool], seconds: float = 10.0) -> None:
        async with asyncio.timeout(seconds):
            while not check():
                self.changed.clear()
                await self.changed.wait()


class Operator:
    """`kopf.operator()` with ready/stop flags, in a thread with its own event loop."""

    def __init__(self, registry: kopf.OperatorRegistry, seen: Seen) -> None:
        self.seen = seen
        self.ready = threading.Event()
        self._loop = asyncio.new_event_loop()
        self._stop = asyncio.Event()
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(registry,), name="kopf", daemon=True)

    def _run(self, registry: kopf.OperatorRegistry) -> None:
        async def main() -> None:
            ready = asyncio.Event()
            waiter = asyncio.create_task(ready.wait())
            waiter.add_done_callback(lambda _: self.ready.set())
            await kopf.operator(registry=registry, settings=_settings(), clusterwide=True, standalone=True,
                                ready_flag=ready, stop_flag=self._stop)
        try:
            self._loop.run_until_complete(main())
        except BaseException as exc:
            self.error = exc
        finally:
            self._loop.close()

    async def start(self) -> None:
        self._thread.start()
        assert await asyncio.to_thread(self.ready.wait, 10)

    async def stop(self) -> None:
        self._loop.call_soon_threadsafe(self._stop.set)
        await asyncio.to_thread(self._thread.join, 10)
        assert not self._thread.is_alive()
        assert self.error is None


def _registry(api: DevCluster, seen: Seen) -> kopf.OperatorRegistry:
    registry = kopf.OperatorRegistry()

    @kopf.on.login(registry=registry)
    def login(**_: Any) -> kopf.ConnectionInfo:
        return kopf.ConnectionInfo(server=api.url, insecure=True)

    @kopf.index("cluster.karmada.io", "v1alpha1", "clusters", id="clusters_by_region", registry=registry)
    async def clusters_by_region(name: str, spec: kopf.Spec, **_: Any) -> dict[str, str]:
        return {str(spec.get("region", "")): name}

    @kopf.on.event("work.karmada.io", "v1alpha2", "resourcebindings", registry=registry)
    async def binding_event(event: kopf.RawEvent, name: str, clusters_by_region: kopf.Index[str, str],
                            **_: Any) -> None:
        seen.index = {key: list(values) for key, values in clusters_by_region.items()}
        seen.record((event["type"], "rb", name))

    @kopf.on.event("cluster.karmada.io", "v1alpha1", "clusters", registry=registry)
    async def cluster_event(event: kopf.RawEvent, name: str, **_: Any) -> None:
        seen.record((event["type"], "cluster", name))

    return registry


def _settings() -> kopf.OperatorSettings:
    settings = kopf.OperatorSettings()
    settings.posting.enabled = False
    settings.posting.level = logging.CRITICAL  # kopf.warn() ignores posting.enabled
    settings.peering.standalone = True
    settings.queueing.exit_timeout = 0
    settings.watching.reconnect_backoff = 0.05
    settings.networking.request_timeout = 10
    return settings


@pytest.fixture
async def operator(api: DevCluster) -> AsyncIterator[Operator]:
    seen = Seen(asyncio.get_running_loop())
    running = Operator(_registry(api, seen), seen)
    await running.start()
    yield running
    await running.stop()


async def _create_before(api: DevCluster) -> None:
    await api.client.create(cluster_path(), {"metadata": {"name": "m1"},
                                             "spec": {"syncMode": "Push", "region": "eu"}})
    await api.client.create(rb_path(), rb_body("old"))


@pytest.fixture
async def prepared(api: DevCluster) -> DevCluster:
    await _create_before(api)
    return api


async def test_kopf_lists_existing_objects_and_watches_new_ones(prepared: DevCluster, operator: Operator) -> None:
    api, seen = prepared, operator.seen
    await seen.until(lambda: (None, "rb", "old") in seen.events and (None, "cluster", "m1") in seen.events)
    await api.client.create(rb_path(), rb_body("new"))
    await api.client.patch(rb_path("new"), {"spec": {"replicas": 3}})
    await api.client.delete(rb_path("new"))
    await seen.until(lambda: ("DELETED", "rb", "new") in seen.events)
    rb_events = [e for e in seen.events if e[1] == "rb"]
    assert rb_events == [(None, "rb", "old"), ("ADDED", "rb", "new"), ("MODIFIED", "rb", "new"),
                         ("DELETED", "rb", "new")]
    discovery = [e.path for e in api.journal if e.path.startswith(("/api", "/apis")) and e.method == "GET"
                 and not e.path.endswith(("resourcebindings", "clusters", "customresourcedefinitions"))]
    assert "/apis/work.karmada.io/v1alpha2" in discovery
    assert [(e.method, e.path) for e in api.journal.writes()] == [  # only the test's writes: Kopf wrote nothing
        ("POST", cluster_path()), ("POST", rb_path()), ("POST", rb_path()),
        ("PATCH", rb_path("new")), ("DELETE", rb_path("new"))]


async def test_kopf_index_is_filled_from_clusters(prepared: DevCluster, operator: Operator) -> None:
    api, seen = prepared, operator.seen
    await seen.until(lambda: (None, "cluster", "m1") in seen.events)
    await api.client.create(rb_path(), rb_body("probe"))
    await seen.until(lambda: ("ADDED", "rb", "probe") in seen.events)
    assert seen.index == {"eu": ["m1"]}


async def test_kopf_resumes_dropped_watch_without_replaying_old_objects(
    prepared: DevCluster, operator: Operator
) -> None:
    api, seen = prepared, operator.seen
    await seen.until(lambda: (None, "rb", "old") in seen.events)
    await api.client.create(rb_path(), rb_body("before-drop"))
    await seen.until(lambda: ("ADDED", "rb", "before-drop") in seen.events)
    watches_before = len(api.journal.filter("GET", r"/resourcebindings$", watch=True))
    api.faults.add(method="GET", path=r"/resourcebindings$", end_watch=True, times=1)
    await api.journal.wait_for(
        lambda e: e.is_watch and e.path.endswith("/resourcebindings")
        and len(api.journal.filter("GET", r"/resourcebindings$", watch=True)) > watches_before)
    await api.client.create(rb_path(), rb_body("after-drop"))
    await seen.until(lambda: ("ADDED", "rb", "after-drop") in seen.events)
    resumed = api.journal.filter("GET", r"/resourcebindings$", watch=True)[-1]
    assert resumed.query["resourceVersion"] != ""
    assert [e for e in seen.events if e[1] == "rb"] == [
        (None, "rb", "old"), ("ADDED", "rb", "before-drop"), ("ADDED", "rb", "after-drop")]

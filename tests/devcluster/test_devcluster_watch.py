"""Watch: from a resourceVersion, event types, bookmarks, 410 Gone, timeoutSeconds, selectors."""

from __future__ import annotations

import asyncio
from typing import Any

from binding_scheduler.devcluster import DevClient, DevCluster
from tests.devcluster.helpers import rb_body, rb_path, status_of


def _summary(events: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(e["type"], e["object"]["metadata"].get("name", "")) for e in events]


async def test_watch_without_version_starts_with_existing_objects(
    api: DevCluster, rb1: dict[str, Any]
) -> None:
    async with api.client.watch(rb_path(), timeoutSeconds="0") as stream:
        assert stream.status == 200
        assert await stream.collect() == [{"type": "ADDED", "object": rb1}]


async def test_watch_from_version_sends_only_later_changes_in_order(api: DevCluster, rb1: dict[str, Any]) -> None:
    since = rb1["metadata"]["resourceVersion"]
    await api.client.patch(rb_path("rb1"), {"spec": {"replicas": 2}})
    await api.client.create(rb_path(), rb_body("rb2"))
    await api.client.delete(rb_path("rb1"))
    async with api.client.watch(rb_path(), resourceVersion=since, timeoutSeconds="0") as stream:
        events = await stream.collect()
    assert _summary(events) == [("MODIFIED", "rb1"), ("ADDED", "rb2"), ("DELETED", "rb1")]
    versions = [int(e["object"]["metadata"]["resourceVersion"]) for e in events]
    assert versions == sorted(versions)
    assert versions[0] > int(since)


async def test_live_events_arrive_on_open_watch(api: DevCluster) -> None:
    async with api.client.watch(rb_path(), resourceVersion=str(api.store.resource_version)) as stream:
        _, created = await api.client.create(rb_path(), rb_body("rb1"))
        _, patched = await api.client.patch(rb_path("rb1"), {"spec": {"replicas": 5}})
        await api.client.delete(rb_path("rb1"))
        assert await stream.next() == {"type": "ADDED", "object": created}
        assert await stream.next() == {"type": "MODIFIED", "object": patched}
        deleted = await stream.next()
    assert deleted is not None and deleted["type"] == "DELETED"
    assert deleted["object"]["metadata"]["uid"] == created["metadata"]["uid"]
    assert int(deleted["object"]["metadata"]["resourceVersion"]) == int(patched["metadata"]["resourceVersion"]) + 1


async def test_delete_with_finalizers_is_modified_then_deleted(api: DevCluster) -> None:
    body = rb_body("rb1")
    body["metadata"]["finalizers"] = ["a/one"]
    await api.client.create(rb_path(), body)
    async with api.client.watch(rb_path(), resourceVersion=str(api.store.resource_version)) as stream:
        await api.client.delete(rb_path("rb1"))
        await api.client.patch(rb_path("rb1"), {"metadata": {"finalizers": None}})
        first, second = await stream.next(), await stream.next()
    assert first is not None and second is not None
    assert first["type"] == "MODIFIED" and first["object"]["metadata"]["deletionTimestamp"]
    # as kube-apiserver: the DELETED event shows the last stored object, finalizer included
    assert second["type"] == "DELETED" and second["object"]["metadata"]["finalizers"] == ["a/one"]


async def test_watch_of_one_namespace_ignores_others(api: DevCluster) -> None:
    await api.client.create("/api/v1/namespaces", {"metadata": {"name": "other"}})
    async with api.client.watch(rb_path(namespace="other"), resourceVersion=str(api.store.resource_version),
                                timeoutSeconds="1") as stream:
        await api.client.create(rb_path(), rb_body("here"))
        await api.client.create(rb_path(namespace="other"), rb_body("there"))
        assert _summary(await stream.collect()) == [("ADDED", "there")]


async def test_object_leaving_label_selector_is_deleted_for_watcher(api: DevCluster) -> None:
    body = rb_body("rb1")
    body["metadata"]["labels"] = {"mine": "yes"}
    await api.client.create(rb_path(), body)
    since = str(api.store.resource_version)
    await api.client.patch(rb_path("rb1"), {"metadata": {"labels": {"mine": "no"}}})
    await api.client.patch(rb_path("rb1"), {"metadata": {"labels": {"mine": "yes"}}})
    await api.client.create(rb_path(), rb_body("unlabelled"))
    async with api.client.watch(rb_path(), resourceVersion=since, labelSelector="mine=yes",
                                timeoutSeconds="0") as stream:
        assert _summary(await stream.collect()) == [("DELETED", "rb1"), ("ADDED", "rb1")]


async def test_watch_by_field_selector_on_name(api: DevCluster) -> None:
    since = str(api.store.resource_version)
    await api.client.create(rb_path(), rb_body("a"))
    await api.client.create(rb_path(), rb_body("b"))
    async with api.client.watch(rb_path(), resourceVersion=since, fieldSelector="metadata.name=b",
                                timeoutSeconds="0") as stream:
        assert _summary(await stream.collect()) == [("ADDED", "b")]


async def test_bookmarks_only_when_allowed() -> None:
    async with DevCluster(bookmark_interval=0.05) as api:
        since = str(api.store.resource_version)
        async with api.client.watch(rb_path(), resourceVersion=since, timeoutSeconds="1") as stream:
            assert await stream.collect() == []


async def test_bookmark_two_seconds_before_timeout(api: DevCluster) -> None:
    since = str(api.store.resource_version)
    async with api.client.watch(rb_path(), resourceVersion=since, timeoutSeconds="3",
                                allowWatchBookmarks="true") as stream:
        await api.client.create("/api/v1/namespaces", {"metadata": {"name": "elsewhere"}})
        started = asyncio.get_running_loop().time()
        event = await stream.next()
        arrived = asyncio.get_running_loop().time() - started
        assert await stream.next() is None
    assert event == {"type": "BOOKMARK", "object": {
        "kind": "ResourceBinding", "apiVersion": "work.karmada.io/v1alpha2",
        "metadata": {"resourceVersion": str(api.store.resource_version)}}}
    assert 0.5 < arrived < 2.0


async def test_no_bookmark_before_timeout_when_nothing_changed(api: DevCluster) -> None:
    since = str(api.store.resource_version)
    async with api.client.watch(rb_path(), resourceVersion=since, timeoutSeconds="3",
                                allowWatchBookmarks="true") as stream:
        assert await stream.collect(seconds=5) == []


async def test_bookmarks_arrive_periodically_on_idle_watch() -> None:
    async with DevCluster(bookmark_interval=0.05) as api:
        since = str(api.store.resource_version)
        async with api.client.watch(rb_path(), resourceVersion=since, allowWatchBookmarks="true") as stream:
            event = await stream.next()
    assert event == {"type": "BOOKMARK", "object": {
        "kind": "ResourceBinding", "apiVersion": "work.karmada.io/v1alpha2",
        "metadata": {"resourceVersion": since}}}


async def test_send_initial_events_ends_with_annotated_bookmark(api: DevCluster, rb1: dict[str, Any]) -> None:
    async with api.client.watch(rb_path(), sendInitialEvents="true", resourceVersionMatch="NotOlderThan",
                                allowWatchBookmarks="true", timeoutSeconds="0") as stream:
        events = await stream.collect()
    assert events[0] == {"type": "ADDED", "object": rb1}
    assert events[1]["type"] == "BOOKMARK"
    assert events[1]["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}


async def test_watch_from_version_older_than_history_is_410_expired() -> None:
    async with DevCluster(history=3) as api:
        await api.client.create(rb_path(), rb_body("rb1"))
        old = api.store.resource_version
        for replicas in range(2, 6):
            await api.client.patch(rb_path("rb1"), {"spec": {"replicas": replicas}})
        async with api.client.watch(rb_path(), resourceVersion=str(old)) as stream:
            assert stream.status == 200
            events = await stream.collect()
    assert events == [{"type": "ERROR", "object": status_of(
        410, "Expired", f"too old resource version: {old} ({old + 2})")}]


async def test_watch_from_before_type_was_served_is_410_expired(api: DevCluster) -> None:
    origin = int(api.store.get("crd", "resourcebindings.work.karmada.io")["metadata"]["resourceVersion"])
    async with api.client.watch(rb_path(), resourceVersion=str(origin - 1)) as stream:
        events = await stream.collect()
    assert events == [{"type": "ERROR", "object": status_of(
        410, "Expired", f"too old resource version: {origin - 1} ({origin + 1})")}]
    async with api.client.watch(rb_path(), resourceVersion=str(origin), timeoutSeconds="0") as stream:
        assert await stream.collect() == []


async def test_watch_from_oldest_retained_version_still_works() -> None:
    async with DevCluster(history=3) as api:
        await api.client.create(rb_path(), rb_body("rb1"))
        for replicas in range(2, 6):
            await api.client.patch(rb_path("rb1"), {"spec": {"replicas": replicas}})
        since = api.store.oldest_watchable_rv
        async with api.client.watch(rb_path(), resourceVersion=str(since), timeoutSeconds="0") as stream:
            events = await stream.collect()
    assert [e["object"]["spec"]["replicas"] for e in events] == [3, 4, 5]


async def test_timeout_seconds_ends_stream(api: DevCluster) -> None:
    since = str(api.store.resource_version)
    async with api.client.watch(rb_path(), resourceVersion=since, timeoutSeconds="1") as stream:
        assert await stream.collect(seconds=5) == []
    entry = api.journal.filter("GET", r"/resourcebindings$", watch=True)[0]
    assert entry.status == 200
    assert entry.finished is not None


async def test_stopping_server_ends_open_watches() -> None:
    api = await DevCluster().start()
    own = DevClient(api.url)
    try:
        async with own.watch(rb_path(), resourceVersion=str(api.store.resource_version)) as stream:
            await api.stop()
            assert await stream.next() is None
    finally:
        await own.close()

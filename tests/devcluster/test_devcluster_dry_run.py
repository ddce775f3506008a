"""Dry runs (`?dryRun=All`) answer like the real write and change nothing: no object, no version, no event."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from binding_scheduler.devcluster import DevCluster
from tests.devcluster.helpers import kubectl_on_path, rb_body, rb_path


async def test_dry_runs_of_every_verb_store_nothing_and_send_no_event(api: DevCluster, rb1: dict[str, Any]) -> None:
    since = api.store.resource_version
    held = rb_body("held")
    held["metadata"]["finalizers"] = ["example.com/hold"]
    assert (await api.client.create(rb_path(), held))[0] == 201
    before = api.store.resource_version
    async with api.client.watch(rb_path(), resourceVersion=str(before), timeoutSeconds="1") as stream:
        replies = [
            await api.client.create(rb_path() + "?dryRun=All", rb_body("new")),
            await api.client.patch(rb_path("rb1") + "?dryRun=All", {"spec": {"replicas": 5}}),
            await api.client.patch(rb_path("rb1", sub="status") + "?dryRun=All", {"status": {
                "schedulerObservedGeneration": 1}}),
            await api.client.put(rb_path("rb1") + "?dryRun=All", {**rb1, "spec": {**rb1["spec"], "replicas": 6}}),
            await api.client.delete(rb_path("rb1") + "?dryRun=All"),
            await api.client.delete(rb_path("held") + "?dryRun=All"),
            await api.client.delete(rb_path() + "?dryRun=All"),
            await api.client.delete("/api/v1/namespaces/default?dryRun=All"),
        ]
        assert await stream.collect(seconds=5) == []
    assert [status for status, _ in replies] == [201, 200, 200, 200, 200, 200, 200, 200]
    assert api.store.resource_version == before > since
    assert api.store.get("rb", "rb1", "default") == rb1
    assert "deletionTimestamp" not in api.store.get("rb", "held", "default")["metadata"]
    assert api.store.get("namespaces", "default")["status"] == {"phase": "Active"}
    assert [w.method for w in api.journal.writes()].count("DELETE") == 4


@pytest.fixture
def threaded() -> Iterator[DevCluster]:
    with DevCluster.in_thread() as cluster:
        status = cluster.store.create("rb", rb_body("rb1", replicas=1), "default")
        assert status["metadata"]["name"] == "rb1"
        yield cluster


def test_kubectl_apply_with_server_dry_run_changes_nothing(threaded: DevCluster, tmp_path: Path) -> None:
    manifest = tmp_path / "rb1.json"
    manifest.write_text(json.dumps({**rb_body("rb1", replicas=9), "metadata": {"name": "rb1",
                                                                               "namespace": "default"}}))
    before = threaded.store.get("rb", "rb1", "default")
    done = kubectl_on_path(threaded, "apply", "--dry-run=server", "--validate=false", "-f", str(manifest), "-o", "json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["spec"]["replicas"] == 9
    assert threaded.store.get("rb", "rb1", "default") == before


def test_kubectl_patch_with_server_dry_run_changes_nothing(threaded: DevCluster) -> None:
    before = threaded.store.get("rb", "rb1", "default")
    done = kubectl_on_path(threaded, "patch", "rb", "rb1", "--type", "merge", "-p", '{"spec":{"replicas":7}}',
                    "--dry-run=server", "-o", "json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["spec"]["replicas"] == 7
    assert threaded.store.get("rb", "rb1", "default") == before

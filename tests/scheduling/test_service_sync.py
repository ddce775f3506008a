"""The service's first sync: every Cluster, then every binding, into the stores before any pass, and one log
line that says how many and how long (the first thing to read when a large fleet is slow to start)."""

from __future__ import annotations

import logging
import re

import pytest

from binding_scheduler.devcluster import DevCluster
from binding_scheduler.kube.connection import Connection
from binding_scheduler.model.config import SchedulerConfig
from binding_scheduler.scheduling.service import SchedulerService
from tests.builders import binding, cluster, placement


async def test_the_sync_lists_clusters_and_both_binding_kinds_across_pages_and_says_how_many(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("binding_scheduler.scheduling.service.LIST_PAGE", 2)
    async with DevCluster() as api:
        api.store.ensure_namespace("default")
        for name in ("m1", "m2", "m3"):
            api.store.create("clusters", cluster(name))
        for name in ("a", "b", "c"):
            api.store.create("resourcebindings", binding(name, replicas=1, placement=placement()))
        api.store.create("clusterresourcebindings", binding("role", cluster_scoped=True, placement=placement()))
        service = SchedulerService(Connection(server=api.url), SchedulerConfig())
        try:
            with caplog.at_level(logging.INFO, logger="binding_scheduler.scheduling.service"):
                await service.sync()
        finally:
            await service.client.close()
            await service.lease_client.close()

    assert sorted(service.context.bindings.keys()) == ["default/a", "default/b", "default/c", "role"]
    assert service.context.clusters.names() == ["m1", "m2", "m3"]
    (line,) = [m for m in caplog.messages if m.startswith("caches synced")]
    assert re.fullmatch(r"caches synced: 3 clusters, 4 bindings listed in \d+\.\d s", line)

"""The service's first sync: every Cluster, then every binding, into the stores before any pass, and one log
line that says how many and how long (the first thing to read when a large fleet is slow to start)."""

from __future__ import annotations

import logging
import re

import pytest

from binding_scheduler.devcluster import DevCluster
from binding_scheduler.kube.connection import Connection
from binding_scheduler.kube.errors import Forbidden
from binding_scheduler.model.config import MetricsConfig, SchedulerConfig
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


async def test_a_list_that_fails_for_a_while_is_tried_again_until_it_succeeds(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("binding_scheduler.scheduling.service.SYNC_RETRY_INITIAL", 0.01)
    async with DevCluster() as api:
        api.store.ensure_namespace("default")
        api.store.create("clusters", cluster("m1"))
        api.faults.add(method="GET", path=r"/clusters$", status=503, times=2)
        service = SchedulerService(Connection(server=api.url), SchedulerConfig())
        try:
            with caplog.at_level(logging.WARNING, logger="binding_scheduler.scheduling.service"):
                await service.sync()
        finally:
            await service.client.close()
            await service.lease_client.close()

    assert service.context.clusters.names() == ["m1"]
    retries = [m for m in caplog.messages if m.startswith("listing /apis/cluster.karmada.io/v1alpha1/clusters failed")]
    assert [m.rsplit(": again in ", 1)[1] for m in retries] == ["0.01s", "0.02s"]


async def test_a_list_refused_for_good_ends_the_sync_with_that_error() -> None:
    async with DevCluster() as api:
        api.faults.add(method="GET", path=r"/clusters$", status=403)
        service = SchedulerService(Connection(server=api.url), SchedulerConfig())
        try:
            with pytest.raises(Forbidden):
                await service.sync()
        finally:
            await service.client.close()
            await service.lease_client.close()


async def test_a_start_waits_for_the_lease_then_leads_with_its_keeper_and_fences_every_write_by_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    config = SchedulerConfig(metrics=MetricsConfig(port=0, health_port=0))
    async with DevCluster() as api:
        api.store.ensure_namespace("karmada-system")
        service = SchedulerService(Connection(server=api.url), config, identity="pod-a_1")
        standing_by: list[bool] = []
        assert service.lease is not None
        acquire = service.lease.acquire

        async def observed_acquire() -> None:
            standing_by.append(service.probe_ready)
            await acquire()

        service.lease.acquire = observed_acquire  # type: ignore[method-assign]
        with caplog.at_level(logging.INFO, logger="binding_scheduler.scheduling.service"):
            await service.start()
        try:
            keeper = service._keeper
            leading = (service.ready, service.probe_ready, service._standing_by)
            leader = service.metrics.registry.get_sample_value("binding_scheduler_leader")
            doubt = service.client.leadership_doubt
        finally:
            report = await service.shutdown()

    assert standing_by == [True]
    assert leading == (True, True, False)
    assert leader == 1
    assert keeper is not None and keeper.get_name() == "lease-keeper" and keeper.done()
    assert doubt == service.lease.doubt
    assert report.lease_released is True
    ours = [r.getMessage() for r in caplog.records if r.name == "binding_scheduler.scheduling.service"]
    assert ours[:2] == ["waiting for lease karmada-system/karmada-scheduler as pod-a_1",
                        "acquired lease karmada-system/karmada-scheduler"]

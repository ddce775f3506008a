"""The Lease is handed back only after every pass has ended: a successor that took it while a pass of ours still
wrote would decide beside it. Deterministic: a pass is held inside its commit (its spec write hangs on the server)
until the drain has begun; the release records what was still in flight when it was called."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping

from binding_scheduler.devcluster import DevCluster
from binding_scheduler.kube.connection import load_connection
from binding_scheduler.model.config import MetricsConfig, SchedulerConfig
from binding_scheduler.scheduling.lifecycle.service import SchedulerService
from binding_scheduler.scheduling.lifecycle.stop_report import DrainReport
from testsupport.operator.harness import binding_doc, cluster_doc


async def until(condition: Callable[[], bool]) -> None:
    for _ in range(2000):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the condition did not hold within 20 s")


async def test_lease_is_released_only_after_every_pass_has_ended() -> None:
    async with DevCluster() as api:
        api.store.ensure_namespace("karmada-system")
        api.store.create("clusters", cluster_doc("m1"))
        api.store.create("resourcebindings", binding_doc("web", replicas=2))
        held = api.faults.add(method="PATCH", path=r"/resourcebindings/web$", hang=True)
        service = SchedulerService(load_connection(str(api.kubeconfig_path)),
                                   SchedulerConfig(metrics=MetricsConfig(port=0, health_port=0)), identity="us")
        assert service.lease is not None
        in_flight_at_release: list[Mapping[str, object]] = []
        release, drain = service.lease.release, service.scheduler.drain
        drain_began = asyncio.Event()

        async def recording_release() -> bool:
            in_flight_at_release.append(dict(service.scheduler.in_flight))
            return await release()

        async def noted_drain(drain_timeout: float) -> DrainReport:
            drain_began.set()
            return await drain(drain_timeout)

        service.lease.release = recording_release  # type: ignore[method-assign]
        service.scheduler.drain = noted_drain  # type: ignore[method-assign]
        await service.start()
        await until(lambda: held.hits == 1)  # the pass is inside its commit, its spec write held
        shutdown = asyncio.ensure_future(service.shutdown())
        await drain_began.wait()  # a release before the drain has been recorded by now, with the pass in flight
        held.release()
        report = await shutdown

    assert in_flight_at_release == [{}]
    assert (report.drained, report.cut, report.lease_released) == (1, 0, True)

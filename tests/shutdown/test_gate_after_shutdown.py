"""After `shutdown()` the write gate itself is closed: a write attempted afterwards, through any client that
shares the service's gate, is refused before it leaves the process and never shows up in the API server's
journal. (The shutdown report's "write gate closed" is fixed text; these tests look at the gate.)"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from binding_scheduler.devcluster import DevCluster
from binding_scheduler.kube import ApiClient, WriteGateClosed, load_connection
from tests.shutdown.helpers import writes_after
from testsupport.operator.harness import OperatorThread, apply, binding_doc, cluster_doc, rb_path, scheduled, wait_until

CLEAR = {"metadata": {"resourceVersion": "1"}, "spec": {"clusters": None}}


def stopped_operator(api: DevCluster, config_file: Path) -> OperatorThread:
    apply(api, cluster_doc("m1"), binding_doc("web"))
    operator = OperatorThread(api, config_file).start()
    wait_until(lambda: scheduled(api, "web"), what="web to be scheduled")
    assert operator.stop() == 0
    return operator


def test_after_shutdown_service_gate_is_closed_for_shutdown(api: DevCluster, config_file: Path) -> None:
    service = stopped_operator(api, config_file).app.service
    assert service is not None
    assert (service.gate.is_open, service.gate.reason) == (False, "scheduler shut down")
    with pytest.raises(WriteGateClosed, match=r"write gate is closed \(scheduler shut down\)"):
        service.gate.check()


def test_write_after_shutdown_refused_by_gate(
    api: DevCluster, config_file: Path
) -> None:
    service = stopped_operator(api, config_file).app.service
    assert service is not None and service.finished_at is not None
    journal = len(api.journal)

    for client in (service.client, service.lease_client):
        with pytest.raises(WriteGateClosed, match=r"\(scheduler shut down\)"):
            asyncio.run(client.patch_merge(rb_path("web"), CLEAR))

    assert len(api.journal) == journal
    assert writes_after(api, service.finished_at) == []


def test_new_client_write_after_shutdown_never_lands(
    api: DevCluster, config_file: Path
) -> None:
    """A client made after the shutdown (its HTTP session is fresh, nothing else would stop it) shares the gate,
    so the gate alone refuses its write."""
    service = stopped_operator(api, config_file).app.service
    assert service is not None and service.finished_at is not None
    journal = len(api.journal)

    async def late_write() -> None:
        async with ApiClient(load_connection(str(api.kubeconfig_path)), service.gate) as late:
            await late.patch_merge(rb_path("web"), CLEAR)

    with pytest.raises(WriteGateClosed, match=r"\(scheduler shut down\)"):
        asyncio.run(late_write())

    assert len(api.journal) == journal
    assert writes_after(api, service.finished_at) == []
    body = scheduled(api, "web")
    assert body is not None and body["spec"]["clusters"] == [{"name": "m1", "replicas": 1}]

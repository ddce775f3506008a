"""A fresh emulator per test and our client pointed at it through its kubeconfig."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from binding_scheduler.devcluster import DevCluster
from binding_scheduler.kube import ApiClient, WriteGate, load_connection
from tests.kube.helpers import rb_body, rb_path


@pytest.fixture
async def api() -> AsyncIterator[DevCluster]:
    async with DevCluster() as cluster:
        yield cluster


@pytest.fixture
def gate() -> WriteGate:
    return WriteGate()


@pytest.fixture
async def client(api: DevCluster, gate: WriteGate) -> AsyncIterator[ApiClient]:
    async with ApiClient(load_connection(str(api.kubeconfig_path)), gate) as kube:
        yield kube


@pytest.fixture
async def rb1(api: DevCluster) -> dict[str, Any]:
    status, body = await api.client.create(rb_path(), rb_body("rb1", replicas=3))
    assert status == 201
    api.journal.clear()
    return dict(body)

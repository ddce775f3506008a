"""Fixtures for the devcluster conformance tests: a fresh emulator per test."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from binding_scheduler.devcluster import DevCluster
from tests.devcluster.helpers import rb_body, rb_path


@pytest.fixture
async def api() -> AsyncIterator[DevCluster]:
    async with DevCluster() as cluster:
        yield cluster


@pytest.fixture
async def rb1(api: DevCluster) -> dict[str, Any]:
    status, body = await api.client.create(rb_path(), rb_body("rb1", replicas=1))
    assert status == 201
    return dict(body)

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from binding_scheduler.devcluster import DevCluster
from testsupport.operator import harness
from testsupport.operator.harness import config_spec, namespaces, write_config

BOTH_WAYS = frozenset({
    "test_affinities", "test_bad_input", "test_cluster_events", "test_conflicts", "test_events", "test_first_schedule",
    "test_no_kopf_writes", "test_strategies", "test_triggers", "test_workload_affinity", "test_writes",
})
"""The behaviour tests run on both event paths: watch_guard's fast path and Kopf's own handlers."""


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if metafunc.module.__name__.rsplit(".", 1)[-1] in BOTH_WAYS:
        metafunc.parametrize("event_path", ["auto", "kopf"], indirect=True, ids=["fast-path", "kopf-path"])


@pytest.fixture(autouse=True)
def event_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The event path of the operators this test starts (the fast one where Kopf allows, unless parametrized)."""
    path = str(getattr(request, "param", "auto"))
    monkeypatch.setattr(harness, "EVENT_PATH", path)
    return path


@pytest.fixture
def api() -> Iterator[DevCluster]:
    with DevCluster.in_thread() as cluster:
        namespaces(cluster, "default", "karmada-system")
        yield cluster


@pytest.fixture
def config_file(tmp_path: Path) -> Path:
    return write_config(tmp_path / "config.yaml", config_spec())

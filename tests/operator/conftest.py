from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from binding_scheduler.devcluster import DevCluster
from testsupport.operator.harness import config_spec, namespaces, write_config


@pytest.fixture
def api() -> Iterator[DevCluster]:
    with DevCluster.in_thread() as cluster:
        namespaces(cluster, "default", "karmada-system")
        yield cluster


@pytest.fixture
def config_file(tmp_path: Path) -> Path:
    return write_config(tmp_path / "config.yaml", config_spec())

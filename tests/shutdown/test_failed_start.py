"""A start that fails (unreadable kubeconfig, an invalid config file, the first LIST refused) ends the process
with status 1 instead of Kopf retrying the startup every 60 s forever; a Lease already acquired is released on the
way out."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from binding_scheduler.devcluster import DevCluster
from testsupport.operator.harness import OperatorThread, get, running_operator, wait_until, write_config


@dataclass
class MissingKubeconfig:
    kubeconfig_path: Path


def test_unreadable_kubeconfig_exits_with_status_1(tmp_path: Path, config_file: Path) -> None:
    operator = OperatorThread(MissingKubeconfig(tmp_path / "missing"), config_file).start(wait_leading=False)
    wait_until(lambda: not operator.alive, timeout=60, what="the operator to give up")
    assert operator.exit_code == 1


def test_failed_first_list_exits_1(api: DevCluster, config_file: Path) -> None:
    api.faults.add(method="GET", path=r"/apis/cluster.karmada.io/v1alpha1/clusters$", status=403)
    operator = OperatorThread(api, config_file, identity="first").start(wait_leading=False)
    wait_until(lambda: not operator.alive, timeout=60, what="the operator to give up")
    assert operator.exit_code == 1
    lease = get(api, "leases", "karmada-scheduler", "karmada-system")
    assert lease is not None and lease["spec"]["holderIdentity"] == ""


def test_initial_list_answered_503_is_retried_and_start_goes_on(api: DevCluster, config_file: Path) -> None:
    refused = api.faults.add(method="GET", path=r"/apis/cluster.karmada.io/v1alpha1/clusters$", status=503, times=2)
    with running_operator(api, config_file) as operator:
        assert refused.hits == 2
        assert operator.alive and operator.exit_code is None


def test_invalid_config_file_stops_start(
    api: DevCluster, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    config = write_config(tmp_path / "bad.yaml", {"workers": 0, "estimater": {}})
    operator = OperatorThread(api, config).start(wait_leading=False)
    wait_until(lambda: not operator.alive, timeout=60, what="the operator to give up")
    assert operator.exit_code == 1
    said = [record.getMessage() for record in caplog.records if record.getMessage().startswith("cannot start")]
    assert said == [f"cannot start: {config}: SchedulerConfiguration test: spec.estimater: unknown field; "
                    f"{config}: SchedulerConfiguration test: spec.workers: 0 is less than 1"]

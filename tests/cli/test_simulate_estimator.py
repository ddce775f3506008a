"""`simulate --estimator CLUSTER=HOST:PORT`: accurate estimators answer over Karmada's gRPC service."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from binding_scheduler.cli.main import main
from binding_scheduler.estimation.stub import EstimatorStub
from tests.shutdown.helpers import stubs_in_thread
from testsupport.operator.harness import binding_doc, cluster_doc

AGGREGATED = {"replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"}}


@pytest.fixture
def inputs(tmp_path: Path) -> str:
    path = tmp_path / "fleet.yaml"
    path.write_text(
        yaml.safe_dump_all([cluster_doc("m1"), cluster_doc("m2"), binding_doc("web", replicas=3, placement=AGGREGATED)])
    )
    return str(path)


def simulate(capsys: pytest.CaptureFixture[str], *args: str) -> list[dict[str, object]]:
    assert main(["simulate", "-o", "json", *args]) == 0
    results: list[dict[str, object]] = json.loads(capsys.readouterr().out)["results"]
    return results


def test_without_estimators_general_estimate_decides(inputs: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert simulate(capsys, "-f", inputs)[0]["clusters"] == [{"name": "m1", "replicas": 3}]


def test_accurate_estimator_answer_lowers_clusters_capacity(
    inputs: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with stubs_in_thread(EstimatorStub("m1", replicas=1)) as (stub,):
        results = simulate(capsys, "-f", inputs, "--estimator", f"m1={stub.address}")
        assert [call.outcome for call in stub.calls] == ["answered"]
    assert results[0]["clusters"] == [{"name": "m2", "replicas": 3}]


def test_hanging_estimator_falls_back(
    inputs: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with stubs_in_thread(EstimatorStub("m1", replicas=1, mode="hang")) as (stub,):
        results = simulate(capsys, "-f", inputs, "--estimator", f"m1={stub.address}", "--estimator-timeout", "200ms")
    assert results[0]["clusters"] == [{"name": "m1", "replicas": 3}]


def test_explain_shows_each_estimators_answer(inputs: str, capsys: pytest.CaptureFixture[str]) -> None:
    with stubs_in_thread(EstimatorStub("m1", replicas=1)) as (stub,):
        assert main(["explain", "-f", inputs, "--binding", "default/web", "--estimator", f"m1={stub.address}"]) == 0
    out = capsys.readouterr().out
    assert "room (replicas that fit): general 100, accurate 1 -> allocatable 1, available 1" in out


def test_malformed_estimator_flag_is_error(inputs: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", "-f", inputs, "--estimator", "m1-localhost"]) == 2
    assert "expected CLUSTER=HOST:PORT" in capsys.readouterr().err

"""`--feature-gates` on simulate and explain."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from binding_scheduler.cli.main import main
from tests.operator.harness import binding_doc, cluster_doc

ONE_CLUSTER = {
    "replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"},
    "spreadConstraints": [{"spreadByField": "cluster", "minGroups": 1, "maxGroups": 1}],
}


@pytest.fixture
def inputs(tmp_path: Path) -> str:
    job = binding_doc("job", replicas=4, placement=ONE_CLUSTER)
    job["spec"]["components"] = [
        {"name": "driver", "replicas": 1},
        {"name": "worker", "replicas": 3},
    ]
    path = tmp_path / "in.yaml"
    path.write_text(yaml.safe_dump_all([cluster_doc("m1", pods=3), cluster_doc("m2", pods=10), job]))
    return str(path)


def clusters(capsys: pytest.CaptureFixture[str], *args: str) -> object:
    assert main(["simulate", "-o", "json", *args]) == 0
    return json.loads(capsys.readouterr().out)["results"][0]["clusters"]


def test_multi_template_bindings_are_placed_whole_on_a_cluster_with_room_for_a_set(
    inputs: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert clusters(capsys, "-f", inputs, "--feature-gates", "MultiplePodTemplatesScheduling=true") == [{"name": "m2"}]


def test_an_unknown_gate_is_an_error(inputs: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", "-f", inputs, "--feature-gates", "WorkloadAffinity=true"]) == 2
    assert "expected one of MultiplePodTemplatesScheduling=true|false" in capsys.readouterr().err

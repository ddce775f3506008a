"""`binding-scheduler demo`: the product on its embedded default, end to end."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from binding_scheduler.cli.main import main

ROOT = Path(__file__).resolve().parents[2]


def test_the_demo_schedules_the_examples_and_writes_nothing_after_its_shutdown(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(["demo", "--workers", "2"])
    out = capsys.readouterr().out
    assert code == 0
    lines = [line.split() for line in out.splitlines()]
    assert ["shop/checkout-deployment", "True", "Success", "aws-use1-a:6,azure-weu:2,gcp-usw1:4"] in lines
    assert ["shop/legacy-api-deployment", "False", "NoClusterFit", "-"] in lines
    assert ["platform-viewer-clusterrole", "True", "Success",
            "aws-apse1,aws-use1-a,aws-use1-b,gcp-euw4,gcp-usw1,staging-use1"] in lines
    assert "lease released; write gate closed" in out
    assert out.rstrip().endswith("0 of them after the shutdown")


def test_the_demo_runs_on_a_folder_given_with_examples(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bindings = yaml.safe_load_all((ROOT / "examples" / "bindings.yaml").read_text())
    checkout = next(d for d in bindings if d and d["metadata"]["name"] == "checkout-deployment")
    shutil.copy(ROOT / "examples" / "clusters.yaml", tmp_path)
    (tmp_path / "mine.yaml").write_text(yaml.safe_dump(checkout))
    assert main(["demo", "--workers", "2", "--examples", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert f"loaded 9 clusters and 1 bindings from {tmp_path}" in out
    assert ["shop/checkout-deployment", "True", "Success", "aws-use1-a:6,azure-weu:2,gcp-usw1:4"] in [
        line.split() for line in out.splitlines()
    ]

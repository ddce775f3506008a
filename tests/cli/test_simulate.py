"""`binding-scheduler simulate`: the contract users and black-box checks rely on."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from binding_scheduler.cli.main import main
from testsupport.operator.harness import binding_doc, cluster_doc

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).with_name("golden") / "examples-simulate.json"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["simulate", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def write(tmp_path: Path, name: str, *documents: dict[str, Any]) -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump_all(documents))
    return str(path)


def test_examples_match_golden_results(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "-f", str(ROOT / "examples"), "-o", "json")
    assert code == 0
    assert json.loads(out) == json.loads(GOLDEN.read_text()), (
        "simulate's decisions for examples/ changed: review the diff of `.venv/bin/python -m scripts.regen_golden`, "
        "which rewrites the golden file, and check it against Karmada with `pytest tests/cli/test_golden_oracle.py`"
    )


def test_static_weights_divide_twelve(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    weights = [
        {"targetCluster": {"clusterNames": ["m1"]}, "weight": 3},
        {"targetCluster": {"clusterNames": ["m2"]}, "weight": 2},
        {"targetCluster": {"clusterNames": ["m3"]}, "weight": 1},
    ]
    placement = {
        "replicaScheduling": {
            "replicaSchedulingType": "Divided",
            "replicaDivisionPreference": "Weighted",
            "weightPreference": {"staticWeightList": weights},
        }
    }
    fleet = (cluster_doc(n, pods=100) for n in ("m1", "m2", "m3"))
    files = write(tmp_path, "in.yaml", *fleet, binding_doc("web", replicas=12, placement=placement))
    code, out, _ = run(capsys, "-f", files, "-o", "json")
    assert code == 0
    assert json.loads(out) == {
        "results": [
            {
                "kind": "ResourceBinding",
                "namespace": "default",
                "name": "web",
                "scheduled": True,
                "reason": "Success",
                "message": "Binding has been scheduled successfully.",
                "clusters": [
                    {"name": "m1", "replicas": 6},
                    {"name": "m2", "replicas": 4},
                    {"name": "m3", "replicas": 2},
                ],
            }
        ]
    }


def test_aggregated_first_schedule_fills_roomiest_clusters(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    placement = {"replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"}}
    files = write(
        tmp_path, "in.yaml", cluster_doc("m1", pods=6), cluster_doc("m2", pods=8), cluster_doc("m3", pods=10),
        binding_doc("web", replicas=12, placement=placement),
    )
    code, out, _ = run(capsys, "-f", files, "-o", "json")
    assert code == 0
    assert json.loads(out)["results"][0]["clusters"] == [{"name": "m2", "replicas": 5}, {"name": "m3", "replicas": 7}]


def test_fit_error_clears_clusters_and_reports_every_reason(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    no_api = cluster_doc("m3", pods=10)
    no_api["status"]["apiEnablements"] = []
    placement = {"clusterAffinity": {"clusterNames": ["m3"]}}
    files = write(
        tmp_path,
        "in.yaml",
        cluster_doc("m1", pods=10),
        cluster_doc("m2", pods=10),
        no_api,
        binding_doc("web", replicas=2, placement=placement, clusters=[{"name": "m1", "replicas": 2}]),
    )
    code, out, _ = run(capsys, "-f", files, "-o", "json")
    assert code == 0
    result = json.loads(out)["results"][0]
    assert result["scheduled"] is False
    assert result["reason"] == "NoClusterFit"
    assert result["clusters"] == []
    assert result["message"] == (
        "0/3 clusters are available: 1 cluster(s) did not have the API resource, "
        "2 cluster(s) did not match the placement cluster affinity constraint."
    )


def test_unsupported_spread_keeps_clusters(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    placement = {
        "spreadConstraints": [{"spreadByLabel": "rack", "maxGroups": 2}],
        "replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"},
    }
    previous = [{"name": "m1", "replicas": 2}]
    web = binding_doc("web", replicas=2, placement=placement, clusters=previous)
    files = write(tmp_path, "in.yaml", cluster_doc("m1", pods=10), web)
    code, out, _ = run(capsys, "-f", files, "-o", "json")
    assert code == 0
    result = json.loads(out)["results"][0]
    assert (result["scheduled"], result["reason"]) == (False, "SchedulerError")
    assert result["message"] == "failed to select clusters: just support cluster and region spread constraint"
    assert result["clusters"] == [{"name": "m1", "replicas": 2}]


def test_results_come_in_input_order_across_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    duplicated = {"replicaScheduling": {"replicaSchedulingType": "Duplicated"}}
    first = write(tmp_path, "a.yaml", binding_doc("zeta", replicas=1, placement=duplicated), cluster_doc("m1", pods=10))
    second = write(tmp_path, "b.yaml", binding_doc("alpha", replicas=1, placement=duplicated))
    code, out, _ = run(capsys, "-f", first, "-f", second, "-o", "json")
    assert code == 0
    assert [r["name"] for r in json.loads(out)["results"]] == ["zeta", "alpha"]


def test_json_documents_and_lists_are_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "fleet.json"
    items = [cluster_doc("m1", pods=10), binding_doc("web", replicas=1, placement={})]
    path.write_text(json.dumps({"kind": "List", "items": items}))
    code, out, _ = run(capsys, "-f", str(path), "-o", "json")
    assert code == 0
    assert json.loads(out)["results"][0]["clusters"] == [{"name": "m1", "replicas": 1}]


def test_strict_bad_input_exits_2_one_line_each(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = binding_doc("web", replicas=1, placement={"replicaScheduling": {"replicaSchedulingType": "Triplicated"}})
    negative = cluster_doc("m1", pods=10)
    negative["spec"]["syncMode"] = "Sideways"
    files = write(tmp_path, "bad.yaml", bad, negative)
    code, out, err = run(capsys, "-f", files, "-o", "json", "--strict")
    assert code == 2
    assert out == ""
    assert err.splitlines() == [
        f"{files}: Cluster m1: spec.syncMode: 'Sideways' is not one of Push, Pull",
        f"{files}: ResourceBinding default/web: invalid binding: "
        "spec.placement.replicaScheduling.replicaSchedulingType: "
        "'Triplicated' is not one of Duplicated, Divided",
    ]


def test_bad_cluster_is_bad_input_even_without_strict(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = binding_doc("web", replicas=1, placement={"replicaScheduling": {"replicaSchedulingType": "Triplicated"}})
    negative = cluster_doc("m1", pods=10)
    negative["spec"]["syncMode"] = "Sideways"
    files = write(tmp_path, "bad.yaml", bad, negative)
    code, out, err = run(capsys, "-f", files, "-o", "json")
    assert code == 2
    assert out == ""
    assert err.splitlines() == [f"{files}: Cluster m1: spec.syncMode: 'Sideways' is not one of Push, Pull"]


def test_yaml_output_carries_same_document(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "-f", str(ROOT / "examples"), "-o", "yaml")
    assert code == 0
    assert yaml.safe_load(out) == json.loads(GOLDEN.read_text())


def test_table_output_has_one_row_per_binding(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "-f", str(ROOT / "examples"), "-o", "table")
    lines = out.splitlines()
    assert code == 0
    assert lines[0].split()[:5] == ["KIND", "NAMESPACE", "NAME", "SCHEDULED", "REASON"]
    assert len(lines) == 1 + len(json.loads(GOLDEN.read_text())["results"])


def test_plugins_flag_disables_filter(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tainted = cluster_doc("m1", pods=10, taints=[{"key": "maintenance", "effect": "NoSchedule"}])
    files = write(tmp_path, "in.yaml", tainted, binding_doc("web", replicas=1, placement={}))
    _, with_all, _ = run(capsys, "-f", files, "-o", "json")
    _, without_taints, _ = run(capsys, "-f", files, "-o", "json", "--plugins", "*,-TaintToleration")
    assert json.loads(with_all)["results"][0]["reason"] == "NoClusterFit"
    assert json.loads(without_taints)["results"][0]["clusters"] == [{"name": "m1", "replicas": 1}]


def test_empty_propagation_lists_unused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    placement = {"replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"}}
    web = binding_doc("web", replicas=3, placement=placement)
    files = write(tmp_path, "in.yaml", cluster_doc("m1", pods=10), cluster_doc("m2", pods=4), web)
    code, out, _ = run(capsys, "-f", files, "-o", "json", "--enable-empty-workload-propagation")
    assert code == 0
    assert json.loads(out)["results"][0]["clusters"] == [{"name": "m1", "replicas": 3}, {"name": "m2"}]

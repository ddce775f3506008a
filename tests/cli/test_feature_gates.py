"""`--feature-gates` on simulate and explain."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from binding_scheduler.cli.main import main
from testsupport.builders import AGGREGATED, binding, cluster, names, placement
from testsupport.operator.harness import binding_doc, cluster_doc

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


def test_multi_template_placed_whole_where_set_fits(
    inputs: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert clusters(capsys, "-f", inputs, "--feature-gates", "MultiplePodTemplatesScheduling=true") == [
        {"name": "m2", "components": [{"name": "driver", "replicas": 1}, {"name": "worker", "replicas": 3}]}
    ]


@pytest.mark.parametrize("word", ["true", "True", "TRUE", "t", "T", "1"])
def test_gate_takes_every_word_go_reads_as_true_as_run_does(
    inputs: str, capsys: pytest.CaptureFixture[str], word: str
) -> None:
    assert clusters(capsys, "-f", inputs, "--feature-gates", f"MultiplePodTemplatesScheduling={word}") == [
        {"name": "m2", "components": [{"name": "driver", "replicas": 1}, {"name": "worker", "replicas": 3}]}
    ]


@pytest.mark.parametrize("word", ["yes", "tRuE", "on"])
def test_gate_refuses_what_go_does_not_read_as_bool(
    inputs: str, capsys: pytest.CaptureFixture[str], word: str
) -> None:
    assert main(["simulate", "-f", inputs, "--feature-gates", f"WorkloadAffinity={word}"]) == 2
    assert f"'WorkloadAffinity={word}': expected one of" in capsys.readouterr().err


def test_unknown_gate_is_error(inputs: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", "-f", inputs, "--feature-gates", "ResourceQuotaEstimate=true"]) == 2
    assert capsys.readouterr().err == (
        "error: --feature-gates 'ResourceQuotaEstimate=true': expected one of MultiplePodTemplatesScheduling=true|"
        "false, WorkloadAffinity=true|false, PriorityBasedScheduling=true|false, "
        "PriorityBasedPreemptiveScheduling=true|false\n"
    )


def prioritized(name: str, priority: int, policy: str, clusters: dict[str, int] | None = None) -> dict[str, Any]:
    body = binding(name, replicas=3, requests={"cpu": "10m"}, clusters=clusters,
                   placement=placement(affinity=names("m1"), scheduling=AGGREGATED))
    body["apiVersion"] = "work.karmada.io/v1alpha2"
    body["metadata"]["labels"] = {"propagationpolicy.karmada.io/permanent-id": name}
    body["spec"]["schedulePriority"] = {"priority": priority, "preemptionPolicy": policy}
    return body


@pytest.fixture
def full_cluster(tmp_path: Path) -> str:
    """m1's 30m of CPU are taken by `low` (priority 100); `high` (priority 1000) needs them."""
    m1 = cluster("m1", allocatable={"cpu": "30m", "pods": "110"}, allocated={"cpu": "30m", "pods": "3"})
    documents = [m1, prioritized("low", 100, "Never", {"m1": 3}), prioritized("high", 1000, "PreemptLowerPriority")]
    path = tmp_path / "full.yaml"
    path.write_text(yaml.safe_dump_all(documents))
    return str(path)


def result_of(capsys: pytest.CaptureFixture[str], name: str, *args: str) -> dict[str, Any]:
    assert main(["simulate", "-o", "json", *args]) == 0
    (found,) = [r for r in json.loads(capsys.readouterr().out)["results"] if r["name"] == name]
    return dict(found)


def test_simulate_names_would_be_victims(
    full_cluster: str, capsys: pytest.CaptureFixture[str]
) -> None:
    gates = "PriorityBasedScheduling=true,PriorityBasedPreemptiveScheduling=true"
    high = result_of(capsys, "high", "-f", full_cluster, "--feature-gates", gates)
    assert (high["scheduled"], high["reason"], high["message"], high["victims"]) == (
        False, "Preempting", 'preemption initiated on cluster "m1" for 1 victim(s)', ["default/low"])


def test_ungated_simulate_shows_unschedulable(
    full_cluster: str, capsys: pytest.CaptureFixture[str]
) -> None:
    high = result_of(capsys, "high", "-f", full_cluster, "--feature-gates", "PriorityBasedScheduling=true")
    assert (high["reason"], "victims" in high) == ("Unschedulable", False)


def test_table_says_whom_preemption_would_evict(full_cluster: str, capsys: pytest.CaptureFixture[str]) -> None:
    gates = "PriorityBasedScheduling=true,PriorityBasedPreemptiveScheduling=true"
    assert main(["simulate", "-f", full_cluster, "--feature-gates", gates]) == 0
    (row,) = [line for line in capsys.readouterr().out.splitlines() if "  high  " in line]
    assert row.endswith('preemption initiated on cluster "m1" for 1 victim(s) (evicting default/low)')


DUPLICATED = {"replicaScheduling": {"replicaSchedulingType": "Duplicated"}}


@pytest.fixture
def group_inputs(tmp_path: Path) -> str:
    """`db-deployment` placed on m2, `web-deployment` not placed yet; both in the affinity group app=shop."""
    db = binding_doc("db-deployment", replicas=1, placement=DUPLICATED, clusters=[{"name": "m2", "replicas": 1}])
    web = binding_doc("web-deployment", replicas=1, placement=DUPLICATED)
    for doc, resource in ((db, "db"), (web, "web")):
        doc["spec"]["resource"]["name"] = resource  # Karmada names a binding <resource>-<kind>
        doc["spec"]["workloadAffinityGroups"] = {"affinityGroup": "app=shop"}
    path = tmp_path / "groups.yaml"
    path.write_text(yaml.safe_dump_all([cluster_doc("m1"), cluster_doc("m2"), db, web]))
    return str(path)


def test_affinity_binding_joins_its_group(
    group_inputs: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["simulate", "-o", "json", "-f", group_inputs, "--feature-gates", "WorkloadAffinity=true"]) == 0
    results = json.loads(capsys.readouterr().out)["results"]
    assert (results[1]["name"], results[1]["clusters"]) == ("web-deployment", [{"name": "m2", "replicas": 1}])


def test_without_gate_workload_affinity_groups_are_ignored(
    group_inputs: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["simulate", "-o", "json", "-f", group_inputs]) == 0
    results = json.loads(capsys.readouterr().out)["results"]
    assert results[1]["clusters"] == [{"name": "m1", "replicas": 1}, {"name": "m2", "replicas": 1}]


def test_explain_names_workload_affinity_verdict_of_each_cluster(
    group_inputs: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["explain", "-o", "json", "-f", group_inputs, "--binding", "default/web-deployment",
                 "--feature-gates", "WorkloadAffinity=true"]) == 0
    (attempt,) = json.loads(capsys.readouterr().out)["attempts"]
    verdicts = {c["name"]: [f for f in c["filters"] if f["plugin"].startswith("Workload")] for c in attempt["clusters"]}
    assert verdicts == {
        "m1": [{"plugin": "WorkloadAffinity", "passed": False,
                "reason": "ResourceBinding with the same affinity group does not target this cluster"},
               {"plugin": "WorkloadAntiAffinity", "passed": True, "reason": None}],
        "m2": [{"plugin": "WorkloadAffinity", "passed": True, "reason": None},
               {"plugin": "WorkloadAntiAffinity", "passed": True, "reason": None}],
    }


def test_explain_says_why_binding_preempts_where_and_whom(
    full_cluster: str, capsys: pytest.CaptureFixture[str]
) -> None:
    gates = "PriorityBasedScheduling=true,PriorityBasedPreemptiveScheduling=true"
    assert main(["explain", "--binding", "default/high", "-f", full_cluster, "--feature-gates", gates]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "result: Scheduled=False reason=Preempting" in out
    cause = "failed to assign replicas: failed to scale up: Clusters available replicas 0 are not enough to schedule."
    start = out.index(f"  preempting on m1, because: {cause}")
    assert out[start + 1] == "    evicts default/low (priority 100, 3 replicas there)"


def test_explain_json_carries_preemption(full_cluster: str, capsys: pytest.CaptureFixture[str]) -> None:
    gates = "PriorityBasedScheduling=true,PriorityBasedPreemptiveScheduling=true"
    assert main(["explain", "--binding", "default/high", "-f", full_cluster, "--feature-gates", gates,
                 "-o", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["preemption"] == {
        "cluster": "m1",
        "cause": "failed to assign replicas: failed to scale up: Clusters available replicas 0 are not enough to "
                 "schedule.",
        "victims": [{"binding": "default/low", "priority": 100, "replicas": 3}]}

"""simulate and explain over what a user has at hand: a `kubectl get -o yaml` export with an invalid binding in
it, standard input, a SchedulerConfiguration, and the live plane itself (read-only); `--diff` says what a pass
now would change."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from binding_scheduler.cli.main import main
from binding_scheduler.devcluster import DevCluster
from testsupport.operator.harness import binding_doc, cluster_doc

ONE_CLUSTER = {"clusterAffinity": {"clusterNames": ["m1"]}}
TWO_CLUSTERS = {"clusterAffinity": {"clusterNames": ["m1", "m2"]},
                "replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted"}}
TRIPLICATED = {"replicaScheduling": {"replicaSchedulingType": "Triplicated"}}
INVALID = ("invalid binding: spec.placement.replicaScheduling.replicaSchedulingType: 'Triplicated' is not one of "
           "Duplicated, Divided")


def export(tmp_path: Path, *items: dict[str, Any]) -> str:
    """The objects as `kubectl get ... -o yaml` prints several: one `kind: List`."""
    path = tmp_path / "export.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": list(items)}))
    return str(path)


def results(capsys: pytest.CaptureFixture[str], *args: str, code: int = 0) -> list[dict[str, Any]]:
    assert main(["simulate", "-o", "json", *args]) == code
    out = capsys.readouterr().out
    return list(json.loads(out)["results"]) if out else []


def test_invalid_binding_errs_others_decided(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inputs = export(tmp_path, cluster_doc("m1"), binding_doc("a", placement=ONE_CLUSTER),
                    binding_doc("bad", placement=TRIPLICATED), binding_doc("b", placement=ONE_CLUSTER))
    a, bad, b = results(capsys, "-f", inputs)
    assert (a["scheduled"], b["scheduled"]) == (True, True)
    assert (bad["name"], bad["scheduled"], bad["reason"], bad["message"]) == ("bad", False, "SchedulerError", INVALID)


def test_with_strict_invalid_binding_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inputs = export(tmp_path, cluster_doc("m1"), binding_doc("bad", placement=TRIPLICATED))
    assert main(["simulate", "-f", inputs, "--strict"]) == 2
    out, err = capsys.readouterr()
    assert (out, err) == ("", f"{inputs}: ResourceBinding default/bad: {INVALID}\n")


def test_dash_reads_inputs_from_standard_input(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    text = yaml.safe_dump_all([cluster_doc("m1"), binding_doc("web", placement=ONE_CLUSTER)])
    monkeypatch.setattr(sys, "stdin", io.StringIO(text))
    (web,) = results(capsys, "-f", "-")
    assert (web["name"], web["clusters"]) == ("web", [{"name": "m1", "replicas": 1}])


def test_neither_files_nor_kubeconfig_is_bad_usage(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate"]) == 2
    assert capsys.readouterr().err == ("error: no inputs: give -f PATH (a file, a folder, or '-' for standard "
                                       "input) or --kubeconfig PATH (a live plane)\n")


def config(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "config.binding-scheduler.io/v1alpha1", "kind": "SchedulerConfiguration",
            "metadata": {"name": "binding-scheduler", "namespace": "karmada-system"}, "spec": spec}


def test_configuration_file_sets_options_decision_is_made_with(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inputs = export(tmp_path, cluster_doc("m1"), cluster_doc("m2"), binding_doc("web", placement=TWO_CLUSTERS))
    settings = tmp_path / "config.yaml"
    settings.write_text(yaml.safe_dump(config(enableEmptyWorkloadPropagation=True)))
    (plain,) = results(capsys, "-f", inputs)
    (configured,) = results(capsys, "-f", inputs, "--config-file", str(settings))
    assert plain["clusters"] == [{"name": "m1", "replicas": 1}]
    assert configured["clusters"] == [{"name": "m1", "replicas": 1}, {"name": "m2"}]


def test_plugins_flag_takes_precedence_over_configurations(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tainted = cluster_doc("m1")
    tainted["spec"]["taints"] = [{"key": "k", "value": "v", "effect": "NoSchedule"}]
    inputs = export(tmp_path, tainted, config(plugins=["*"]), binding_doc("web", placement=ONE_CLUSTER))
    (configured,) = results(capsys, "-f", inputs)
    (flagged,) = results(capsys, "-f", inputs, "--plugins", "*,-TaintToleration")
    assert (configured["scheduled"], flagged["scheduled"]) == (False, True)


def test_two_configurations_among_inputs_are_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inputs = export(tmp_path, cluster_doc("m1"), config(), config(workers=2), binding_doc("web"))
    assert main(["simulate", "-f", inputs]) == 2
    assert capsys.readouterr().err == (
        f"error: 2 SchedulerConfigurations in the inputs: {inputs} (binding-scheduler), {inputs} "
        "(binding-scheduler); name one with --config-file\n")


def test_invalid_config_names_each_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inputs = export(tmp_path, cluster_doc("m1"), config(workers=0, decisionProcesses=-1), binding_doc("web"))
    assert main(["simulate", "-f", inputs]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert [line.split(": ")[:3] for line in lines] == [
        [inputs, "SchedulerConfiguration binding-scheduler", "spec.workers"],
        [inputs, "SchedulerConfiguration binding-scheduler", "spec.decisionProcesses"],
    ]


def test_diff_prints_changes_per_binding(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    moved = binding_doc("moved", replicas=2, placement=TWO_CLUSTERS, clusters=[{"name": "m3", "replicas": 2}])
    kept = binding_doc("kept", placement=ONE_CLUSTER, clusters=[{"name": "m1", "replicas": 1}])
    nowhere = binding_doc("nowhere", placement={"clusterAffinity": {"clusterNames": ["gone"]}})
    inputs = export(tmp_path, cluster_doc("m1"), cluster_doc("m2"), moved, kept, nowhere)
    assert main(["simulate", "-f", inputs, "--diff"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "ResourceBinding default/moved:",
        "  + m1: 1",
        "  + m2: 1",
        "  - m3: 2",
        "ResourceBinding default/kept: no change",
        "ResourceBinding default/nowhere: no change (NoClusterFit: 0/2 clusters are available: 2 cluster(s) did not "
        "match the placement cluster affinity constraint.)",
    ]


def test_json_diff_lists_replicas_before_after(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    grown = binding_doc("grown", replicas=3, placement=ONE_CLUSTER, clusters=[{"name": "m1", "replicas": 1}])
    (result,) = results(capsys, "-f", export(tmp_path, cluster_doc("m1"), grown), "--diff")
    assert result["previous"] == [{"name": "m1", "replicas": 1}]
    assert result["changes"] == [{"cluster": "m1", "from": 1, "to": 3}]


@pytest.fixture
def plane(tmp_path: Path) -> Iterator[DevCluster]:
    """karmada-apiserver (emulated) holding two clusters and two bindings, as their controllers leave them."""
    with DevCluster.in_thread() as api:
        for name in ("m1", "m2"):
            body = cluster_doc(name)
            api.store.create("clusters", {k: v for k, v in body.items() if k != "status"})
            api.store.patch("clusters", name, {"status": body["status"]}, subresource="status")
        api.store.create("resourcebindings", binding_doc("web", replicas=2, placement=TWO_CLUSTERS))
        api.store.create("resourcebindings", binding_doc("theirs", placement=ONE_CLUSTER, scheduler_name="other"))
        yield api


WRITES = {"POST", "PUT", "PATCH", "DELETE"}


def test_simulate_reads_live_plane_and_writes_nothing(
    plane: DevCluster, capsys: pytest.CaptureFixture[str]
) -> None:
    found = results(capsys, "--kubeconfig", str(plane.kubeconfig_path))
    assert [(r["name"], r["scheduled"], r["reason"], r["clusters"]) for r in found] == [
        ("theirs", False, "Skipped", []),
        ("web", True, "Success", [{"name": "m1", "replicas": 1}, {"name": "m2", "replicas": 1}]),
    ]
    assert [e for e in plane.journal if e.method in WRITES] == []
    assert not any("leases" in e.path for e in plane.journal)


def test_explain_reads_one_binding_of_live_plane(plane: DevCluster, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "--kubeconfig", str(plane.kubeconfig_path), "--binding", "default/web"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "ResourceBinding default/web: 2 replicas, Divided/Weighted (static weights)"
    assert [e for e in plane.journal if e.method in WRITES] == []


def test_server_without_karmada_apis_is_status_1(tmp_path: Path) -> None:
    empty = tmp_path / "crds"
    empty.mkdir()
    with DevCluster.in_thread(crds_dir=empty) as api:
        result = subprocess.run(
            [sys.executable, "-m", "binding_scheduler.cli.main", "simulate", "--kubeconfig", str(api.kubeconfig_path)],
            capture_output=True, text=True, timeout=60, check=False,
        )
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == (f"error: {api.url} does not serve cluster.karmada.io/v1alpha1 clusters (is --kubeconfig "
                             "karmada-apiserver's? The host cluster's kubeconfig, or ~/.kube/config, is not)\n")

"""simulate and explain apply `run`'s binding event filter (Karmada's): a binding `run` would never take is
reported `skipped: <reason>`, and `--all` decides it anyway."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from binding_scheduler.cli.main import main
from testsupport.operator.harness import binding_doc, cluster_doc

ONE_CLUSTER = {"clusterAffinity": {"clusterNames": ["m1"]}}
NO_LABEL = ("skipped: it carries none of the labels propagationpolicy.karmada.io/permanent-id, "
            "clusterpropagationpolicy.karmada.io/permanent-id, binding.karmada.io/managed-by (Karmada's event "
            "filter: a binding made by Karmada's detector from a PropagationPolicy has one)")


def write(tmp_path: Path, *documents: dict[str, Any]) -> str:
    path = tmp_path / "inputs.yaml"
    path.write_text(yaml.safe_dump_all(documents))
    return str(path)


def results(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[dict[str, Any]], str]:
    code = main(["simulate", "-o", "json", *args])
    out, err = capsys.readouterr()
    return code, json.loads(out)["results"] if out else [], err


def test_unlabelled_binding_reported_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inputs = write(tmp_path, cluster_doc("m1"), binding_doc("web", placement=ONE_CLUSTER, labels={}))
    code, (web,), err = results(capsys, "-f", inputs)
    assert code == 0
    assert (web["scheduled"], web["reason"], web["clusters"], web["skipped"]) == (False, "Skipped", [], True)
    assert web["message"] == NO_LABEL
    assert err.splitlines()[-1] == "1 binding: 0 scheduled, 0 not, 1 skipped (--all decides them too)"


def test_all_decides_binding_run_would_skip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inputs = write(tmp_path, cluster_doc("m1"), binding_doc("web", placement=ONE_CLUSTER, labels={}))
    code, (web,), _ = results(capsys, "-f", inputs, "--all")
    assert (code, web["scheduled"], web["clusters"], "skipped" in web) == (0, True, [{"name": "m1",
                                                                                     "replicas": 1}], False)


def test_another_schedulers_binding_is_skipped_naming_both_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inputs = write(tmp_path, cluster_doc("m1"), binding_doc("web", placement=ONE_CLUSTER, scheduler_name="other"))
    _, (web,), _ = results(capsys, "-f", inputs)
    assert web["message"] == "skipped: spec.schedulerName is other, and this scheduler is default-scheduler"


def test_suspended_binding_is_skipped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body = binding_doc("web", placement=ONE_CLUSTER)
    body["spec"]["suspension"] = {"scheduling": True}
    _, (web,), _ = results(capsys, "-f", write(tmp_path, cluster_doc("m1"), body))
    assert web["message"] == "skipped: spec.suspension.scheduling is true"


def test_scheduler_name_picks_bindings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = {"apiVersion": "config.binding-scheduler.io/v1alpha1", "kind": "SchedulerConfiguration",
              "metadata": {"name": "other", "namespace": "karmada-system"}, "spec": {"schedulerName": "other"}}
    inputs = write(tmp_path, cluster_doc("m1"), config,
                   binding_doc("ours", placement=ONE_CLUSTER, scheduler_name="other"),
                   binding_doc("theirs", placement=ONE_CLUSTER))
    _, (ours, theirs), _ = results(capsys, "-f", inputs)
    assert (ours["scheduled"], theirs["message"]) == (
        True, "skipped: spec.schedulerName is default-scheduler, and this scheduler is other")


def test_table_shows_skipped_in_scheduled_column(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inputs = write(tmp_path, cluster_doc("m1"), binding_doc("web", placement=ONE_CLUSTER, labels={}))
    assert main(["simulate", "-f", inputs]) == 0
    row = capsys.readouterr().out.splitlines()[1].split()
    assert row[:6] == ["ResourceBinding", "default", "web", "skipped", "Skipped", "-"]


def test_explain_says_binding_is_skipped_and_why(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inputs = write(tmp_path, cluster_doc("m1"), binding_doc("web", placement=ONE_CLUSTER, scheduler_name="other"))
    assert main(["explain", "-f", inputs, "--binding", "default/web"]) == 0
    assert capsys.readouterr().out == (
        "ResourceBinding default/web: skipped: spec.schedulerName is other, and this scheduler is "
        "default-scheduler (--all explains the decision anyway)\n")


def test_explain_with_all_explains_skipped_binding(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inputs = write(tmp_path, cluster_doc("m1"), binding_doc("web", placement=ONE_CLUSTER, scheduler_name="other"))
    assert main(["explain", "-f", inputs, "--binding", "default/web", "--all"]) == 0
    assert "result: Scheduled=True reason=Success" in capsys.readouterr().out.splitlines()


def test_explain_json_says_skipped_as_simulate_does(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inputs = write(tmp_path, cluster_doc("m1"), binding_doc("web", placement=ONE_CLUSTER, scheduler_name="other"))
    assert main(["explain", "-f", inputs, "--binding", "default/web", "-o", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "kind": "ResourceBinding", "namespace": "default", "name": "web", "scheduled": False, "reason": "Skipped",
        "message": "skipped: spec.schedulerName is other, and this scheduler is default-scheduler", "skipped": True}

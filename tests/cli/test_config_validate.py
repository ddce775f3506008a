"""`binding-scheduler config validate -f FILE`: every error of every SchedulerConfiguration in the file, one line
each on stderr, exit 2; `FILE: SchedulerConfiguration NAME: valid` on stdout and exit 0 when all are valid. And
`run --config-file` reports every error too, before anything starts."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
import yaml

from binding_scheduler.algorithm.plugins import PluginError
from binding_scheduler.cli import config_validate
from binding_scheduler.cli.main import main
from binding_scheduler.model.config import API_VERSION, KIND

Outcome = tuple[int, list[str], list[str]]


def scheduler_configuration(name: str | None, spec: dict[str, Any] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"apiVersion": API_VERSION, "kind": KIND, "metadata": {"name": name} if name else {}}
    if spec is not None:
        body["spec"] = spec
    return body


CLUSTER = {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster", "metadata": {"name": "member1"}}
THREE_WRONG = {"workers": 0, "estimater": {}, "queue": {"maxBackoff": "soon"}}


def write(tmp_path: Path, *documents: Any, name: str = "config.yaml") -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump_all(documents), encoding="utf-8")
    return str(path)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> Outcome:
    try:
        code = main(list(argv))
    except SystemExit as stop:
        code = int(stop.code or 0)
    captured = capsys.readouterr()
    return code, captured.out.splitlines(), captured.err.splitlines()


def validate(capsys: pytest.CaptureFixture[str], *paths: str) -> Outcome:
    return run(capsys, "config", "validate", *(arg for path in paths for arg in ("-f", path)))


def test_valid_file_prints_one_valid_line_and_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, scheduler_configuration("prod", {"workers": 4}))
    assert validate(capsys, path) == (0, [f"{path}: SchedulerConfiguration prod: valid"], [])


def test_three_bad_fields_print_three_lines_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, scheduler_configuration("prod", THREE_WRONG))
    assert validate(capsys, path) == (2, [], [
        f"{path}: SchedulerConfiguration prod: spec.estimater: unknown field",
        f"{path}: SchedulerConfiguration prod: spec.workers: 0 is less than 1",
        f"{path}: SchedulerConfiguration prod: spec.queue.maxBackoff: 'soon' is not a duration (examples: 3s, "
        "500ms, 1m30s)",
    ])


def test_every_scheduler_configuration_of_file_is_checked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, scheduler_configuration("a", {"workers": 0}), scheduler_configuration("b"),
                 scheduler_configuration("c", {"kubeAPI": {"burst": 0}}))
    assert validate(capsys, path) == (2, [f"{path}: SchedulerConfiguration b: valid"], [
        f"{path}: SchedulerConfiguration a: spec.workers: 0 is less than 1",
        f"{path}: SchedulerConfiguration c: spec.kubeAPI.burst: 0 is less than 1",
    ])


def test_document_of_another_kind_is_skipped_with_line_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, CLUSTER, scheduler_configuration("prod"))
    assert validate(capsys, path) == (0, [f"{path}: SchedulerConfiguration prod: valid"],
                                      [f"{path}: Cluster member1: skipped, not a SchedulerConfiguration"])


def test_file_without_scheduler_configuration_is_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, CLUSTER)
    assert validate(capsys, path) == (2, [], [f"{path}: Cluster member1: skipped, not a SchedulerConfiguration",
                                              f"{path}: no SchedulerConfiguration found (1 document)"])


def test_misspelt_kind_of_our_api_group_is_error_not_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, {**scheduler_configuration("prod"), "kind": "SchedulerConfig"})
    assert validate(capsys, path) == (2, [], [f"{path}: SchedulerConfig prod: kind: 'SchedulerConfig' is not "
                                              "SchedulerConfiguration"])


def test_missing_file_is_one_line_and_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = str(tmp_path / "absent.yaml")
    assert validate(capsys, path) == (2, [], [f"{path}: No such file or directory"])


def test_file_that_is_not_yaml_is_one_line_and_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("spec: [unclosed\n", encoding="utf-8")
    code, out, err = validate(capsys, str(path))
    assert (code, out, len(err), err[0].startswith(f"{path}: not valid YAML or JSON: ")) == (2, [], 1, True)


def test_dash_reads_standard_input(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(yaml.safe_dump(scheduler_configuration("piped", {"workers": 0}))))
    assert validate(capsys, "-") == (2, [], ["<stdin>: SchedulerConfiguration piped: spec.workers: 0 is less than 1"])


def test_unnamed_object_is_named_by_place_in_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, CLUSTER, scheduler_configuration(None, {"workers": 0}))
    assert validate(capsys, path)[2][1] == f"{path}: SchedulerConfiguration #2: spec.workers: 0 is less than 1"


def test_document_that_is_no_object_is_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "just text")
    assert validate(capsys, path) == (2, [], [f"{path}: document 1: <root>: expected an object, got 'just text'"])


def test_each_file_given_is_checked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = write(tmp_path, scheduler_configuration("good"), name="good.yaml")
    bad = write(tmp_path, scheduler_configuration("bad", {"workers": 0}), name="bad.yaml")
    assert validate(capsys, bad, good) == (2, [f"{good}: SchedulerConfiguration good: valid"],
                                           [f"{bad}: SchedulerConfiguration bad: spec.workers: 0 is less than 1"])


def test_unknown_feature_gate_is_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, scheduler_configuration("prod", {"featureGates": {"Failover": True}}))
    assert validate(capsys, path) == (2, [], [f"{path}: SchedulerConfiguration prod: spec.featureGates.Failover: "
                                              "unknown field"])


def test_unknown_plugin_errs_at_spec_plugins(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, scheduler_configuration("prod", {"plugins": ["*", "-TaintTolerance"]}))
    code, out, err = validate(capsys, path)
    assert (code, out, [line.split(" (known:")[0] for line in err]) == (
        2, [], [f"{path}: SchedulerConfiguration prod: spec.plugins: names 'TaintTolerance', which is no plugin"])


def test_allowed_plugin_name_no_plugin_has_is_warning_as_in_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, scheduler_configuration("prod", {"plugins": ["*", "-TaintTolerance"],
                                                            "allowUnknownPlugins": True}))
    code, out, err = validate(capsys, path)
    assert (code, out, [line.split(" (known:")[0] for line in err]) == (
        0, [f"{path}: SchedulerConfiguration prod: valid"],
        [f"{path}: SchedulerConfiguration prod: warning: spec.plugins names 'TaintTolerance', which is no plugin: "
         "ignored"])


def test_plugins_that_cannot_be_loaded_are_error_at_spec_plugins(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise PluginError("plugins 'A', 'B' all implement select: enable at most one of them")

    monkeypatch.setattr(config_validate, "load_plugins", refuse)
    path = write(tmp_path, scheduler_configuration("prod", {"workers": 0}))
    assert validate(capsys, path) == (2, [], [
        f"{path}: SchedulerConfiguration prod: spec.workers: 0 is less than 1",
        f"{path}: SchedulerConfiguration prod: spec.plugins: plugins 'A', 'B' all implement select: enable at most "
        "one of them",
    ])


def test_run_reports_each_bad_config_field_and_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, scheduler_configuration("prod", THREE_WRONG))
    assert run(capsys, "run", "--config-file", path, "--leader-elect-renew-deadline=20s") == (2, [], [
        f"error: {path}: SchedulerConfiguration prod: spec.estimater: unknown field",
        f"error: {path}: SchedulerConfiguration prod: spec.workers: 0 is less than 1",
        f"error: {path}: SchedulerConfiguration prod: spec.queue.maxBackoff: 'soon' is not a duration (examples: "
        "3s, 500ms, 1m30s)",
        f"error: {path}: SchedulerConfiguration prod: --leader-elect-renew-deadline: '20s' must be less than "
        "leaseDuration (15s)",
    ])


BAD_WITH_A_PLUGIN = {"workers": 0, "plugins": ["*", "-TaintTolerance"]}


def test_unknown_plugin_is_listed_beside_other_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, scheduler_configuration("prod", BAD_WITH_A_PLUGIN))
    code, _, err = validate(capsys, path)
    assert (code, [line.split(": ")[2] for line in err]) == (2, ["spec.workers", "spec.plugins"])


def test_run_lists_unknown_plugin_with_others(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, scheduler_configuration("prod", BAD_WITH_A_PLUGIN))
    assert main(["run", f"--config-file={path}"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert [line.split(": ")[3] for line in err] == ["spec.workers", "spec.plugins"]

"""`--config-file`: one SchedulerConfiguration from a YAML or JSON file, every failure naming the file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from binding_scheduler.model.config import API_VERSION, DEFAULT_CONFIG, KIND
from binding_scheduler.operator.config_file import ConfigFileError, load_config_file

ROOT = Path(__file__).resolve().parents[2]
HEADER = f"apiVersion: {API_VERSION}\nkind: {KIND}\nmetadata:\n  name: c\n"


def write(tmp_path: Path, text: str, name: str = "config.yaml") -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def failure(path: str) -> ConfigFileError:
    with pytest.raises(ConfigFileError) as caught:
        load_config_file(path)
    return caught.value


def test_yaml_is_read(tmp_path: Path) -> None:
    path = write(tmp_path, HEADER + "spec:\n  workers: 4\n  queue:\n    maxBackoff: 30s\n")
    config = load_config_file(path)
    assert (config.workers, config.queue.max_backoff) == (4, 30.0)


def test_json_is_read(tmp_path: Path) -> None:
    body = {"apiVersion": API_VERSION, "kind": KIND, "spec": {"schedulerName": "mine"}}
    assert load_config_file(write(tmp_path, json.dumps(body), "config.json")).scheduler_name == "mine"


def test_no_spec_means_defaults(tmp_path: Path) -> None:
    assert load_config_file(write(tmp_path, HEADER)) == DEFAULT_CONFIG


def test_document_separator_and_comments_are_fine(tmp_path: Path) -> None:
    assert load_config_file(write(tmp_path, "# mine\n---\n" + HEADER + "spec: {workers: 2}\n---\n")).workers == 2


def test_example_file_loads() -> None:
    config = load_config_file(str(ROOT / "examples" / "scheduler-configuration.yaml"))
    assert dict(config.estimator.endpoints) == {"member1": "estimator-member1.example.com:10352",
                                                "member2": "[fd00::12]:10352"}


def test_invalid_spec_names_file_and_field(tmp_path: Path) -> None:
    path = write(tmp_path, HEADER + "spec:\n  estimater: {}\n")
    error = failure(path)
    assert (str(error), error.path, error.problem) == (
        f"{path}: SchedulerConfiguration c: spec.estimater: unknown field", path,
        "SchedulerConfiguration c: spec.estimater: unknown field")


def test_validation_error_is_cause(tmp_path: Path) -> None:
    error = failure(write(tmp_path, HEADER + "spec:\n  workers: 0\n"))
    assert str(error.__cause__) == "spec.workers: 0 is less than 1"


def test_missing_file(tmp_path: Path) -> None:
    path = str(tmp_path / "absent.yaml")
    assert str(failure(path)) == f"{path}: No such file or directory"


def test_folder_is_not_file(tmp_path: Path) -> None:
    assert str(failure(str(tmp_path))) == f"{tmp_path}: Is a directory"


def test_invalid_yaml(tmp_path: Path) -> None:
    path = write(tmp_path, "spec: [unclosed\n")
    assert str(failure(path)).startswith(f"{path}: not valid YAML or JSON: ")


def test_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_bytes(b"spec: \xff\n")
    assert str(failure(str(path))) == f"{path}: not UTF-8 text: invalid start byte"


@pytest.mark.parametrize(("text", "count"), [("", 0), ("# only a comment\n", 0), (HEADER + "---\n" + HEADER, 2)])
def test_exactly_one_document(tmp_path: Path, text: str, count: int) -> None:
    path = write(tmp_path, text)
    assert str(failure(path)) == f"{path}: expected one SchedulerConfiguration, found {count} documents"


def test_another_kind_is_rejected_by_api_version_and_kind(tmp_path: Path) -> None:
    path = write(tmp_path, "apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {name: m1}\n")
    assert failure(path).lines == [
        f"{path}: Cluster m1: apiVersion: 'cluster.karmada.io/v1alpha1' is not {API_VERSION}",
        f"{path}: Cluster m1: kind: 'Cluster' is not {KIND}",
    ]


def test_scalar_document_is_rejected(tmp_path: Path) -> None:
    path = write(tmp_path, "just text\n")
    assert str(failure(path)) == f"{path}: document 1: <root>: expected an object, got 'just text'"

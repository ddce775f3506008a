"""The inputs' fast paths read what the slow ones read: JSON through the JSON parser the API path uses, YAML
through libyaml's parser, each the same objects as PyYAML's pure loader gives (kubectl's scalars included)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from binding_scheduler.cli import inputs
from binding_scheduler.cli.inputs import documents, text_documents

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
ODD_SCALARS = """\
kind: Cluster
metadata: {name: m1, creationTimestamp: 2024-01-01T00:00:00Z, labels: {a: yes, b: "on", c: 0o17, d: 010}}
spec: {number: 1.5e3, date: 2024-05-01, empty: ~, big: 123456789012345678901234567890}
"""


def pure(text: str) -> list[Any]:
    return [d for d in yaml.load_all(text, Loader=inputs._PureLoader) if d is not None]


@pytest.mark.parametrize("name", ["bindings.yaml", "clusters.yaml", "scheduler-configuration.yaml"])
def test_libyamls_loader_reads_examples_as_pure_loader(name: str) -> None:
    text = (EXAMPLES / name).read_text()
    assert list(documents(EXAMPLES / name)) == [d for doc in pure(text) for d in
                                                (doc["items"] if doc.get("kind", "").endswith("List") else [doc])]


def test_libyamls_loader_keeps_kubectls_scalars() -> None:
    (read,) = text_documents(ODD_SCALARS)
    assert [read] == pure(ODD_SCALARS)
    assert read["metadata"]["creationTimestamp"] == "2024-01-01T00:00:00Z"


def test_json_file_reads_as_yaml_reading(tmp_path: Path) -> None:
    objects = [d for name in ("bindings.yaml", "clusters.yaml") for d in pure((EXAMPLES / name).read_text())]
    path = tmp_path / "export.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}, ensure_ascii=False))
    assert list(documents(path)) == objects


def test_json_integer_beyond_64_bits_stays_integer(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    path.write_text('{"kind": "Cluster", "spec": {"n": 123456789012345678901234567890}}')
    assert list(documents(path)) == [{"kind": "Cluster", "spec": {"n": 123456789012345678901234567890}}]


def test_bad_json_reported_with_place(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{"kind": "Cluster", "metadata": {"name": [}\n')
    with pytest.raises(yaml.YAMLError) as raised:
        list(documents(path))
    assert "line 1" in str(raised.value)

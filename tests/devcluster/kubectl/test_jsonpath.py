"""kube's JSONPath as printer columns use it, and how its results print (kubectl/jsonpath.py)."""

from __future__ import annotations

from typing import Any

import pytest

from binding_scheduler.devcluster.kubectl.jsonpath import go_text, jsonpath

OBJ = {"status": {"conditions": [{"type": "Ready", "status": "True"}, {"type": "Scheduled", "status": "False"}]},
       "spec": {"a.b": 1, "list": [1, 2, 3]}}


@pytest.mark.parametrize(("expression", "found"), [
    ('.status.conditions[?(@.type=="Scheduled")].status', ["False"]),
    ("{.spec['a.b']}", [1]),
    ("$.spec.list[-1]", [3]),
    (".spec.list[*]", [1, 2, 3]),
    ("..type", ["Ready", "Scheduled"]),
    (".nope.x", []),
])
def test_path_finds_what_kubes_jsonpath_finds(expression: str, found: list[Any]) -> None:
    assert jsonpath(OBJ, expression) == found


def test_results_print_as_go_prints_them() -> None:
    assert [go_text(value) for value in ("s", True, 2.0, 2.5, None, {"a": 1}, 3)] == [
        "s", "true", "2", "2.5", "<nil>", '{"a":1}', "3"]

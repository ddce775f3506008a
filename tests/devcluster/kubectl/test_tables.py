"""Tables (kubectl/tables.py, kubectl/printers.py): ages as kube prints them and the rows of a printer.
tests/conformance compares whole Tables with kube-apiserver's."""

from __future__ import annotations

import pytest

from binding_scheduler.crds import default_crds_dir, load_crds
from binding_scheduler.devcluster import Registry
from binding_scheduler.devcluster.kubectl.printers import printer_for
from binding_scheduler.devcluster.kubectl.tables import human_duration, table
from binding_scheduler.devcluster.resources import types_from_crd
from tests.devcluster.helpers import rb_body


@pytest.mark.parametrize(("seconds", "shown"), [
    (-5, "<invalid>"), (-1, "0s"), (90, "90s"), (150, "2m30s"), (600, "10m"), (3 * 3600 + 600, "3h10m"),
    (8 * 3600, "8h"), (50 * 3600, "2d2h"), (10 * 86400, "10d"), ((3 * 365 + 5) * 86400, "3y5d"),
    (9 * 365 * 86400, "9y"),
])
def test_age_is_apimachinerys_human_duration(seconds: int, shown: str) -> None:
    assert human_duration(seconds) == shown


def test_crds_printer_columns_make_rows_of_its_table() -> None:
    registry = Registry.with_builtins()
    for crd in load_crds(default_crds_dir()):
        registry.add_all(types_from_crd(crd))
    binding = rb_body("web", replicas=2)
    binding["status"] = {"conditions": [{"type": "Scheduled", "status": "True"}]}
    answer = table(printer_for(registry.resolve("rb")), [binding], {}, include_object="None")
    assert [column["name"] for column in answer["columnDefinitions"]] == ["Name", "SCHEDULED", "FULLYAPPLIED", "AGE"]
    assert answer["rows"] == [{"cells": ["web", "True", None, None], "object": None}]  # absent: null cells


def test_built_in_kind_gets_default_printer() -> None:
    crds = Registry.with_builtins().resolve("customresourcedefinitions")
    assert [column["name"] for column in printer_for(crds).columns] == ["Name", "Created At"]

"""The metadata view every part of the scheduler reads an object's identity through: one default per field."""

from __future__ import annotations

from typing import Any

import pytest

from binding_scheduler.model import ObjectMeta, parse_binding
from testsupport.builders import binding, placement


def test_bindings_kind_and_metadata_are_read_as_they_are() -> None:
    body = binding("web", namespace="shop", uid="u-1", generation=4, replicas=1, placement=placement())

    assert ObjectMeta.of(body) == ObjectMeta("ResourceBinding", "web", "shop", "u-1", "7", 4)
    assert ObjectMeta.of(body).key == "shop/web"


def test_cluster_scoped_object_is_keyed_by_name_alone() -> None:
    assert ObjectMeta.of({"kind": "ClusterResourceBinding", "metadata": {"name": "role"}}).key == "role"


@pytest.mark.parametrize("body", [
    {},
    {"metadata": None},
    {"metadata": "web"},
    {"kind": 7, "metadata": {"name": ["web"], "namespace": 1, "uid": None, "resourceVersion": 12, "generation": "3"}},
    {"metadata": {"generation": True}},
], ids=["empty", "null-metadata", "text-metadata", "mistyped-fields", "boolean-generation"])
def test_absent_or_mistyped_field_reads_as_one_default(body: dict[str, Any]) -> None:
    assert ObjectMeta.of(body) == ObjectMeta("", "", "", "", "", 0)


def test_view_of_parsed_binding_is_view_of_its_body() -> None:
    body = binding("role", cluster_scoped=True, generation=2, replicas=1, placement=placement())

    assert ObjectMeta.of_binding(parse_binding(body)) == ObjectMeta.of(body)

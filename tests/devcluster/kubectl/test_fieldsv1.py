"""Field sets as FieldsV1 and as conflict messages print them (kubectl/fieldsv1.py)."""

from __future__ import annotations

from binding_scheduler.devcluster.kubectl.fieldsv1 import from_fields_v1, path_text, to_fields_v1


def test_fields_v1_round_trips_and_marks_members_with_children() -> None:
    paths = {("f:spec",), ("f:spec", "f:n"), ("f:spec", "f:items", 'k:{"name":"a"}'),
             ("f:spec", "f:items", 'k:{"name":"a"}', "f:n")}
    encoded = to_fields_v1(paths)
    assert encoded == {"f:spec": {".": {}, "f:items": {'k:{"name":"a"}': {".": {}, "f:n": {}}}, "f:n": {}}}
    assert from_fields_v1(encoded) == paths


def test_conflict_path_prints_as_kube_prints_it() -> None:
    assert path_text(("f:spec", "f:items", 'k:{"name":"a"}', "f:n")) == '.spec.items[name="a"].n'
    assert path_text(("f:spec", "f:tags", 'v:"x"')) == '.spec.tags[="x"]'

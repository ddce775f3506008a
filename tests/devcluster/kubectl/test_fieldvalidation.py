"""Field validation (kubectl/fieldvalidation.py): duplicate fields of a body, and what each directive does with
unknown ones. tests/conformance holds the answers against kube-apiserver's."""

from __future__ import annotations

import json

import pytest

from binding_scheduler.crds import default_crds_dir, load_crds
from binding_scheduler.devcluster import ApiError, Registry
from binding_scheduler.devcluster.kubectl.fieldvalidation import FieldValidation, duplicate_fields
from binding_scheduler.devcluster.resources import ResourceType, types_from_crd
from tests.devcluster.helpers import rb_body


def resource_bindings() -> ResourceType:
    registry = Registry.with_builtins()
    for crd in load_crds(default_crds_dir()):
        registry.add_all(types_from_crd(crd))
    return registry.resolve("rb")


def test_duplicate_fields_are_found_by_their_paths() -> None:
    assert duplicate_fields(b'{"spec":{"a":1,"a":2,"l":[{"x":1,"x":2}]}}') == ["spec.a", "spec.l[0].x"]
    assert duplicate_fields(b'{"a":1}') == []
    assert duplicate_fields(b"a: 1\na: 2\n") == []  # YAML: not looked at


def test_keys_repeated_across_objects_are_not_duplicates() -> None:
    assert duplicate_fields(b'{"spec":{"clusters":[{"name":"m1","replicas":1},{"name":"m2","replicas":2}]}}') == []


def test_duplicate_found_beside_string_values_that_look_like_keys() -> None:
    assert duplicate_fields(b'{"l":["v",":x"],"m":[{"a":1},{"a":1, "a" :3}]}') == ["m[1].a"]
    assert duplicate_fields(b'{"l":["v",":x"],"m":{"a":1},"n":{"a":2}}') == []


def test_duplicate_found_among_strings_that_start_with_a_colon() -> None:
    assert duplicate_fields(b'{"l":[":x"],"m":{":k":":1",":k":":2"},"n":[{":k":1}]}') == ["m.:k"]


def test_duplicate_found_where_blanks_part_a_key_from_its_colon() -> None:
    assert duplicate_fields(b'{"a" :1,"b":[{"a":1}],"a"\n:2}') == ["a"]


def test_duplicate_found_beside_escaped_quotes_and_colons() -> None:
    assert duplicate_fields(b'{"note":"{\\"a\\":1,\\"a\\":2}","m":{"b":1,"b":2},"n":[{"b":3}]}') == ["m.b"]
    assert duplicate_fields(b'{"note":"{\\"a\\":1,\\"a\\":2}","n":[{"b":3},{"b":4}]}') == []


def test_duplicate_found_where_an_escape_spells_a_quote() -> None:
    assert duplicate_fields(b'{"x":"\\u0022:","m":{"b":1,"b":2},"n":[{"b":3}]}') == ["m.b"]


def test_duplicate_found_with_the_parse_the_request_gave() -> None:
    raw = b'{"m":{"b":1,"b":2},"n":[{"b":3}]}'
    assert duplicate_fields(raw, json.loads(raw)) == ["m.b"]
    assert duplicate_fields(b'{"n":[{"b":3},{"b":4}]}', {"n": [{"b": 3}, {"b": 4}]}) == []


def test_duplicate_found_in_text_with_escapes() -> None:
    assert duplicate_fields(b'{"a\\"":1,"m":{"b":1,"b":2},"n":{"b":3}}') == ["m.b"]


def test_warn_collects_warning_per_unknown_field() -> None:
    body = rb_body("web", bogus=1)
    validation = FieldValidation.of(None, "CreateOptions", [])
    validation.check(resource_bindings(), body)
    assert validation.headers() == [("Warning", '299 - "unknown field \\"spec.bogus\\""')]


def test_strict_refuses_unknown_field_and_ignore_lets_it_be() -> None:
    rb = resource_bindings()
    with pytest.raises(ApiError) as refused:
        FieldValidation.of("Strict", "CreateOptions", []).check(rb, rb_body("web", bogus=1))
    assert (refused.value.code, refused.value.body["message"]) == (
        400, 'ResourceBinding in version "v1alpha2" cannot be handled as a ResourceBinding: strict decoding error: '
             'unknown field "spec.bogus"')
    ignored = FieldValidation.of("Ignore", "CreateOptions", ["spec.a"])
    ignored.check(rb, rb_body("web", bogus=1))
    assert ignored.headers() == []


def test_another_directive_is_422_naming_options_kind() -> None:
    with pytest.raises(ApiError) as refused:
        FieldValidation.of("Loose", "PatchOptions", [])
    assert (refused.value.code, refused.value.body["details"]["kind"]) == (422, "PatchOptions")

"""Field validation (kubectl/fieldvalidation.py): duplicate fields of a body, and what each directive does with
unknown ones. tests/conformance holds the answers against kube-apiserver's."""

from __future__ import annotations

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

"""managedFields of the writes that are not applies (kubectl/managers.py)."""

from __future__ import annotations

from binding_scheduler.crds import default_crds_dir, load_crds
from binding_scheduler.devcluster import Registry
from binding_scheduler.devcluster.kubectl.managers import record_update
from binding_scheduler.devcluster.patch import merge_patch
from binding_scheduler.devcluster.resources import types_from_crd
from tests.devcluster.helpers import rb_body


def test_update_takes_what_it_changes_from_others() -> None:
    registry = Registry.with_builtins()
    for crd in load_crds(default_crds_dir()):
        registry.add_all(types_from_crd(crd))
    rb = registry.resolve("resourcebindings")
    created = rb_body("x", replicas=1)
    record_update(rb, None, created, "a", "", "2024-01-01T00:00:00Z")
    scaled = merge_patch(created, {"spec": {"replicas": 2}})
    record_update(rb, created, scaled, "b", "", "2024-01-01T00:00:01Z", {"spec": {"replicas": 2}})
    owners = {entry["manager"]: entry["fieldsV1"] for entry in scaled["metadata"]["managedFields"]}
    assert owners == {"a": {"f:spec": {".": {}, "f:resource": {".": {}, "f:apiVersion": {}, "f:kind": {},
                                                               "f:name": {}}}},
                      "b": {"f:spec": {"f:replicas": {}}}}

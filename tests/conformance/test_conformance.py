"""devcluster held to a real kube-apiserver: each test is one behaviour, run against both (see conftest.py),
asserting the same status codes, reasons, messages and fields. Differences that remain are listed in
docs/devcluster.md ("Differences from a real kube-apiserver")."""

from __future__ import annotations

import time
from typing import Any

import pytest

from tests.conformance.helpers import GENERATED, RB_API, Server, causes, names, rb_body, rv, shape, summary

RESOURCE = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}
CONDITION = {"type": "Scheduled", "status": "True", "reason": "Success", "message": "",
             "lastTransitionTime": "2024-01-01T00:00:00Z"}


def failure(code: int, reason: str, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                            "message": message, "reason": reason, "code": code}
    if details is not None:
        body["details"] = details
    return body


def rb_details(name: str) -> dict[str, str]:
    return {"name": name, "group": "work.karmada.io", "kind": "resourcebindings"}


def conflict(name: str) -> dict[str, Any]:
    return failure(409, "Conflict", f'Operation cannot be fulfilled on resourcebindings.work.karmada.io "{name}": '
                   "the object has been modified; please apply your changes to the latest version and try again",
                   rb_details(name))


def lease(name: str, holder: str = "a") -> dict[str, Any]:
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": name},
            "spec": {"holderIdentity": holder}}


def event(name: str, namespace: str, message: str = "m") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Event", "metadata": {"name": name}, "reason": "Scheduled",
            "message": message, "involvedObject": {"kind": "ResourceBinding", "name": "rb1", "namespace": namespace}}


# ---- create, get, delete ------------------------------------------------------------------------------------


def test_create_answers_201_with_version_and_defaults(server: Server) -> None:
    status, body = server.request("POST", server.rb(), rb_body("rb1", replicas=1))
    assert status == 201
    assert shape(body) == {
        "apiVersion": RB_API, "kind": "ResourceBinding",
        "metadata": {"name": "rb1", "namespace": server.namespace, "uid": "<uid>",
                     "creationTimestamp": "<creationTimestamp>", "generation": 1, "resourceVersion": "<rv>"},
        "spec": {"resource": RESOURCE, "replicas": 1, "conflictResolution": "Abort"},
    }
    assert server.request("GET", server.rb("rb1")) == (200, body)


def test_create_of_existing_name_is_409_already_exists(server: Server) -> None:
    server.create_rb("rb1")
    status, body = server.request("POST", server.rb(), rb_body("rb1"))
    assert (status, body) == (409, failure(409, "AlreadyExists",
                                           'resourcebindings.work.karmada.io "rb1" already exists', rb_details("rb1")))


def test_get_of_missing_object_is_404_not_found(server: Server) -> None:
    status, body = server.request("GET", server.rb("ghost"))
    assert (status, body) == (404, failure(404, "NotFound", 'resourcebindings.work.karmada.io "ghost" not found',
                                           rb_details("ghost")))


def test_create_in_missing_namespace_is_404_for_namespace(server: Server) -> None:
    missing = f"{server.namespace}-missing"
    status, body = server.request("POST", server.rb(namespace=missing), rb_body("rb1"))
    assert (status, body) == (404, failure(404, "NotFound", f'namespaces "{missing}" not found',
                                           {"name": missing, "kind": "namespaces"}))


def test_body_namespace_other_than_url_namespace_is_400(server: Server) -> None:
    body = rb_body("rb1")
    body["metadata"]["namespace"] = "elsewhere"
    status, answer = server.request("POST", server.rb(), body)
    assert (status, answer) == (400, failure(
        400, "BadRequest", "the namespace of the provided object does not match the namespace sent on the request"))


def test_delete_without_finalizers_removes_object(server: Server) -> None:
    created = server.create_rb("rb1")
    status, body = server.request("DELETE", server.rb("rb1"))
    assert (status, body) == (200, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                                    "details": {**rb_details("rb1"), "uid": created["metadata"]["uid"]}})
    assert server.request("GET", server.rb("rb1"))[0] == 404


def test_delete_of_missing_object_is_404(server: Server) -> None:
    status, body = server.request("DELETE", server.rb("ghost"))
    assert (status, body) == (404, failure(404, "NotFound", 'resourcebindings.work.karmada.io "ghost" not found',
                                           rb_details("ghost")))


def test_delete_with_stale_resource_version_precondition_is_409(server: Server) -> None:
    created = server.create_rb("rb1")
    stale = rv(created) - 1
    status, body = server.request("DELETE", server.rb("rb1"), {"preconditions": {"resourceVersion": str(stale)}})
    assert (status, body) == (409, failure(
        409, "Conflict",
        f'Operation cannot be fulfilled on ResourceBinding.work.karmada.io "rb1": the ResourceVersion in the '
        f"precondition ({stale}) does not match the ResourceVersion in record ({rv(created)}). The object might "
        "have been modified",
        {"name": "rb1", "group": "work.karmada.io", "kind": "ResourceBinding"}))
    assert server.request("GET", server.rb("rb1"))[0] == 200


# ---- generateName and names ---------------------------------------------------------------------------------


def test_generate_name_appends_five_random_characters(server: Server) -> None:
    body = rb_body(None)
    body["metadata"]["generateName"] = "rb-"
    status, created = server.request("POST", server.rb(), body)
    assert status == 201
    name = created["metadata"]["name"]
    assert name.startswith("rb-") and GENERATED.fullmatch(name[3:]), name
    assert created["metadata"]["generateName"] == "rb-"
    assert server.request("GET", server.rb(name)) == (200, created)


def test_create_without_name_or_generate_name_is_422(server: Server) -> None:
    status, body = server.request("POST", server.rb(), rb_body(None))
    assert (status, body) == (422, failure(
        422, "Invalid",
        'ResourceBinding.work.karmada.io "" is invalid: metadata.name: Required value: name or generateName is '
        "required",
        {"group": "work.karmada.io", "kind": "ResourceBinding", "causes": [{
            "reason": "FieldValueRequired", "message": "Required value: name or generateName is required",
            "field": "metadata.name"}]}))


def test_name_that_is_not_dns_subdomain_is_422(server: Server) -> None:
    status, body = server.request("POST", server.rb(), rb_body("Bad_Name"))
    assert status == 422
    assert body["reason"] == "Invalid"
    assert causes(body) == {("metadata.name", "FieldValueInvalid",
                             'Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case '
                             "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric "
                             "character (e.g. 'example.com', regex used for validation is "
                             "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")}


# ---- generation, resourceVersion, optimistic concurrency ---------------------------------------------------------


def test_spec_patch_bumps_generation(server: Server) -> None:
    created = server.create_rb("rb1", replicas=1)
    status, body = server.request("PATCH", server.rb("rb1"), {"spec": {"replicas": 2}})
    assert (status, body["spec"]["replicas"], body["metadata"]["generation"]) == (200, 2, 2)
    assert rv(body) > rv(created)


def test_label_patch_keeps_generation(server: Server) -> None:
    created = server.create_rb("rb1")
    status, body = server.request("PATCH", server.rb("rb1"), {"metadata": {"labels": {"a": "b"}}})
    assert (status, body["metadata"]["labels"], body["metadata"]["generation"]) == (200, {"a": "b"}, 1)
    assert rv(body) > rv(created)


def test_write_that_changes_nothing_keeps_resource_version(server: Server) -> None:
    created = server.create_rb("rb1", replicas=1)
    status, body = server.request("PATCH", server.rb("rb1"), {"spec": {"replicas": 1}})
    assert (status, rv(body), body["metadata"]["generation"]) == (200, rv(created), 1)


def test_patch_with_current_resource_version_succeeds(server: Server) -> None:
    created = server.create_rb("rb1")
    status, body = server.request("PATCH", server.rb("rb1"), {
        "metadata": {"resourceVersion": created["metadata"]["resourceVersion"]}, "spec": {"replicas": 9}})
    assert (status, body["spec"]["replicas"]) == (200, 9)


def test_patch_with_stale_resource_version_is_409_conflict(server: Server) -> None:
    created = server.create_rb("rb1")
    server.request("PATCH", server.rb("rb1"), {"spec": {"replicas": 2}})
    status, body = server.request("PATCH", server.rb("rb1"), {
        "metadata": {"resourceVersion": created["metadata"]["resourceVersion"]}, "spec": {"replicas": 9}})
    assert (status, body) == (409, conflict("rb1"))
    assert server.request("GET", server.rb("rb1"))[1]["spec"]["replicas"] == 2


def test_put_with_stale_resource_version_is_409_conflict(server: Server) -> None:
    created = server.create_rb("rb1")
    server.request("PATCH", server.rb("rb1"), {"spec": {"replicas": 2}})
    created["spec"]["replicas"] = 9
    status, body = server.request("PUT", server.rb("rb1"), created)
    assert (status, body) == (409, conflict("rb1"))


def test_put_with_current_resource_version_replaces_spec(server: Server) -> None:
    created = server.create_rb("rb1", replicas=1)
    created["spec"] = {"resource": RESOURCE, "replicas": 5}
    status, body = server.request("PUT", server.rb("rb1"), created)
    assert status == 200
    assert body["spec"] == {"resource": RESOURCE, "replicas": 5, "conflictResolution": "Abort"}
    assert (body["metadata"]["generation"], rv(body) > rv(created)) == (2, True)


def test_put_without_resource_version_is_422_for_custom_resource(server: Server) -> None:
    server.create_rb("rb1")
    status, body = server.request("PUT", server.rb("rb1"), rb_body("rb1", replicas=3))
    assert (status, body) == (422, failure(
        422, "Invalid",
        'resourcebindings.work.karmada.io "rb1" is invalid: metadata.resourceVersion: Invalid value: 0: must be '
        "specified for an update",
        {**rb_details("rb1"), "causes": [{"reason": "FieldValueInvalid", "field": "metadata.resourceVersion",
                                         "message": "Invalid value: 0: must be specified for an update"}]}))


def test_put_with_another_name_than_url_is_400(server: Server) -> None:
    created = server.create_rb("rb1")
    created["metadata"]["name"] = "rb2"
    status, body = server.request("PUT", server.rb("rb1"), created)
    assert (status, body) == (400, failure(
        400, "BadRequest", "the name of the object (rb2) does not match the name on the URL (rb1)"))


def test_put_of_missing_object_is_404(server: Server) -> None:
    status, body = server.request("PUT", server.rb("ghost"), rb_body("ghost"))
    assert (status, body) == (404, failure(404, "NotFound", 'resourcebindings.work.karmada.io "ghost" not found',
                                           rb_details("ghost")))


def test_json_patch_with_failing_test_is_422_and_changes_nothing(server: Server) -> None:
    created = server.create_rb("rb1", replicas=1)
    status, body = server.request("PATCH", server.rb("rb1"), [
        {"op": "replace", "path": "/spec/replicas", "value": 4},
        {"op": "test", "path": "/spec/replicas", "value": 1},
    ], content_type="application/json-patch+json")
    assert (status, body) == (422, failure(422, "Invalid",
                                           "the server rejected our request due to an error in our request", {}))
    assert server.request("GET", server.rb("rb1")) == (200, created)


def test_strategic_merge_patch_of_custom_resource_is_415(server: Server) -> None:
    server.create_rb("rb1")
    status, body = server.request("PATCH", server.rb("rb1"), {"spec": {"replicas": 2}},
                                  content_type="application/strategic-merge-patch+json")
    assert (status, body) == (415, failure(
        415, "UnsupportedMediaType",
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"))


# ---- the status subresource -------------------------------------------------------------------------------------


def test_status_sent_on_create_is_dropped(server: Server) -> None:
    body = rb_body("rb1")
    body["status"] = {"schedulerObservedGeneration": 5}
    status, created = server.request("POST", server.rb(), body)
    assert (status, "status" in created) == (201, False)


def test_status_written_through_main_resource_is_ignored(server: Server) -> None:
    created = server.create_rb("rb1")
    status, body = server.request("PATCH", server.rb("rb1"), {"status": {"schedulerObservedGeneration": 7}})
    assert (status, "status" in body, rv(body)) == (200, False, rv(created))
    status, body = server.request("PATCH", server.rb("rb1"), {"spec": {"replicas": 3},
                                                            "status": {"schedulerObservedGeneration": 7}})
    assert (status, body["spec"]["replicas"], "status" in body) == (200, 3, False)


def test_status_write_ignores_spec_and_metadata(server: Server) -> None:
    created = server.create_rb("rb1", replicas=1)
    status, body = server.request("PATCH", server.rb("rb1", "status"), {
        "metadata": {"labels": {"x": "y"}, "annotations": {"a": "b"}, "finalizers": ["example.com/f"]},
        "spec": {"replicas": 50}, "status": {"schedulerObservedGeneration": 1, "conditions": [CONDITION]}})
    assert status == 200
    assert body["status"] == {"schedulerObservedGeneration": 1, "conditions": [CONDITION]}
    assert body["spec"] == created["spec"]
    assert {k: v for k, v in shape(body)["metadata"].items()} == {
        **shape(created)["metadata"], "resourceVersion": "<rv>"}
    assert rv(body) > rv(created)
    assert server.request("GET", server.rb("rb1", "status")) == (200, body)


def test_status_put_replaces_only_status(server: Server) -> None:
    created = server.create_rb("rb1", replicas=1)
    sent = {**created, "spec": {"resource": RESOURCE, "replicas": 11},
            "status": {"lastScheduledTime": "2024-01-01T00:00:00Z"}}
    status, body = server.request("PUT", server.rb("rb1", "status"), sent)
    assert (status, body["spec"], body["status"]) == (200, created["spec"],
                                                      {"lastScheduledTime": "2024-01-01T00:00:00Z"})
    assert body["metadata"]["generation"] == 1


def test_stale_version_through_status_is_409_conflict(server: Server) -> None:
    created = server.create_rb("rb1")
    server.request("PATCH", server.rb("rb1"), {"spec": {"replicas": 2}})
    status, body = server.request("PATCH", server.rb("rb1", "status"), {
        "metadata": {"resourceVersion": created["metadata"]["resourceVersion"]},
        "status": {"schedulerObservedGeneration": 1}})
    assert (status, body) == (409, conflict("rb1"))


# ---- schema: validation, pruning, defaulting ------------------------------------------------------------------


def test_field_of_wrong_type_is_422_invalid(server: Server) -> None:
    status, body = server.request("POST", server.rb(), rb_body("rb1", replicas="lots"))
    cause = {"reason": "FieldValueTypeInvalid", "field": "spec.replicas",
             "message": 'Invalid value: "string": spec.replicas in body must be of type integer: "string"'}
    assert (status, body) == (422, failure(
        422, "Invalid", f'ResourceBinding.work.karmada.io "rb1" is invalid: spec.replicas: {cause["message"]}',
        {"name": "rb1", "group": "work.karmada.io", "kind": "ResourceBinding", "causes": [cause]}))
    assert server.request("GET", server.rb("rb1"))[0] == 404


def test_every_schema_violation_is_cause(server: Server) -> None:
    status, body = server.request("POST", server.rb(), {**rb_body("rb1", conflictResolution="Bogus", clusters=[
        {"name": "m1"}, {"name": 5}]), "spec": {"resource": {"kind": "Deployment"}, "conflictResolution": "Bogus",
                                                   "clusters": [{"name": "m1"}, {"name": 5}]}})
    assert (status, body["reason"]) == (422, "Invalid")
    assert causes(body) == {
        ("spec.conflictResolution", "FieldValueNotSupported",
         'Unsupported value: "Bogus": supported values: "Abort", "Overwrite"'),
        ("spec.clusters[1].name", "FieldValueTypeInvalid",
         'Invalid value: "integer": spec.clusters[1].name in body must be of type string: "integer"'),
        ("spec.resource.apiVersion", "FieldValueRequired", "Required value"),
        ("spec.resource.name", "FieldValueRequired", "Required value"),
    }


def test_patterns_lengths_minimums_and_date_times_are_checked(server: Server) -> None:
    status, body = server.request("POST", server.rb(), rb_body(
        "rb1", rescheduleTriggeredAt="yesterday",
        gracefulEvictionTasks=[{"fromCluster": "m1", "producer": "p", "reason": "bad reason!"},
                               {"fromCluster": "m2", "producer": "p", "reason": "A" * 40}],
        placement={"replicaScheduling": {"weightPreference": {"staticWeightList": [
            {"targetCluster": {}, "weight": 0}]}}}))
    assert (status, body["reason"]) == (422, "Invalid")
    pattern = "^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$"
    weight = "spec.placement.replicaScheduling.weightPreference.staticWeightList[0].weight"
    assert causes(body) == {
        ("spec.rescheduleTriggeredAt", "FieldValueTypeInvalid",
         'Invalid value: "yesterday": spec.rescheduleTriggeredAt in body must be of type date-time: "yesterday"'),
        ("spec.gracefulEvictionTasks[0].reason", "FieldValueInvalid",
         f"Invalid value: \"bad reason!\": spec.gracefulEvictionTasks[0].reason in body should match '{pattern}'"),
        ("spec.gracefulEvictionTasks[1].reason", "FieldValueTooLong", "Too long: may not be more than 32 bytes"),
        (weight, "FieldValueInvalid", f"Invalid value: 0: {weight} in body should be greater than or equal to 1"),
    }


def test_patch_that_breaks_schema_is_422_and_changes_nothing(server: Server) -> None:
    created = server.create_rb("rb1", replicas=1)
    status, body = server.request("PATCH", server.rb("rb1"), {"spec": {"replicas": "lots"}})
    assert (status, body["reason"], body["details"]["causes"][0]["field"]) == (422, "Invalid", "spec.replicas")
    assert server.request("GET", server.rb("rb1")) == (200, created)


def test_status_errors_name_relative_paths(server: Server) -> None:
    server.create_rb("rb1")
    status, body = server.request("PATCH", server.rb("rb1", "status"), {"status": {"schedulerObservedGeneration": "x"}})
    message = ('Invalid value: "string": schedulerObservedGeneration in body must be of type integer: "string"')
    assert (status, body) == (422, failure(
        422, "Invalid", f'ResourceBinding.work.karmada.io "rb1" is invalid: status.schedulerObservedGeneration: '
                        f"{message}",
        {"name": "rb1", "group": "work.karmada.io", "kind": "ResourceBinding", "causes": [
            {"reason": "FieldValueTypeInvalid", "message": message, "field": "status.schedulerObservedGeneration"}]}))


def test_unknown_fields_and_nulls_are_pruned(server: Server) -> None:
    body = rb_body("rb1", bogus=1, replicas=None, clusters=[{"name": "m1", "zzz": 2}])
    body["extra"] = {"a": 1}
    body["metadata"]["bogus"] = True
    status, created = server.request("POST", server.rb(), body)
    assert status == 201
    assert "extra" not in created and "bogus" not in created["metadata"]
    assert created["spec"] == {"resource": RESOURCE, "clusters": [{"name": "m1"}], "conflictResolution": "Abort"}


def test_fields_that_preserve_unknown_fields_keep_them(server: Server) -> None:
    server.create_rb("rb1")
    item = {"clusterName": "m1", "status": {"anything": {"goes": [1, 2]}}, "zzz": 1}
    status, body = server.request("PATCH", server.rb("rb1", "status"), {"status": {"aggregatedStatus": [item]}})
    assert (status, body["status"]["aggregatedStatus"]) == (200, [{"clusterName": "m1",
                                                                   "status": {"anything": {"goes": [1, 2]}}}])


def test_integral_number_for_integer_field_is_stored_as_integer(server: Server) -> None:
    status, created = server.request("POST", server.rb(), rb_body("rb1", replicas=2.0))
    assert (status, created["spec"]["replicas"], type(created["spec"]["replicas"])) == (201, 2, int)
    status, body = server.request("POST", server.rb(), rb_body("rb2", replicas=1.5))
    assert (status, causes(body)) == (422, {("spec.replicas", "FieldValueTypeInvalid", 'Invalid value: "number": '
                                             'spec.replicas in body must be of type integer: "number"')})


# ---- lists and selectors -------------------------------------------------------------------------------------------


def test_list_carries_kind_and_latest_resource_version(server: Server) -> None:
    created = server.create_rb("rb1")
    status, body = server.request("GET", server.rb())
    assert (status, body["kind"], body["apiVersion"], names(body)) == (200, "ResourceBindingList", RB_API, ["rb1"])
    assert body["metadata"]["continue"] == ""
    assert int(body["metadata"]["resourceVersion"]) >= rv(created)
    assert body["items"][0] == created


def test_list_by_label_selector(server: Server) -> None:
    for name, labels in [("a", {"env": "prod", "tier": "1"}), ("b", {"env": "dev"}), ("c", {"team": "x"})]:
        server.request("POST", server.rb(), rb_body(name, labels=labels))
    expected = {"env=prod": ["a"], "env==prod": ["a"], "env!=prod": ["b", "c"], "env in (prod,dev)": ["a", "b"],
                "env notin (prod)": ["b", "c"], "env": ["a", "b"], "!env": ["c"], "env,tier": ["a"],
                "tier>0": ["a"], "tier<1": []}
    for selector, wanted in expected.items():
        status, body = server.request("GET", server.rb(query=f"labelSelector={_quote(selector)}"))
        assert (selector, status, names(body)) == (selector, 200, wanted)


def test_label_selector_that_does_not_parse_is_400(server: Server) -> None:
    status, body = server.request("GET", server.rb(query="labelSelector=" + _quote("a===b")))
    assert (status, body["reason"]) == (400, "BadRequest")


def test_list_by_field_selector_on_metadata_name(server: Server) -> None:
    for name in ("a", "b", "c"):
        server.create_rb(name)
    status, body = server.request("GET", server.rb(query="fieldSelector=metadata.name%3Db"))
    assert (status, names(body)) == (200, ["b"])
    status, body = server.request("GET", server.rb(query="fieldSelector=metadata.name!%3Db"))
    assert (status, names(body)) == (200, ["a", "c"])


def test_field_selector_on_namespace_lists_all(server: Server) -> None:
    other = server.new_namespace("other")
    server.create_rb("here")
    server.request("POST", server.rb(namespace=other), rb_body("there"))
    status, body = server.request("GET", f"/apis/{RB_API}/resourcebindings?fieldSelector=metadata.namespace%3D{other}")
    assert (status, names(body)) == (200, ["there"])


def test_field_selector_on_unsupported_field_is_400(server: Server) -> None:
    status, body = server.request("GET", server.rb(query="fieldSelector=spec.replicas%3D1"))
    assert (status, body) == (400, failure(400, "BadRequest", "field label not supported: spec.replicas"))


def test_list_pages_with_limit_and_continue(server: Server) -> None:
    for name in ("a", "b", "c"):
        server.create_rb(name)
    status, first = server.request("GET", server.rb(query="limit=2"))
    assert (status, names(first), first["metadata"]["remainingItemCount"]) == (200, ["a", "b"], 1)
    token = first["metadata"]["continue"]
    status, second = server.request("GET", server.rb(query=f"limit=2&continue={token}"))
    assert (status, names(second), second["metadata"]["continue"]) == (200, ["c"], "")


def test_list_pages_are_one_snapshot(server: Server) -> None:
    """A watch from the list's version then sees every later write: a write between two pages shows neither in
    the later page nor in the version it reports (Kopf watches from the last page's version)."""
    for name in ("a", "b", "c", "d"):
        server.create_rb(name, replicas=1)
    status, first = server.request("GET", server.rb(query="limit=2"))
    assert status == 200
    for name in ("a", "c"):
        assert server.request("PATCH", server.rb(name), {"spec": {"replicas": 7}})[0] == 200
    assert server.request("DELETE", server.rb("d"))[0] == 200
    server.create_rb("bb", replicas=1)

    status, second = server.request("GET", server.rb(query=f"limit=2&continue={first['metadata']['continue']}"))

    assert status == 200
    assert [(item["metadata"]["name"], item["spec"]["replicas"]) for item in second["items"]] == [("c", 1), ("d", 1)]
    assert second["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
    assert second["metadata"]["continue"] == ""


def test_continue_token_that_is_not_one_is_400(server: Server) -> None:
    status, body = server.request("GET", server.rb(query="limit=2&continue=bm90LWEtdG9rZW4"))
    assert (status, body["reason"]) == (400, "BadRequest")
    assert body["message"].startswith("invalid continue token: continue key is not valid: ")


# ---- watch --------------------------------------------------------------------------------------------------------


def test_watch_from_version_delivers_in_order(server: Server) -> None:
    created = server.create_rb("a")
    server.request("PATCH", server.rb("a"), {"spec": {"replicas": 2}})
    server.create_rb("b")
    server.request("DELETE", server.rb("a"))
    with server.watch(server.rb(), resourceVersion=created["metadata"]["resourceVersion"]) as stream:
        events = stream.take(3)
    assert summary(events) == [("MODIFIED", "a"), ("ADDED", "b"), ("DELETED", "a")]
    versions = [rv(e["object"]) for e in events]
    assert versions == sorted(versions) and versions[0] > rv(created)
    assert events[0]["object"]["spec"]["replicas"] == 2


def test_open_watch_receives_live_events(server: Server) -> None:
    _, listing = server.request("GET", server.rb())
    with server.watch(server.rb(), resourceVersion=listing["metadata"]["resourceVersion"]) as stream:
        created = server.create_rb("a")
        _, patched = server.request("PATCH", server.rb("a"), {"metadata": {"labels": {"x": "y"}}})
        server.request("DELETE", server.rb("a"))
        events = stream.take(3)
    assert [(e["type"], shape(e["object"])) for e in events[:2]] == [
        ("ADDED", shape(created)), ("MODIFIED", shape(patched))]
    assert [e["object"]["metadata"]["resourceVersion"] for e in events[:2]] == [
        created["metadata"]["resourceVersion"], patched["metadata"]["resourceVersion"]]
    assert (events[2]["type"], rv(events[2]["object"]) > rv(patched)) == ("DELETED", True)


def test_versionless_watch_starts_with_objects(server: Server) -> None:
    for name in ("b", "a"):
        server.create_rb(name)
    with server.watch(server.rb()) as stream:
        assert summary(stream.take(2)) == [("ADDED", "a"), ("ADDED", "b")]


def test_label_selector_turns_moves_into_delete_and_add(server: Server) -> None:
    created = server.request("POST", server.rb(), rb_body("a", labels={"mine": "yes"}))[1]
    server.request("PATCH", server.rb("a"), {"metadata": {"labels": {"mine": "no"}}})
    server.request("PATCH", server.rb("a"), {"metadata": {"labels": {"mine": "yes"}}})
    with server.watch(server.rb(), resourceVersion=created["metadata"]["resourceVersion"],
                      labelSelector="mine=yes") as stream:
        assert summary(stream.take(2)) == [("DELETED", "a"), ("ADDED", "a")]


def test_initial_events_end_with_bookmark(server: Server) -> None:
    server.create_rb("b")
    last = server.create_rb("a")
    with server.watch(server.rb(), sendInitialEvents="true", resourceVersionMatch="NotOlderThan",
                      allowWatchBookmarks="true") as stream:
        events = stream.take(3)
    assert summary(events) == [("ADDED", "a"), ("ADDED", "b"), ("BOOKMARK", None)]
    bookmark = events[2]["object"]
    assert (bookmark["kind"], bookmark["apiVersion"]) == ("ResourceBinding", RB_API)
    assert bookmark["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    assert int(bookmark["metadata"]["resourceVersion"]) >= rv(last)


def test_bookmark_comes_before_timeout_seconds_ends_watch(server: Server) -> None:
    other = server.new_namespace("other")
    _, listing = server.request("GET", server.rb())
    with server.watch(server.rb(), resourceVersion=listing["metadata"]["resourceVersion"],
                      allowWatchBookmarks="true", timeoutSeconds="3") as stream:
        _, elsewhere = server.request("POST", server.rb(namespace=other), rb_body("elsewhere"))
        first = stream.next()
        arrived = time.monotonic() - stream.opened
        rest = stream.rest()
        ended = time.monotonic() - stream.opened
    assert first is not None and first["type"] == "BOOKMARK"
    assert int(first["object"]["metadata"]["resourceVersion"]) >= rv(elsewhere)
    assert all(e["type"] == "BOOKMARK" for e in rest)
    assert arrived < 2.5 < ended < 4.5


def test_watch_from_before_type_was_served_is_410_expired(server: Server) -> None:
    with server.watch(server.rb(), resourceVersion="1") as stream:
        assert stream.status == 200
        events = stream.rest()
    assert [e["type"] for e in events] == ["ERROR"]
    error = events[0]["object"]
    assert {k: v for k, v in error.items() if k != "message"} == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "reason": "Expired", "code": 410}
    assert error["message"].startswith("too old resource version: 1 (")


# ---- finalizers and deletion ----------------------------------------------------------------------------------


def test_delete_with_finalizer_sets_timestamp(server: Server) -> None:
    status, created = server.request("POST", server.rb(), rb_body("rb1", finalizers=["example.com/hold"]))
    status, deleted = server.request("DELETE", server.rb("rb1"))
    assert status == 200
    assert shape(deleted)["metadata"] == {
        **shape(created)["metadata"], "deletionTimestamp": "<deletionTimestamp>", "deletionGracePeriodSeconds": 0,
        "generation": 2}
    assert rv(deleted) > rv(created)
    assert server.request("GET", server.rb("rb1")) == (200, deleted)
    assert server.request("DELETE", server.rb("rb1")) == (200, deleted)


def test_no_new_finalizer_can_be_added_to_object_being_deleted(server: Server) -> None:
    server.request("POST", server.rb(), rb_body("rb1", finalizers=["example.com/hold"]))
    server.request("DELETE", server.rb("rb1"))
    status, body = server.request("PATCH", server.rb("rb1"), {"metadata": {"finalizers": ["example.com/hold",
                                                                                          "example.com/new"]}})
    message = ('Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers '
               '[]string{"example.com/new"}')
    assert (status, body["reason"], causes(body)) == (422, "Invalid", {("metadata.finalizers", "FieldValueForbidden",
                                                                        message)})
    assert body["message"] == f'ResourceBinding.work.karmada.io "rb1" is invalid: metadata.finalizers: {message}'


def test_removing_last_finalizer_deletes_object(server: Server) -> None:
    server.request("POST", server.rb(), rb_body("rb1", finalizers=["example.com/a", "example.com/b"]))
    _, deleted = server.request("DELETE", server.rb("rb1"))
    status, body = server.request("PATCH", server.rb("rb1"), {"metadata": {"finalizers": ["example.com/b"]}})
    assert (status, body["metadata"]["finalizers"]) == (200, ["example.com/b"])
    status, last = server.request("PATCH", server.rb("rb1"), {"metadata": {"finalizers": None}})
    assert status == 200
    assert "finalizers" not in last["metadata"] and last["metadata"]["deletionTimestamp"]
    assert rv(last) == rv(body)  # the answer is the object as the update left it, at its previous version
    assert server.request("GET", server.rb("rb1"))[0] == 404
    with server.watch(server.rb(), resourceVersion=deleted["metadata"]["resourceVersion"]) as stream:
        events = stream.take(2)
    assert summary(events) == [("MODIFIED", "rb1"), ("DELETED", "rb1")]
    # the DELETED event carries the last stored object (its last finalizer still listed) at a new version
    assert rv(events[1]["object"]) > rv(body)
    assert events[1]["object"]["metadata"]["finalizers"] == ["example.com/b"]


# ---- namespaces ------------------------------------------------------------------------------------------------


def test_new_namespace_is_active_with_finalizer(server: Server) -> None:
    name = f"{server.namespace}-new"
    status, body = server.request("POST", "/api/v1/namespaces", {"metadata": {"name": name}})
    assert (status, shape(body)) == (201, {
        "apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": name, "uid": "<uid>", "creationTimestamp": "<creationTimestamp>",
                     "resourceVersion": "<rv>", "labels": {"kubernetes.io/metadata.name": name}},
        "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}})


def test_put_of_namespace_keeps_spec_finalizers_and_name_label(server: Server) -> None:
    status, body = server.request("PUT", f"/api/v1/namespaces/{server.namespace}",
                                  {"metadata": {"name": server.namespace, "labels": {"a": "b"}}})
    assert (status, body["spec"], body["metadata"]["labels"]) == (200, {"finalizers": ["kubernetes"]}, {
        "a": "b", "kubernetes.io/metadata.name": server.namespace})


def test_deleted_namespace_refuses_content(server: Server) -> None:
    doomed = server.new_namespace("doomed")
    server.request("POST", server.rb(namespace=doomed), rb_body("held", finalizers=["example.com/hold"]))
    status, body = server.request("DELETE", f"/api/v1/namespaces/{doomed}")
    assert (status, body["status"], bool(body["metadata"]["deletionTimestamp"])) == (
        200, {"phase": "Terminating"}, True)
    assert "deletionGracePeriodSeconds" not in body["metadata"]
    status, body = server.request("GET", f"/api/v1/namespaces/{doomed}")
    assert (status, body["status"]["phase"]) == (200, "Terminating")
    status, body = server.request("POST", server.rb(namespace=doomed), rb_body("rb2"))
    assert (status, body) == (403, failure(
        403, "Forbidden",
        f'resourcebindings.work.karmada.io "rb2" is forbidden: unable to create new content in namespace {doomed} '
        "because it is being terminated",
        {**rb_details("rb2"), "causes": [{"reason": "NamespaceTerminating", "field": "metadata.namespace",
                                          "message": f"namespace {doomed} is being terminated"}]}))
    status, body = server.request("POST", f"/apis/coordination.k8s.io/v1/namespaces/{doomed}/leases", lease("l1"))
    assert (status, body["reason"], body["details"]["causes"][0]["reason"]) == (403, "Forbidden",
                                                                               "NamespaceTerminating")


def test_namespace_checks_come_before_validation(server: Server) -> None:
    missing = f"{server.namespace}-missing"
    status, body = server.request("POST", server.rb(namespace=missing), rb_body("Bad_Name", replicas="x"))
    assert (status, body["reason"]) == (404, "NotFound")


# ---- dry run -------------------------------------------------------------------------------------------------


def test_dry_run_create_stores_nothing(
    server: Server,
) -> None:
    status, body = server.request("POST", server.rb(query="dryRun=All"), rb_body("rb1", replicas=1))
    assert (status, shape(body)) == (201, {
        "apiVersion": RB_API, "kind": "ResourceBinding",
        "metadata": {"name": "rb1", "namespace": server.namespace, "uid": "<uid>",
                     "creationTimestamp": "<creationTimestamp>", "generation": 1},
        "spec": {"resource": RESOURCE, "replicas": 1, "conflictResolution": "Abort"}})
    assert server.request("GET", server.rb("rb1"))[0] == 404
    assert names(server.request("GET", server.rb())[1]) == []


def test_dry_run_generate_name_stores_nothing(server: Server) -> None:
    body = rb_body(None)
    body["metadata"]["generateName"] = "rb-"
    status, answer = server.request("POST", server.rb(query="dryRun=All"), body)
    assert (status, GENERATED.fullmatch(answer["metadata"]["name"][3:]) is not None) == (201, True)
    assert names(server.request("GET", server.rb())[1]) == []


def test_dry_run_create_fails_like_create(server: Server) -> None:
    server.create_rb("rb1")
    assert server.request("POST", server.rb(query="dryRun=All"), rb_body("rb1"))[0] == 409
    status, body = server.request("POST", server.rb(query="dryRun=All"), rb_body("rb2", replicas="lots"))
    assert (status, body["reason"]) == (422, "Invalid")


def test_dry_run_patch_changes_nothing(server: Server) -> None:
    created = server.create_rb("rb1", replicas=1)
    status, body = server.request("PATCH", server.rb("rb1", query="dryRun=All"), {"spec": {"replicas": 5}})
    assert (status, body["spec"]["replicas"], body["metadata"]["generation"], rv(body)) == (200, 5, 2, rv(created))
    assert server.request("GET", server.rb("rb1")) == (200, created)
    status, body = server.request("PATCH", server.rb("rb1", query="dryRun=All"), {
        "metadata": {"resourceVersion": str(rv(created) - 1)}, "spec": {"replicas": 5}})
    assert (status, body) == (409, conflict("rb1"))


def test_dry_run_status_patch_and_put_change_nothing(server: Server) -> None:
    created = server.create_rb("rb1")
    status, body = server.request("PATCH", server.rb("rb1", "status", query="dryRun=All"),
                                  {"status": {"schedulerObservedGeneration": 3}})
    assert (status, body["status"], rv(body)) == (200, {"schedulerObservedGeneration": 3}, rv(created))
    status, body = server.request("PUT", server.rb("rb1", query="dryRun=All"), {**created, "spec": {
        "resource": RESOURCE, "replicas": 7}})
    assert (status, body["spec"]["replicas"], rv(body)) == (200, 7, rv(created))
    assert server.request("GET", server.rb("rb1")) == (200, created)


def test_dry_run_delete_answers_like_delete_and_keeps_object(server: Server) -> None:
    created = server.create_rb("rb1")
    status, body = server.request("DELETE", server.rb("rb1", query="dryRun=All"))
    assert (status, body) == (200, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                                    "details": {**rb_details("rb1"), "uid": created["metadata"]["uid"]}})
    assert server.request("GET", server.rb("rb1")) == (200, created)


def test_dry_run_delete_of_object_with_finalizer_marks_nothing(server: Server) -> None:
    _, created = server.request("POST", server.rb(), rb_body("rb1", finalizers=["example.com/hold"]))
    status, body = server.request("DELETE", server.rb("rb1", query="dryRun=All"))
    assert (status, bool(body["metadata"].get("deletionTimestamp")), body["metadata"]["generation"]) == (200, True, 2)
    assert rv(body) == rv(created)
    assert server.request("GET", server.rb("rb1")) == (200, created)


def test_dry_run_delete_of_namespace_keeps_it_and_content(server: Server) -> None:
    created = server.create_rb("rb1")
    status, body = server.request("DELETE", f"/api/v1/namespaces/{server.namespace}?dryRun=All")
    assert (status, body["status"]["phase"], bool(body["metadata"]["deletionTimestamp"])) == (
        200, "Terminating", True)
    status, body = server.request("GET", f"/api/v1/namespaces/{server.namespace}")
    assert (status, body["status"]["phase"], "deletionTimestamp" in body["metadata"]) == (200, "Active", False)
    assert server.request("GET", server.rb("rb1")) == (200, created)


@pytest.mark.parametrize(("method", "options"), [
    ("POST", "CreateOptions"), ("PUT", "UpdateOptions"), ("PATCH", "PatchOptions"), ("DELETE", "DeleteOptions")])
def test_dry_run_value_other_than_all_is_422(server: Server, method: str, options: str) -> None:
    created = server.create_rb("rb1")
    path = server.rb(None if method == "POST" else "rb1", query="dryRun=Server")
    body = {"POST": rb_body("rb2"), "PUT": created, "PATCH": {}, "DELETE": None}[method]
    status, answer = server.request(method, path, body)
    message = 'Unsupported value: ["Server"]: supported values: "All"'
    assert (status, answer) == (422, failure(
        422, "Invalid", f'{options}.meta.k8s.io "" is invalid: dryRun: {message}',
        {"group": "meta.k8s.io", "kind": options,
         "causes": [{"reason": "FieldValueNotSupported", "message": message, "field": "dryRun"}]}))
    assert server.request("GET", server.rb("rb1")) == (200, created)


# ---- built-in kinds: Leases and Events ---------------------------------------------------------------------------


def test_lease_has_no_generation(server: Server) -> None:
    status, body = server.request("POST", server.path("Lease"), lease("l1"))
    assert (status, "generation" in body["metadata"]) == (201, False)
    status, body = server.request("PATCH", server.path("Lease", "l1"), {"spec": {"holderIdentity": "b"}})
    assert (status, "generation" in body["metadata"], body["spec"]["holderIdentity"]) == (200, False, "b")


def test_lease_put_needs_current_resource_version(server: Server) -> None:
    _, created = server.request("POST", server.path("Lease"), lease("l1"))
    status, body = server.request("PUT", server.path("Lease", "l1"), lease("l1", "b"))
    assert (status, body["reason"], body["message"]) == (
        422, "Invalid", 'leases.coordination.k8s.io "l1" is invalid: metadata.resourceVersion: Invalid value: 0: '
                        "must be specified for an update")
    status, body = server.request("PUT", server.path("Lease", "l1"), {**created, "spec": {"holderIdentity": "b"}})
    assert (status, body["spec"]["holderIdentity"]) == (200, "b")
    status, body = server.request("PUT", server.path("Lease", "l1"), {**created, "spec": {"holderIdentity": "c"}})
    assert (status, body["reason"]) == (409, "Conflict")


def test_event_put_without_resource_version_is_allowed(server: Server) -> None:
    server.request("POST", server.path("Event"), event("e1", server.namespace))
    status, body = server.request("PUT", server.path("Event", "e1"), event("e1", server.namespace, "changed"))
    assert (status, body["message"], "generation" in body["metadata"]) == (200, "changed", False)


def test_lease_delete_answers_success_status(server: Server) -> None:
    _, created = server.request("POST", server.path("Lease"), lease("l1"))
    status, body = server.request("DELETE", server.path("Lease", "l1"))
    assert (status, body) == (200, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                                    "details": {"name": "l1", "group": "coordination.k8s.io", "kind": "leases",
                                                "uid": created["metadata"]["uid"]}})


def _quote(text: str) -> str:
    from urllib.parse import quote

    return quote(text, safe="")

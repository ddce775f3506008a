"""What kubectl relies on, held to a real kube-apiserver like the rest of the suite (see conftest.py): field
selectors of events and other built-in kinds, Table responses, OpenAPI documents, server-side apply and
managedFields, field validation, protobuf request bodies, SelfSubjectAccessReviews and SelfSubjectReviews."""

from __future__ import annotations

import json
import re
import time
from typing import Any

import pytest
import yaml

from binding_scheduler.devcluster.kubectl.tables import NAME_DESCRIPTION
from tests.conformance.helpers import (
    PROTOBUF,
    RB_API,
    TIMESTAMP,
    Server,
    causes,
    json_diff,
    k8s_pb,
    names,
    pb,
    rb_body,
    shape,
)
from tests.devcluster.kubectl.openapi_snapshot import trim


def event(name: str, namespace: str, involved: str, **fields: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Event", "metadata": {"name": name},
            "involvedObject": {"apiVersion": "work.karmada.io/v1alpha2", "kind": "ResourceBinding",
                               "name": involved, "namespace": namespace, "uid": f"uid-{involved}"},
            "message": "m", **fields}


def bad_request(message: str) -> dict[str, Any]:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
            "reason": "BadRequest", "code": 400}


# ---- field selectors ---------------------------------------------------------------------------------------------


def test_events_selected_by_involved_object(server: Server) -> None:
    ns = server.namespace
    for body in (
        event("e1", ns, "rb1", type="Normal", reason="Scheduled", source={"component": "binding-scheduler"}),
        event("e2", ns, "rb2", type="Warning", reason="ScheduleFailed", reportingComponent="other"),
        event("e3", ns, "rb1", type="Warning", reason="ScheduleFailed", source={"component": "x"},
              reportingComponent="other"),
    ):
        status, answer = server.request("POST", server.path("Event"), body)
        assert status == 201, answer

    def selected(selector: str) -> list[str]:
        status, answer = server.request("GET", server.path("Event", query=f"fieldSelector={_quote(selector)}"))
        assert status == 200, answer
        return names(answer)

    assert selected("involvedObject.name=rb1") == ["e1", "e3"]
    assert selected("involvedObject.kind=ResourceBinding,involvedObject.name=rb2") == ["e2"]
    assert selected(f"involvedObject.namespace={ns},involvedObject.uid=uid-rb2") == ["e2"]
    assert selected("involvedObject.apiVersion=work.karmada.io/v1alpha2,type=Warning") == ["e2", "e3"]
    assert selected("involvedObject.resourceVersion=,involvedObject.fieldPath=") == ["e1", "e2", "e3"]
    assert selected("reason!=Scheduled") == ["e2", "e3"]
    assert selected("type==Normal") == ["e1"]
    assert selected("source=other") == ["e2"]  # no source.component: the reporting component counts
    assert selected("source=x") == ["e3"]
    assert selected("reportingComponent=other") == ["e2", "e3"]
    assert selected(f"metadata.namespace={ns},metadata.name=e3") == ["e3"]


def test_watch_of_events_by_involved_object_sees_only_events(server: Server) -> None:
    ns = server.namespace
    server.request("POST", server.path("Event"), event("e1", ns, "rb1"))
    with server.watch(server.path("Event"), fieldSelector="involvedObject.name=rb2", timeoutSeconds="2") as stream:
        server.request("POST", server.path("Event"), event("e2", ns, "rb2"))
        server.request("POST", server.path("Event"), event("e3", ns, "rb3"))
        events = stream.rest()
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events if e["type"] != "BOOKMARK"] == [
        ("ADDED", "e2")]


@pytest.mark.parametrize(("path", "selector", "message"), [
    ("/api/v1/namespaces", "metadata.namespace=x", "field label not supported: metadata.namespace"),
    ("/api/v1/namespaces", "name=default", "field label not supported: name"),
    ("/api/v1/events", "involvedObject.bogus=x", "field label not supported: involvedObject.bogus"),
    ("/api/v1/services", "spec.ports=x", "field label not supported: spec.ports"),
    ("/apis/coordination.k8s.io/v1/leases", "spec.holderIdentity=x",
     '"spec.holderIdentity" is not a known field selector: only "metadata.name", "metadata.namespace"'),
    ("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", "spec.group=x",
     '"spec.group" is not a known field selector: only "metadata.name", "metadata.namespace"'),
    ("/apis/cluster.karmada.io/v1alpha1/clusters", "metadata.namespace=x",
     "field label not supported: metadata.namespace"),
    ("/apis/work.karmada.io/v1alpha2/resourcebindings", "spec.replicas=1", "field label not supported: spec.replicas"),
    ("/api/v1/events", "type", "invalid selector: 'type'; can't understand 'type'"),
    ("/api/v1/events", "type=a,,b", "invalid selector: 'type=a,,b'; can't understand 'b'"),
])
def test_unsupported_field_selector_is_400(
    server: Server, path: str, selector: str, message: str,
) -> None:
    assert server.request("GET", f"{path}?fieldSelector={_quote(selector)}") == (400, bad_request(message))


def test_namespaces_are_selected_by_phase_and_services_by_type(server: Server) -> None:
    selector = _quote(f"status.phase=Active,metadata.name={server.namespace}")
    status, answer = server.request("GET", f"/api/v1/namespaces?fieldSelector={selector}")
    assert (status, names(answer)) == (200, [server.namespace])
    status, answer = server.request("GET", server.path("Service", query="fieldSelector=spec.type%3DNodePort"))
    assert (status, names(answer)) == (200, [])


def _quote(text: str) -> str:
    from urllib.parse import quote

    return quote(text, safe="")


# ---- Table responses (kubectl get) ------------------------------------------------------------------------------

TABLE = ("application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,"
         "application/json")
AGE = re.compile(r"\d+s")


def test_table_of_resource_bindings_has_crds_printer_columns(server: Server) -> None:
    server.create_rb("rb1")
    server.request("PATCH", server.rb("rb1", "status"), {"status": {"conditions": [
        {"type": "Scheduled", "status": "True", "reason": "Success", "message": "",
         "lastTransitionTime": "2024-01-01T00:00:00Z"}]}})
    reply = server.call("GET", server.rb(), accept=TABLE)
    assert reply.status == 200
    answer = reply.body
    assert (answer["kind"], answer["apiVersion"], list(answer["metadata"])) == ("Table", "meta.k8s.io/v1",
                                                                               ["resourceVersion"])
    assert answer["columnDefinitions"] == [
        {"name": "Name", "type": "string", "format": "name", "description": NAME_DESCRIPTION, "priority": 0},
        {"name": "SCHEDULED", "type": "string", "format": "", "priority": 0, "description":
            'Custom resource definition column (in JSONPath format): .status.conditions[?(@.type=="Scheduled")]'
            ".status"},
        {"name": "FULLYAPPLIED", "type": "string", "format": "", "priority": 0, "description":
            'Custom resource definition column (in JSONPath format): .status.conditions[?(@.type=="FullyApplied")]'
            ".status"},
        {"name": "AGE", "type": "date", "format": "", "priority": 0,
         "description": "Custom resource definition column (in JSONPath format): .metadata.creationTimestamp"}]
    [row] = answer["rows"]
    assert row["cells"][:3] == ["rb1", "True", None] and AGE.fullmatch(row["cells"][3])
    assert row["object"]["kind"] == "PartialObjectMetadata"
    assert shape(row["object"]) == {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                                    "metadata": shape(server.request("GET", server.rb("rb1"))[1])["metadata"]}


def test_cluster_table_has_karmadas_columns(server: Server) -> None:
    reply = server.call("GET", "/apis/cluster.karmada.io/v1alpha1/clusters?limit=1", accept=TABLE)
    assert [(c["name"], c["type"], c["priority"]) for c in reply.body["columnDefinitions"]] == [
        ("Name", "string", 0), ("Version", "string", 0), ("Mode", "string", 0), ("Ready", "string", 0),
        ("Age", "date", 0), ("Zones", "string", 1), ("Region", "string", 1), ("Provider", "string", 1),
        ("API-Endpoint", "string", 1), ("Proxy-URL", "string", 1)]


def test_table_of_one_object_has_row_and_resource_version(server: Server) -> None:
    created = server.create_rb("rb1")
    reply = server.call("GET", server.rb("rb1") + "?includeObject=None", accept=TABLE)
    assert reply.body["metadata"] == {"resourceVersion": created["metadata"]["resourceVersion"]}
    assert reply.body["rows"][0]["object"] is None
    reply = server.call("GET", server.rb("rb1") + "?includeObject=Object", accept=TABLE)
    assert shape(reply.body["rows"][0]["object"]) == shape(server.request("GET", server.rb("rb1"))[1])


def test_built_in_kinds_have_kube_apiservers_printer_columns(server: Server) -> None:
    ns = server.namespace
    server.request("POST", server.path("Lease"), {"metadata": {"name": "l1"}, "spec": {"holderIdentity": "me"}})
    server.request("POST", server.path("Event"), event("e1", ns, "rb1", type="Normal", reason="Scheduled",
                                                       source={"component": "binding-scheduler"}, count=3,
                                                       firstTimestamp="2020-01-01T00:00:00Z",
                                                       lastTimestamp="2020-01-01T00:00:00Z"))
    leases = server.call("GET", server.path("Lease"), accept=TABLE).body
    assert [c["name"] for c in leases["columnDefinitions"]] == ["Name", "Holder", "Age"]
    assert leases["rows"][0]["cells"][:2] == ["l1", "me"]
    events = server.call("GET", server.path("Event"), accept=TABLE).body
    assert [(c["name"], c["priority"]) for c in events["columnDefinitions"]] == [
        ("Last Seen", 0), ("Type", 0), ("Reason", 0), ("Object", 0), ("Subobject", 1), ("Source", 1),
        ("Message", 0), ("First Seen", 1), ("Count", 1), ("Name", 1)]
    assert events["rows"][0]["cells"][1:] == ["Normal", "Scheduled", "resourcebinding/rb1", "",
                                              "binding-scheduler", "m", events["rows"][0]["cells"][7], 3, "e1"]
    namespace = server.call("GET", f"/api/v1/namespaces/{ns}", accept=TABLE).body
    assert [c["name"] for c in namespace["columnDefinitions"]] == ["Name", "Status", "Age"]
    assert namespace["rows"][0]["cells"][:2] == [ns, "Active"]
    crds = server.call("GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"
                              "resourcebindings.work.karmada.io", accept=TABLE).body
    assert [(c["name"], c["type"]) for c in crds["columnDefinitions"]] == [("Name", "string"), ("Created At", "date")]
    assert TIMESTAMP.fullmatch(crds["rows"][0]["cells"][1])


def test_table_watch_sends_columns_once(server: Server) -> None:
    server.create_rb("rb1")
    server.create_rb("rb2")
    reply = server.call("GET", server.rb(query="watch=1&timeoutSeconds=1"), accept=TABLE)
    events = [json.loads(line) for line in reply.raw.splitlines()]
    assert [(e["type"], e["object"]["kind"], e["object"]["rows"][0]["cells"][0]) for e in events] == [
        ("ADDED", "Table", "rb1"), ("ADDED", "Table", "rb2")]
    assert events[0]["object"]["columnDefinitions"][0]["name"] == "Name"
    assert events[1]["object"]["columnDefinitions"] is None


@pytest.mark.parametrize(("accept", "message"), [
    ("text/plain", "only the following media types are accepted: application/json, application/yaml, "
                   "application/vnd.kubernetes.protobuf"),
    ("application/json;as=Table;v=v2;g=meta.k8s.io", "only the following media types are accepted: "
                                                     "application/json, application/yaml, "
                                                     "application/vnd.kubernetes.protobuf"),
])
def test_media_type_custom_resource_cannot_be_sent_as_is_406(server: Server, accept: str, message: str) -> None:
    reply = server.call("GET", server.rb(), accept=accept)
    assert (reply.status, reply.body) == (406, {"kind": "Status", "apiVersion": "v1", "metadata": {},
                                                "status": "Failure", "message": message, "reason": "NotAcceptable",
                                                "code": 406})


def test_yaml_is_answered_when_asked_for(server: Server) -> None:
    created = server.create_rb("rb1")
    reply = server.call("GET", server.rb("rb1"), accept="application/yaml")
    assert (reply.status, reply.headers["content-type"]) == (200, "application/yaml")
    assert yaml.safe_load(reply.raw) == created


# ---- /version ----------------------------------------------------------------------------------------------------


def test_version_reports_kubernetes_1_35_4(server: Server) -> None:
    status, answer = server.request("GET", "/version")
    assert status == 200
    assert list(answer) == ["major", "minor", "emulationMajor", "emulationMinor", "minCompatibilityMajor",
                            "minCompatibilityMinor", "gitVersion", "gitCommit", "gitTreeState", "buildDate",
                            "goVersion", "compiler", "platform"]
    assert (answer["major"], answer["minor"], answer["emulationMinor"], answer["minCompatibilityMinor"]) == (
        "1", "35", "35", "34")
    assert re.fullmatch(r"v1\.35\.4(\+devcluster)?", answer["gitVersion"])


# ---- protobuf bodies and the review kinds (kubectl create namespace, auth can-i, auth whoami) -----------------


def test_protobuf_namespace_created_as_json(server: Server) -> None:
    name = f"{server.namespace}-pb"
    # what kubectl create namespace sends: ObjectMeta with every string field present and empty, empty spec/status
    meta = pb((1, name), (2, ""), (3, ""), (4, ""), (5, ""), (6, ""), (7, 0), (8, b""), (11, pb((1, "a"), (2, "b"))))
    reply = server.call("POST", "/api/v1/namespaces", k8s_pb("v1", "Namespace", pb((1, meta), (2, b""), (3, b""))),
                        content_type=PROTOBUF)
    assert reply.status == 201, reply.body
    assert shape(reply.body) == {
        "apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": name, "uid": "<uid>", "creationTimestamp": "<creationTimestamp>",
                     "resourceVersion": "<rv>", "labels": {"a": "b", "kubernetes.io/metadata.name": name}},
        "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}


def test_lease_sent_as_protobuf_keeps_micro_times(server: Server) -> None:
    spec = pb((1, "me"), (2, 15), (4, pb((1, 1700000000), (2, 123456000))))
    reply = server.call("POST", server.path("Lease"),
                        k8s_pb("coordination.k8s.io/v1", "Lease", pb((1, pb((1, "l1"))), (2, spec))),
                        content_type=PROTOBUF)
    assert (reply.status, reply.body["spec"]) == (201, {"holderIdentity": "me", "leaseDurationSeconds": 15,
                                                        "renewTime": "2023-11-14T22:13:20.123456Z"})


def test_body_that_is_not_protobuf_is_400_naming_kind_and_bytes(server: Server) -> None:
    reply = server.call("POST", "/api/v1/namespaces", b"garbage", content_type=PROTOBUF)
    assert (reply.status, reply.body) == (400, bad_request(
        "the object provided is unrecognized (must be of type Namespace): provided data does not appear to be a "
        "protobuf message, expected prefix [107 56 115 0] (67617262616765)"))


@pytest.mark.parametrize(("method", "path", "content_type", "message", "details"), [
    ("POST", "/api/v1/namespaces", "text/plain", "the body of the request was in an unknown format - accepted media "
     "types include: application/json, application/yaml, application/vnd.kubernetes.protobuf", None),
    ("POST", "RB", "application/cbor", "the body of the request was in an unknown format - accepted media "
     "types include: application/json, application/yaml, application/vnd.kubernetes.protobuf", None),
    ("PATCH", "NS", PROTOBUF, "415: Unsupported Media Type", {}),
    ("PATCH", "NS", "text/plain", "415: Unsupported Media Type", {}),
    ("PATCH", "RB1", "text/plain", "the body of the request was in an unknown format - accepted media types "
     "include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml", None),
])
def test_body_in_media_type_server_does_not_read_is_415(
    server: Server, method: str, path: str, content_type: str, message: str, details: dict[str, Any] | None,
) -> None:
    server.create_rb("rb1")
    path = {"RB": server.rb(), "RB1": server.rb("rb1"), "NS": f"/api/v1/namespaces/{server.namespace}"}.get(path, path)
    reply = server.call(method, path, b'{"metadata":{"name":"x"}}', content_type=content_type)
    expected: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                "message": message, "reason": "UnsupportedMediaType", "code": 415}
    if details is not None:
        expected["details"] = details
    assert (reply.status, reply.body) == (415, expected)


def test_yaml_body_is_read(server: Server) -> None:
    body = f"apiVersion: {RB_API}\nkind: ResourceBinding\nmetadata:\n  name: rb1\nspec:\n  resource:\n" \
           "    apiVersion: apps/v1\n    kind: Deployment\n    name: web\n  replicas: 2\n"
    reply = server.call("POST", server.rb(), body.encode(), content_type="application/yaml")
    assert (reply.status, reply.body["spec"]["replicas"]) == (201, 2)


def test_self_subject_access_review_allows_admin(server: Server) -> None:
    spec = {"resourceAttributes": {"namespace": server.namespace, "verb": "create", "group": "work.karmada.io",
                                   "resource": "resourcebindings"}}
    body = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview", "spec": spec}
    status, answer = server.request("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", body)
    assert (status, answer["spec"], answer["status"]) == (201, spec, {"allowed": True})
    attributes = pb((1, server.namespace), (2, "delete"), (3, "work.karmada.io"), (4, ""),
                    (5, "resourcebindings"), (6, ""), (7, ""))
    reply = server.call("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", k8s_pb(
        "authorization.k8s.io/v1", "SelfSubjectAccessReview", pb((1, b""), (2, pb((1, attributes))), (3, pb(
            (1, 0), (4, 0), (2, ""), (3, ""))))), content_type=PROTOBUF)
    assert (reply.status, reply.body["status"]) == (201, {"allowed": True})
    assert reply.body["spec"]["resourceAttributes"] == {"namespace": server.namespace, "verb": "delete",
                                                        "group": "work.karmada.io", "resource": "resourcebindings"}


def test_self_subject_reviews_answer_as_admin(
    server: Server,
) -> None:
    status, answer = server.request("POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", {
        "apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview", "spec": {"namespace": "default"}})
    assert (status, answer["spec"], answer["status"]["incomplete"]) == (201, {}, False)
    assert {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]} in answer["status"]["resourceRules"]
    assert {"verbs": ["*"], "nonResourceURLs": ["*"]} in answer["status"]["nonResourceRules"]
    reply = server.call("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", k8s_pb(
        "authentication.k8s.io/v1", "SelfSubjectReview", pb((1, pb((1, ""), (3, ""), (8, b""))), (2, pb((1, b""))))),
        content_type=PROTOBUF)
    assert reply.status == 201
    assert TIMESTAMP.fullmatch(reply.body["metadata"]["creationTimestamp"])
    assert reply.body["status"]["userInfo"]["groups"] == ["system:masters", "system:authenticated"]


def test_review_kind_cannot_be_read(server: Server) -> None:
    status, answer = server.request("GET", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews")
    assert (status, answer) == (405, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                      "message": "the server does not allow this method on the requested resource",
                                      "reason": "MethodNotAllowed", "details": {}, "code": 405})


# ---- OpenAPI: the same documents (compared between the two servers) -------------------------------------------

CRD_GROUP_VERSIONS = ["apis/work.karmada.io/v1alpha2", "apis/cluster.karmada.io/v1alpha1",
                      "apis/config.binding-scheduler.io/v1alpha1"]
BUILTIN_GROUP_VERSIONS = ["api/v1", "apis/coordination.k8s.io/v1", "apis/apiextensions.k8s.io/v1",
                          "apis/authorization.k8s.io/v1", "apis/authentication.k8s.io/v1"]


def _index(server: Server) -> dict[str, str]:
    """The v3 index, once it lists every CRD group/version (kube-apiserver publishes a new CRD's document a moment
    after the CRD is Established)."""
    deadline = time.monotonic() + 30
    while True:
        status, answer = server.request("GET", "/openapi/v3")
        assert status == 200
        found = {key: entry["serverRelativeURL"] for key, entry in answer["paths"].items()}
        if set(CRD_GROUP_VERSIONS) <= set(found) or time.monotonic() > deadline:
            return found
        time.sleep(0.2)


def _document(server: Server, key: str) -> Any:
    url = _index(server)[key]
    reply = server.call("GET", url)
    assert (reply.status, reply.headers["cache-control"]) == (200, "public, immutable")
    assert reply.headers["etag"] == '"' + url.split("hash=")[1] + '"'
    return reply.body


def test_openapi_v3_index_lists_what_is_served(both: tuple[Server, Server]) -> None:
    dev, real = (set(_index(server)) for server in both)
    assert dev <= real
    assert {*CRD_GROUP_VERSIONS, *BUILTIN_GROUP_VERSIONS, "api", "apis", "version"} <= dev


@pytest.mark.parametrize("key", CRD_GROUP_VERSIONS)
def test_openapi_v3_of_crd_group_is_kubes(
    both: tuple[Server, Server], key: str,
) -> None:
    dev, real = (_document(server, key) for server in both)
    assert json_diff(dev, real) == []


@pytest.mark.parametrize("key", BUILTIN_GROUP_VERSIONS)
def test_openapi_v3_of_built_in_group_is_kube_apiservers(
    both: tuple[Server, Server], key: str,
) -> None:
    dev, real = (_document(server, key) for server in both)
    assert json_diff(dev, trim(key, real)) == []


def test_openapi_v3_stale_hash_redirects_unknown_404(server: Server) -> None:
    url = _index(server)["apis/work.karmada.io/v1alpha2"]
    stale = server.call("GET", "/openapi/v3/apis/work.karmada.io/v1alpha2?hash=ABC")
    assert (stale.status, stale.body) == (200, server.call("GET", url).body)  # urllib follows the 301
    reply = server.call("GET", "/openapi/v3/apis/example.com/v1")
    assert (reply.status, reply.raw) == (404, b"")
    reply = server.call("GET", "/openapi/v3/apis/work.karmada.io/v1alpha2")
    assert reply.headers["cache-control"] == "no-cache, private"


def test_openapi_v2_has_crds_definitions_and_paths(both: tuple[Server, Server]) -> None:
    dev, real = (server.call("GET", "/openapi/v2").body for server in both)
    for name in ("io.karmada.work.v1alpha2.ResourceBinding", "io.karmada.work.v1alpha2.ResourceBindingList",
                 "io.karmada.cluster.v1alpha1.Cluster", "io.k8s.api.core.v1.Namespace",
                 "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"):
        assert dev["definitions"][name] == real["definitions"][name], name
    for path, item in dev["paths"].items():
        assert set(item) == set(real["paths"][path]), path
        for method, op in item.items():
            if method != "parameters":
                assert (op["operationId"], op.get("x-kubernetes-group-version-kind")) == (
                    real["paths"][path][method]["operationId"],
                    real["paths"][path][method].get("x-kubernetes-group-version-kind")), (path, method)


def test_openapi_v2_in_unknown_media_type_is_406_with_no_body(server: Server) -> None:
    reply = server.call("GET", "/openapi/v2", accept="application/xml")
    assert (reply.status, reply.raw) == (406, b"")


# ---- fieldValidation ---------------------------------------------------------------------------------------------


def _with_unknown_fields(name: str) -> dict[str, Any]:
    body = rb_body(name, bogus=1, clusters=[{"name": "m1", "q": 1}])
    body["spec"]["resource"]["zz"] = 2
    body["metadata"]["bogus"] = 1
    body["extra"] = {"a": 1}
    return body


UNKNOWN = ['unknown field "metadata.bogus"', 'unknown field "extra"', 'unknown field "spec.bogus"',
           'unknown field "spec.clusters[0].q"', 'unknown field "spec.resource.zz"']


def test_unknown_fields_are_400_under_strict_validation(server: Server) -> None:
    reply = server.call("POST", server.rb(query="fieldValidation=Strict"), _with_unknown_fields("rb1"))
    assert (reply.status, reply.body) == (400, bad_request(
        'ResourceBinding in version "v1alpha2" cannot be handled as a ResourceBinding: strict decoding error: '
        + ", ".join(UNKNOWN)))
    assert server.request("GET", server.rb("rb1"))[0] == 404


def test_unknown_fields_warn_by_default(server: Server) -> None:
    reply = server.call("POST", server.rb(), _with_unknown_fields("rb1"))
    assert reply.status == 201
    assert reply.warnings == ['299 - "' + problem.replace('"', '\\"') + '"' for problem in UNKNOWN]
    reply = server.call("POST", server.rb(query="fieldValidation=Ignore"), _with_unknown_fields("rb2"))
    assert (reply.status, reply.warnings) == (201, [])


def test_duplicate_field_is_400_when_strict(server: Server) -> None:
    raw = json.dumps(rb_body("rb1", replicas=1)).replace('"replicas": 1', '"replicas": 1, "replicas": 2').encode()
    reply = server.call("POST", server.rb(query="fieldValidation=Strict"), raw)
    assert (reply.status, reply.body["message"]) == (400, 'ResourceBinding in version "v1alpha2" cannot be handled '
                                                          'as a ResourceBinding: strict decoding error: duplicate '
                                                          'field "spec.replicas"')
    reply = server.call("POST", server.rb(), raw)
    assert (reply.status, reply.body["spec"]["replicas"], reply.warnings) == (
        201, 2, ['299 - "duplicate field \\"spec.replicas\\""'])


def test_strict_patch_with_unknown_fields_is_422(server: Server) -> None:
    server.create_rb("rb1")
    reply = server.call("PATCH", server.rb("rb1", query="fieldValidation=Strict"),
                        [{"op": "add", "path": "/spec/zz", "value": 1}], content_type="application/json-patch+json")
    assert (reply.status, reply.body["reason"], reply.body["details"]["causes"][0]["field"]) == (422, "Invalid",
                                                                                              "patch")
    assert reply.body["message"].startswith(' "" is invalid: patch: Invalid value: "{\\"apiVersion\\":')
    assert reply.body["message"].endswith('}": strict decoding error: unknown field "spec.zz"')
    reply = server.call("PATCH", server.rb("rb1"), {"spec": {"bogus": 1}, "metadata": {"zz": 1}},
                        content_type="application/merge-patch+json")
    assert (reply.status, reply.warnings) == (200, ['299 - "unknown field \\"metadata.zz\\""',
                                                    '299 - "unknown field \\"spec.bogus\\""'])


def test_built_in_kind_has_unknown_fields_pruned_and_reported(server: Server) -> None:
    name = f"{server.namespace}-fv"
    body = {"metadata": {"name": name, "zz": 1}, "spec": {"bogus": 1}}
    reply = server.call("POST", "/api/v1/namespaces?fieldValidation=Strict", body)
    assert (reply.status, reply.body["message"]) == (400, 'Namespace in version "v1" cannot be handled as a '
                                                          'Namespace: strict decoding error: unknown field '
                                                          '"metadata.zz", unknown field "spec.bogus"')
    reply = server.call("POST", server.path("Lease"), {"metadata": {"name": "l1"},
                                                       "spec": {"holderIdentity": "a", "bogus": 1}})
    assert (reply.status, reply.body["spec"], reply.warnings) == (
        201, {"holderIdentity": "a"}, ['299 - "unknown field \\"spec.bogus\\""'])


def test_bad_field_validation_value_is_422(server: Server) -> None:
    status, body = server.request("POST", server.rb(query="fieldValidation=Bogus"), rb_body("rb1"))
    message = 'Unsupported value: "Bogus": supported values: "", "Ignore", "Strict", "Warn"'
    assert (status, body["message"], body["details"]) == (
        422, f'CreateOptions.meta.k8s.io "" is invalid: fieldValidation: {message}',
        {"group": "meta.k8s.io", "kind": "CreateOptions",
         "causes": [{"reason": "FieldValueNotSupported", "message": message, "field": "fieldValidation"}]})


# ---- managedFields and server-side apply -------------------------------------------------------------------------

APPLY = "application/apply-patch+yaml"


def owners(obj: dict[str, Any]) -> dict[tuple[str, str, str], Any]:
    """(manager, operation, subresource) -> fieldsV1 of an object's managedFields (time and apiVersion left out)."""
    found = {}
    for entry in obj["metadata"].get("managedFields", ()):
        assert entry["fieldsType"] == "FieldsV1" and entry["apiVersion"]
        assert TIMESTAMP.fullmatch(entry["time"]), entry
        found[(entry["manager"], entry["operation"], entry.get("subresource", ""))] = entry["fieldsV1"]
    return found


def applied(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": RB_API, "kind": "ResourceBinding", "metadata": {"name": name}, "spec": spec}


WEB = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}
RESOURCE_FIELDS = {"f:apiVersion": {}, "f:kind": {}, "f:name": {}}


def test_create_records_manager_as_update(server: Server) -> None:
    body = rb_body("rb1", replicas=2, placement={"clusterAffinity": {"clusterNames": ["m1"]}})
    body["metadata"]["labels"] = {"app": "web"}
    status, created = server.request("POST", server.rb(query="fieldManager=kubectl-create"), body)
    assert status == 201
    assert owners(created) == {("kubectl-create", "Update", ""): {
        "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
        "f:spec": {".": {}, "f:conflictResolution": {}, "f:replicas": {}, "f:resource": {".": {}, **RESOURCE_FIELDS},
                   "f:placement": {".": {}, "f:clusterAffinity": {".": {}, "f:clusterNames": {}}}}}}


def test_patch_by_another_manager_takes_fields_it_changes(server: Server) -> None:
    server.request("POST", server.rb(query="fieldManager=creator"), rb_body("rb1", replicas=2))
    status, patched = server.request("PATCH", server.rb("rb1", query="fieldManager=scaler"), {
        "metadata": {"labels": {"b": "c"}}, "spec": {"replicas": 3}})
    assert status == 200
    assert owners(patched) == {
        ("creator", "Update", ""): {"f:spec": {".": {}, "f:conflictResolution": {},
                                               "f:resource": {".": {}, **RESOURCE_FIELDS}}},
        ("scaler", "Update", ""): {"f:metadata": {"f:labels": {".": {}, "f:b": {}}}, "f:spec": {"f:replicas": {}}}}
    status, again = server.request("PATCH", server.rb("rb1", query="fieldManager=third"), {"spec": {"replicas": 3}})
    assert (status, again) == (200, patched)  # a write that changes nothing records nothing


def test_status_write_is_recorded_with_subresource(server: Server) -> None:
    server.request("POST", server.rb(query="fieldManager=creator"), rb_body("rb1"))
    status, body = server.request("PATCH", server.rb("rb1", "status", query="fieldManager=scheduler"), {
        "status": {"schedulerObservedGeneration": 1}, "spec": {"replicas": 9}})
    assert status == 200
    assert owners(body)[("scheduler", "Update", "status")] == {
        "f:status": {".": {}, "f:schedulerObservedGeneration": {}}}


def test_manager_defaults_to_user_agent_up_to_slash(server: Server) -> None:
    status, created = server.request("POST", server.rb(), rb_body("rb1"))
    assert (status, [key[0] for key in owners(created)]) == (201, ["Python-urllib"])


def test_server_side_apply_owns_exactly_config(server: Server) -> None:
    config = applied("rb1", resource=WEB, replicas=2, clusters=[{"name": "m1", "replicas": 2}])
    config["metadata"]["labels"] = {"a": "b"}
    reply = server.call("PATCH", server.rb("rb1", query="fieldManager=alice"), config, content_type=APPLY)
    assert reply.status == 201
    assert reply.body["spec"] == {**config["spec"], "conflictResolution": "Abort"}
    assert owners(reply.body) == {("alice", "Apply", ""): {
        "f:metadata": {"f:labels": {"f:a": {}}},
        "f:spec": {"f:clusters": {}, "f:replicas": {}, "f:resource": RESOURCE_FIELDS}}}
    reply = server.call("PATCH", server.rb("rb1", query="fieldManager=alice"), config, content_type=APPLY)
    assert (reply.status, reply.body["metadata"]["resourceVersion"]) == (200, server.request(
        "GET", server.rb("rb1"))[1]["metadata"]["resourceVersion"])


def test_apply_over_another_managers_field_is_409(server: Server) -> None:
    server.call("PATCH", server.rb("rb1", query="fieldManager=alice"), applied("rb1", resource=WEB, replicas=2),
                content_type=APPLY)
    server.request("PATCH", server.rb("rb1", query="fieldManager=scaler"), {"metadata": {"labels": {"x": "y"}}})
    change = applied("rb1", replicas=3)
    change["metadata"]["labels"] = {"x": "z"}
    reply = server.call("PATCH", server.rb("rb1", query="fieldManager=bob"), change, content_type=APPLY)
    assert (reply.status, {k: v for k, v in reply.body.items() if k != "details"}) == (409, {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": 'Apply failed with 2 conflicts: conflicts with "alice":\n- .spec.replicas\nconflicts with '
                   '"scaler" using work.karmada.io/v1alpha2:\n- .metadata.labels.x',
        "reason": "Conflict", "code": 409})
    # (kube-apiserver lists the causes in its map's order)
    assert causes(reply.body) == {
        (".spec.replicas", "FieldManagerConflict", 'conflict with "alice"'),
        (".metadata.labels.x", "FieldManagerConflict", 'conflict with "scaler" using work.karmada.io/v1alpha2')}
    reply = server.call("PATCH", server.rb("rb1", query="fieldManager=bob&force=true"), change, content_type=APPLY)
    assert (reply.status, reply.body["spec"]["replicas"], reply.body["metadata"]["labels"]) == (200, 3, {"x": "z"})
    assert owners(reply.body) == {
        ("alice", "Apply", ""): {"f:spec": {"f:resource": RESOURCE_FIELDS}},
        ("bob", "Apply", ""): {"f:metadata": {"f:labels": {"f:x": {}}}, "f:spec": {"f:replicas": {}}},
        ("scaler", "Update", ""): {"f:metadata": {"f:labels": {}}}}  # the labels map itself, which it added


def test_apply_removes_fields_only_it_owned(server: Server) -> None:
    config = applied("rb1", resource=WEB, replicas=2, clusters=[{"name": "m1"}],
                     placement={"clusterAffinity": {"clusterNames": ["m1"]}})
    config["metadata"]["labels"] = {"a": "b", "c": "d"}
    server.call("PATCH", server.rb("rb1", query="fieldManager=alice"), config, content_type=APPLY)
    server.call("PATCH", server.rb("rb1", query="fieldManager=bob&force=true"), applied("rb1", replicas=2),
                content_type=APPLY)
    smaller = applied("rb1", resource=WEB)
    smaller["metadata"]["labels"] = {"a": "b"}
    reply = server.call("PATCH", server.rb("rb1", query="fieldManager=alice"), smaller, content_type=APPLY)
    assert reply.status == 200
    assert reply.body["metadata"]["labels"] == {"a": "b"}
    assert reply.body["spec"] == {"resource": WEB, "replicas": 2, "conflictResolution": "Abort"}


def test_apply_to_status_owns_status_fields(server: Server) -> None:
    server.create_rb("rb1")
    status_config = {"apiVersion": RB_API, "kind": "ResourceBinding", "metadata": {"name": "rb1"},
                     "status": {"schedulerObservedGeneration": 1}}
    reply = server.call("PATCH", server.rb("rb1", "status", query="fieldManager=sched"), status_config,
                        content_type=APPLY)
    assert (reply.status, reply.body["status"]) == (200, {"schedulerObservedGeneration": 1})
    assert owners(reply.body)[("sched", "Apply", "status")] == {"f:status": {"f:schedulerObservedGeneration": {}}}
    reply = server.call("PATCH", server.rb("missing", "status", query="fieldManager=sched"),
                        {**status_config, "metadata": {"name": "missing"}}, content_type=APPLY)
    assert (reply.status, reply.body["reason"]) == (404, "NotFound")


def test_dry_run_apply_stores_nothing(server: Server) -> None:
    reply = server.call("PATCH", server.rb("rb1", query="fieldManager=alice&dryRun=All"),
                        applied("rb1", resource=WEB), content_type=APPLY)
    assert (reply.status, "resourceVersion" in reply.body["metadata"]) == (201, False)
    assert server.request("GET", server.rb("rb1"))[0] == 404


@pytest.mark.parametrize(("query", "content_type", "body", "status", "message"), [
    ("", APPLY, applied("rb1"), 422,
     'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch'),
    ("fieldManager=m&force=false", "application/merge-patch+json", {}, 422,
     'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch'),
    ("fieldManager=m", APPLY, {**applied("rb1"), "apiVersion": "work.karmada.io/v1alpha1"}, 400,
     "invalid object type: work.karmada.io/v1alpha1, Kind=ResourceBinding"),
    ("fieldManager=m", APPLY, {"spec": {}}, 400, "invalid object type: /, Kind="),
    ("fieldManager=m", APPLY, applied("other"), 400,
     "the name of the object (other) does not match the name on the URL (rb1)"),
    ("fieldManager=m", APPLY, applied("rb1", bogus=3), 500,
     "failed to create typed patch object (/rb1; work.karmada.io/v1alpha2, Kind=ResourceBinding): .spec.bogus: "
     "field not declared in schema"),
])
def test_untakeable_apply_refused_as_kube_does(
    server: Server, query: str, content_type: str, body: dict[str, Any], status: int, message: str,
) -> None:
    server.create_rb("rb1")
    reply = server.call("PATCH", server.rb("rb1", query=query), body, content_type=content_type)
    assert (reply.status, reply.body["message"]) == (status, message)


def test_put_of_what_was_read_keeps_managed_fields_and_adds_own(server: Server) -> None:
    server.request("POST", server.rb(query="fieldManager=creator"), rb_body("rb1", replicas=1))
    _, current = server.request("GET", server.rb("rb1"))
    current["spec"]["replicas"] = 4
    status, body = server.request("PUT", server.rb("rb1", query="fieldManager=editor"), current)
    assert status == 200
    assert owners(body)[("editor", "Update", "")] == {"f:spec": {"f:replicas": {}}}
    assert "f:replicas" not in owners(body)[("creator", "Update", "")]["f:spec"]


def test_built_in_kinds_record_managed_fields_too(server: Server) -> None:
    name = f"{server.namespace}-mf"
    status, ns = server.request("POST", "/api/v1/namespaces?fieldManager=kubectl-create",
                                {"metadata": {"name": name, "labels": {"team": "a"}}})
    assert (status, owners(ns)) == (201, {("kubectl-create", "Update", ""): {  # the name label is a default
        "f:metadata": {"f:labels": {".": {}, "f:kubernetes.io/metadata.name": {}, "f:team": {}}}}})
    lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l1"},
             "spec": {"holderIdentity": "a", "leaseDurationSeconds": 15}}
    reply = server.call("PATCH", server.path("Lease", "l1", query="fieldManager=elector"), lease, content_type=APPLY)
    assert (reply.status, owners(reply.body)) == (201, {("elector", "Apply", ""): {
        "f:spec": {"f:holderIdentity": {}, "f:leaseDurationSeconds": {}}}})


# ---- dry runs the first suite does not cover ------------------------------------------------------------------


def test_dry_run_delete_collection_deletes_nothing(server: Server) -> None:
    server.create_rb("rb1", replicas=1)
    server.create_rb("rb2")
    status, body = server.request("DELETE", server.rb(query="dryRun=All&labelSelector="))
    assert (status, body["kind"], names(body)) == (200, "ResourceBindingList", ["rb1", "rb2"])
    assert names(server.request("GET", server.rb())[1]) == ["rb1", "rb2"]


def test_dry_run_put_through_status_changes_nothing(server: Server) -> None:
    created = server.create_rb("rb1")
    status, body = server.request("PUT", server.rb("rb1", "status", query="dryRun=All"), {
        **created, "status": {"schedulerObservedGeneration": 4}})
    assert (status, body["status"], body["metadata"]["resourceVersion"]) == (
        200, {"schedulerObservedGeneration": 4}, created["metadata"]["resourceVersion"])
    assert server.request("GET", server.rb("rb1")) == (200, created)


def test_dry_run_create_answers_managed_fields_it_would_record(server: Server) -> None:
    status, body = server.request("POST", server.rb(query="dryRun=All&fieldManager=m"), rb_body("rb1"))
    assert (status, list(owners(body))) == (201, [("m", "Update", "")])


def test_dry_run_delete_body_deletes_nothing(server: Server) -> None:
    created = server.create_rb("rb1")
    status, body = server.request("DELETE", server.rb("rb1"), {"kind": "DeleteOptions", "apiVersion": "v1",
                                                            "propagationPolicy": "Background", "dryRun": ["All"]})
    assert (status, body["status"]) == (200, "Success")
    assert server.request("GET", server.rb("rb1")) == (200, created)
    status, body = server.request("DELETE", server.rb(), {"dryRun": ["All"]})
    assert (status, names(body)) == (200, ["rb1"])
    assert server.request("GET", server.rb("rb1")) == (200, created)


def test_server_side_takes_over_client_side(server: Server) -> None:
    last = {"apiVersion": RB_API, "kind": "ResourceBinding", "metadata": {"name": "rb1", "namespace": server.namespace},
            "spec": {"replicas": 2, "resource": WEB}}
    body = rb_body("rb1", replicas=2)
    body["metadata"]["annotations"] = {"kubectl.kubernetes.io/last-applied-configuration": json.dumps(last) + "\n"}
    server.request("POST", server.rb(query="fieldManager=kubectl-client-side-apply"), body)
    change = {**last, "spec": {"replicas": 7, "resource": WEB}}
    reply = server.call("PATCH", server.rb("rb1", query="fieldManager=other"), change, content_type=APPLY)
    assert (reply.status, reply.body["details"]["causes"][0]["message"]) == (
        409, 'conflict with "kubectl-client-side-apply" using work.karmada.io/v1alpha2')
    reply = server.call("PATCH", server.rb("rb1", query="fieldManager=kubectl"), change, content_type=APPLY)
    assert (reply.status, reply.body["spec"]["replicas"]) == (200, 7)
    annotation = reply.body["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]
    assert (json.loads(annotation), annotation.endswith("\n")) == (change, True)


# ---- what the server does not serve, answered as kube-apiserver answers it ------------------------------------

NOT_FOUND = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
             "message": "the server could not find the requested resource", "reason": "NotFound", "details": {},
             "code": 404}
NOT_ALLOWED = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
               "message": "the server does not allow this method on the requested resource",
               "reason": "MethodNotAllowed", "details": {}, "code": 405}


@pytest.mark.parametrize(("method", "path", "expected"), [
    ("GET", "/apis/example.com/v1/widgets", "plain"),
    ("GET", "/apis/work.karmada.io/v9/resourcebindings", "plain"),
    ("GET", "/apis/work.karmada.io/v1alpha2/namespaces/NS/widgets", "plain"),
    ("POST", "/apis/work.karmada.io/v1alpha2/resourcebindings", "plain"),
    ("GET", "/nowhere", "plain"),
    ("GET", "/api/v2/pods", NOT_FOUND),
    ("GET", "/apis/coordination.k8s.io/v1/widgets", NOT_FOUND),
    ("GET", "/apis/coordination.k8s.io/v9/leases", NOT_FOUND),
    ("DELETE", "/api/v1/namespaces/NS/events/e1/status", NOT_FOUND),
    ("PATCH", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews/x", NOT_FOUND),
    ("POST", "/api/v1/events", NOT_ALLOWED),
    ("PUT", "/api/v1/namespaces/NS/events", NOT_ALLOWED),
    ("DELETE", "/api/v1/namespaces", NOT_ALLOWED),
    ("GET", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", NOT_ALLOWED),
    ("PUT", "/apis/work.karmada.io/v1alpha2/namespaces/NS/resourcebindings",
     {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": "name must be provided",
      "reason": "BadRequest", "code": 400}),
])
def test_unserved_answered_as_kube_does(
    server: Server, method: str, path: str, expected: Any,
) -> None:
    reply = server.call(method, path.replace("NS", server.namespace), {"metadata": {"name": "x"}} if method in (
        "POST", "PUT", "PATCH") else None, content_type="application/merge-patch+json" if method == "PATCH" else None)
    if expected == "plain":
        assert (reply.status, reply.raw, reply.headers["content-type"]) == (404, b"404 page not found\n",
                                                                           "text/plain; charset=utf-8")
    else:
        assert (reply.status, reply.body) == (expected["code"], expected)


def test_subresource_custom_resource_lacks_is_404_naming_object(server: Server) -> None:
    server.create_rb("rb1")
    status, body = server.request("GET", server.rb("rb1", "scale"))
    assert (status, body["message"], body["details"]) == (
        404, 'resourcebindings.work.karmada.io "rb1" not found',
        {"name": "rb1", "group": "work.karmada.io", "kind": "resourcebindings"})


def test_strategic_merge_patch_merges_lists_by_key(server: Server) -> None:
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "est", "labels": {"a": "b"}},
               "spec": {"selector": {"app": "est"}, "ports": [{"name": "grpc", "port": 10352, "protocol": "TCP"},
                                                              {"name": "metrics", "port": 8080, "protocol": "TCP"}]}}
    server.request("POST", server.path("Service"), service)
    # what client-side kubectl apply sends when the metrics port moves to 9090 and a label changes
    patch = {"metadata": {"labels": {"a": None, "c": "d"}},
             "spec": {"$setElementOrder/ports": [{"port": 10352}, {"port": 9090}],
                      "ports": [{"name": "metrics", "port": 9090, "protocol": "TCP"},
                                {"$patch": "delete", "port": 8080}]}}
    reply = server.call("PATCH", server.path("Service", "est", query="fieldValidation=Strict"), patch,
                        content_type="application/strategic-merge-patch+json")
    assert reply.status == 200, reply.body
    assert reply.body["metadata"]["labels"] == {"c": "d"}
    assert [(p["name"], p["port"]) for p in reply.body["spec"]["ports"]] == [("grpc", 10352), ("metrics", 9090)]
    smp = "application/strategic-merge-patch+json"
    server.call("PATCH", server.path("Service", "est"), {"metadata": {"finalizers": ["example.com/a"]}},
                content_type=smp)
    reply = server.call("PATCH", server.path("Service", "est"), {
        "metadata": {"finalizers": ["example.com/b"], "$deleteFromPrimitiveList/finalizers": ["example.com/a"]}},
        content_type=smp)
    assert reply.body["metadata"]["finalizers"] == ["example.com/b"]
    server.request("PATCH", server.path("Service", "est"), {"metadata": {"finalizers": None}})

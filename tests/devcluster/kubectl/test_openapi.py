"""devcluster's OpenAPI documents beyond what tests/conformance compares with kube-apiserver: a CRD created at run
time is published at once, and v2 is JSON only."""

from __future__ import annotations

import copy

import yaml

from binding_scheduler.devcluster import DevCluster, default_crds_dir

PROTOBUF_V2 = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"


async def test_runtime_crds_gain_and_lose_documents(api: DevCluster) -> None:
    crd = yaml.safe_load((default_crds_dir() / "work.karmada.io_resourcebindings.yaml").read_text())
    crd = copy.deepcopy(crd)
    crd["metadata"]["name"] = "widgets.example.com"
    crd["spec"].update(group="example.com", names={"plural": "widgets", "singular": "widget", "kind": "Widget",
                                                   "listKind": "WidgetList"})
    status, _ = await api.client.create("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
    assert status == 201
    status, index = await api.client.get("/openapi/v3")
    assert "apis/example.com/v1alpha2" in index["paths"]
    status, doc = await api.client.get("/openapi/v3/apis/example.com/v1alpha2")
    assert status == 200
    assert "/apis/example.com/v1alpha2/namespaces/{namespace}/widgets/{name}/status" in doc["paths"]
    assert doc["components"]["schemas"]["com.example.v1alpha2.Widget"]["x-kubernetes-group-version-kind"] == [
        {"group": "example.com", "kind": "Widget", "version": "v1alpha2"}]
    status, v2 = await api.client.get("/openapi/v2")
    assert "com.example.v1alpha2.Widget" in v2["definitions"]
    assert (await api.client.delete("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com"))[
        0] == 200
    status, index = await api.client.get("/openapi/v3")
    assert "apis/example.com/v1alpha2" not in index["paths"]
    assert (await api.client.get("/openapi/v3/apis/example.com/v1alpha2"))[0] == 404


async def test_openapi_v2_in_protobuf_is_406_with_no_body(api: DevCluster) -> None:
    reply = await api.client.request("GET", "/openapi/v2", headers={"Accept": PROTOBUF_V2})
    assert (reply.status, reply.body) == (406, None)
    reply = await api.client.request("GET", "/openapi/v2", headers={"Accept": f"{PROTOBUF_V2}, application/json"})
    assert (reply.status, reply.headers["Content-Type"], reply.body["swagger"]) == (200, "application/json", "2.0")

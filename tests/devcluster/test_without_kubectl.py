"""devcluster without its kubectl package (binding-scheduler-devcluster without its `kubectl` extra): the core
hands kubectl's parts to `plain` (handoff.py), which serves the scheduler, Kopf and client-go and refuses what
only kubectl asks. The demo on it: tests/packaging/test_wheel.py, from the wheels."""

from __future__ import annotations

import dataclasses
import inspect
import json
import subprocess
import sys
from pathlib import Path

from binding_scheduler.devcluster import handoff, kubectl, plain

ROOT = Path(__file__).resolve().parents[2]

CALLED_BY_THE_CORE = {
    "Representation": ("of_object", "of_list", "watch_encoder"),
    "WriteOptions": ("read", "headers"),
    "FieldValidation": ("check", "headers"),
    "OpenAPIEndpoint": ("__init__", "answer"),
}
"""The methods of the package's classes the core calls (server.py, store.py)."""


def _shape(function: object) -> list[tuple[str, object, object]]:
    """A callable's parameters: name, kind and default (not the annotations: the package names its own aliases)."""
    return [(p.name, p.kind, p.default) for p in inspect.signature(function).parameters.values()]  # type: ignore[arg-type]


def test_plain_has_packages_names_and_signatures() -> None:
    assert handoff.INSTALLED and handoff.kubectl is kubectl  # the checkout has it
    assert sorted(plain.__all__) == sorted(kubectl.__all__)
    for name in kubectl.__all__:
        ours, theirs = getattr(plain, name), getattr(kubectl, name)
        if not inspect.isclass(theirs):
            assert _shape(ours) == _shape(theirs), name
            continue
        for method in CALLED_BY_THE_CORE[name]:
            assert _shape(getattr(ours, method)) == _shape(getattr(theirs, method)), f"{name}.{method}"
        if dataclasses.is_dataclass(theirs):
            fields = {field.name for field in dataclasses.fields(ours)}
            assert fields <= {field.name for field in dataclasses.fields(theirs)}, name


SCENARIO = """
import asyncio, json, sys
sys.modules["binding_scheduler.devcluster.kubectl"] = None  # as if not installed
from binding_scheduler.devcluster import DevCluster, handoff, resource_path

RB = resource_path("work.karmada.io/v1alpha2", "resourcebindings", "default")
LEASES = resource_path("coordination.k8s.io/v1", "leases", "default")
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"


async def main():
    seen = {"installed": handoff.INSTALLED}
    async with DevCluster() as api:
        client = api.client
        async with client.watch(RB) as watch:
            body = {"apiVersion": "work.karmada.io/v1alpha2", "kind": "ResourceBinding",
                    "metadata": {"name": "web"}, "spec": {"resource": {"apiVersion": "apps/v1",
                    "kind": "Deployment", "name": "web"}, "replicas": 2, "placment": {}}}
            reply = await client.request("POST", RB, body, params={"fieldValidation": "Strict"})
            seen["create"] = [reply.status, sorted(reply.body["spec"]), "managedFields" in reply.body["metadata"],
                              "Warning" in reply.headers]
            event = await watch.next()
            seen["watched"] = [event["type"], event["object"]["metadata"]["name"]]
        status, body = await client.patch(RB + "/web", {"spec": {"replicas": 3}})
        seen["merge patch"] = [status, body["spec"]["replicas"], "managedFields" in body["metadata"]]
        status, body = await client.patch(RB + "/web/status", {"status": {"conditions": []}})
        seen["status patch"] = status
        reply = await client.request("GET", RB + "/web", headers={"Accept": TABLE})
        seen["table asked"] = [reply.status, reply.body["kind"]]
        status, body = await client.create(LEASES, {"metadata": {"name": "l1", "bogus": 1},
                                                    "spec": {"holderIdentity": "a"}})
        seen["lease"] = [status, body["spec"], sorted(body["metadata"]) == sorted(
            ["name", "namespace", "uid", "resourceVersion", "creationTimestamp"])]
        status, body = await client.patch(RB + "/web", {"spec": {}}, "apply", fieldManager="me")
        seen["apply"] = [status, body["reason"]]
        status, body = await client.patch(LEASES + "/l1", {"spec": {}}, "strategic")
        seen["strategic"] = [status, body["reason"]]
        reply = await client.request("POST", LEASES, b"\\x00", content_type="application/vnd.kubernetes.protobuf")
        seen["protobuf"] = reply.status
        seen["openapi"] = (await client.get("/openapi/v3"))[0]
        review = resource_path("authorization.k8s.io/v1", "selfsubjectaccessreviews")
        seen["review"] = (await client.create(review, {"spec": {}}))[0]
    print(json.dumps(seen))


asyncio.run(main())
"""


def test_devcluster_serves_scheduler_without_kubectl_package() -> None:
    result = subprocess.run([sys.executable, "-c", SCENARIO], cwd=ROOT, capture_output=True, text=True,
                            timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    seen = json.loads(result.stdout)
    assert seen == {
        "installed": False,
        # no field validation: Strict refuses nothing; the CRD's schema still prunes (placment) and defaults
        "create": [201, ["conflictResolution", "replicas", "resource"], False, False],
        "watched": ["ADDED", "web"],
        "merge patch": [200, 3, False],
        "status patch": 200,
        "table asked": [200, "ResourceBinding"],  # plain JSON
        "lease": [201, {"holderIdentity": "a"}, True],  # a built-in kind: unknown metadata fields pruned
        "apply": [415, "UnsupportedMediaType"],
        "strategic": [415, "UnsupportedMediaType"],
        "protobuf": 415,
        "openapi": 404,
        "review": 404,
    }

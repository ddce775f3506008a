"""The built-in part of devcluster's OpenAPI documents, taken from a real kube-apiserver.

devcluster builds the documents of custom resources from their CRDs (as kube-apiserver's CRD builder does); those
of the built-in kinds it serves (Namespace, Event, Service, Lease, CustomResourceDefinition and the review kinds)
are kube-apiserver's own, trimmed to what devcluster serves. This module writes them, with the shared pieces the
CRD documents use (ObjectMeta and friends, the query parameters), to
`operator/binding_scheduler/devcluster/kubectl/openapi-builtins.yaml` (JSON, which YAML reads too: the package ships
`*.yaml`). Rewrite it after moving to another Kubernetes release:

    .venv/bin/python -m tests.devcluster.kubectl.openapi_snapshot      # starts a control plane (tests/realcluster)

`tests/conformance/test_conformance_kubectl.py` compares devcluster's documents with the real server's, so a stale
file fails there.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from binding_scheduler.devcluster.kubectl.openapi_crd import schema_refs

ROOT = Path(__file__).resolve().parents[3]
TARGET = ROOT / "operator" / "binding_scheduler" / "devcluster" / "kubectl" / "openapi-builtins.yaml"

# group/version -> the plurals devcluster serves there
SERVED: dict[str, tuple[str, ...]] = {
    "api/v1": ("namespaces", "events", "services"),
    "apis/coordination.k8s.io/v1": ("leases",),
    "apis/apiextensions.k8s.io/v1": ("customresourcedefinitions",),
    "apis/authorization.k8s.io/v1": ("selfsubjectaccessreviews", "selfsubjectrulesreviews"),
    "apis/authentication.k8s.io/v1": ("selfsubjectreviews",),
}
WHOLE = ("api", "apis", "version", "apis/coordination.k8s.io", "apis/apiextensions.k8s.io",
         "apis/authorization.k8s.io", "apis/authentication.k8s.io")
UNSERVED_SUBRESOURCES = ("finalize", "proxy")
CRD_SAMPLE = "apis/work.karmada.io/v1alpha2"  # a CRD document: its shared pieces are every CRD document's


def keep_path(gv: str, path: str) -> bool:
    prefix = f"/{gv}/"
    if path == prefix:
        return True
    rest = path[len(prefix):].split("/")
    if rest[0] == "watch":
        return False  # the deprecated watch paths: devcluster does not serve them
    if rest[:2] == ["namespaces", "{namespace}"] and len(rest) > 2:
        rest = rest[2:]
    return rest[0] in SERVED[gv] and not any(part in UNSERVED_SUBRESOURCES for part in rest)


def closure(roots: Iterable[str], table: dict[str, Any]) -> set[str]:
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name not in seen and name in table:
            seen.add(name)
            todo.extend(schema_refs(table[name]) - seen)
    return seen


def trim(gv: str, doc: dict[str, Any]) -> dict[str, Any]:
    """A group/version document with only the paths devcluster serves and the schemas they use."""
    paths = {path: item for path, item in doc["paths"].items() if keep_path(gv, path)}
    schemas = doc["components"]["schemas"]
    kept = closure(schema_refs(paths), schemas)
    return {**doc, "paths": paths, "components": {**doc["components"],
                                                  "schemas": {name: schemas[name] for name in sorted(kept)}}}


def crd_pieces(doc: dict[str, Any]) -> dict[str, Any]:
    """What every CRD document shares, from one of them."""
    schemas = doc["components"]["schemas"]
    parameters: dict[str, Any] = {}
    patch_parameters: dict[str, Any] = {}  # where a PATCH's parameter says something else (fieldManager)
    for item in doc["paths"].values():
        for method, operation in [("", item), *[(key, op) for key, op in item.items() if key != "parameters"]]:
            for parameter in operation.get("parameters", ()):
                if parameter["name"] != "name":
                    (patch_parameters if method == "patch" else parameters)[parameter["name"]] = parameter
    patch_parameters = {name: p for name, p in patch_parameters.items() if parameters.get(name) != p}
    kind = next(s for name, s in schemas.items() if not name.startswith("io.k8s.") and not name.endswith("List"))
    listing = next(s for name, s in schemas.items() if not name.startswith("io.k8s.") and name.endswith("List"))
    return {
        "info": doc["info"],
        "parameters": dict(sorted(parameters.items())),
        "patchParameters": dict(sorted(patch_parameters.items())),
        "schemas": {name: schema for name, schema in sorted(schemas.items()) if name.startswith("io.k8s.")},
        "apiVersion": kind["properties"]["apiVersion"], "kind": kind["properties"]["kind"],
        "metadata": kind["properties"]["metadata"]["description"],
        "listMetadata": listing["properties"]["metadata"]["description"],
    }


def snapshot(fetch: Callable[[str], dict[str, Any]]) -> dict[str, Any]:
    """The file's content, from `fetch(key)` = the real server's /openapi/v3/<key>."""
    return {
        "v3": {**{key: fetch(key) for key in WHOLE}, **{gv: trim(gv, fetch(gv)) for gv in SERVED}},
        "crd": crd_pieces(fetch(CRD_SAMPLE)),
    }


HEADER = ("# kube-apiserver v1.35.4's OpenAPI v3 documents for the built-in kinds devcluster serves, trimmed to them,\n"
          "# and the pieces its CRD documents share.\n"
          "# Written by tests/devcluster/kubectl/openapi_snapshot.py: do not edit.\n")


def write(data: dict[str, Any], target: Path = TARGET) -> None:
    target.write_text(HEADER + json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n",
                      encoding="utf-8")


def main() -> int:
    from testsupport.realcluster.controlplane import start, stop

    with tempfile.TemporaryDirectory() as tmp:
        state = Path(tmp) / "state"
        plane = start(state, tie_to_parent=True)
        try:
            client = plane.admin()
            write(snapshot(lambda key: dict(client.ok("GET", f"/openapi/v3/{key}"))))
        finally:
            stop(state)
    print(f"wrote {TARGET.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

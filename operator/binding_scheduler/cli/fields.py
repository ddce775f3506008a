"""Field validation of input files, as kube-apiserver's applies it to what kubectl sends: a field the kind's
schema (the Karmada CRDs the package carries) does not have is reported as `unknown field "spec.placment"`,
and an `apiVersion` the kind is not served at is refused. `simulate` and `explain` warn of unknown fields
(kubectl's default) and, with `--strict`, refuse them (kubectl's `--validate=strict`)."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from ..crds import default_crds_dir, load_crds, served_schemas
from ..crds.structural import unknown_fields as schema_unknown_fields

READ_AS = {"Cluster": "cluster.karmada.io/v1alpha1", "ResourceBinding": "work.karmada.io/v1alpha2",
           "ClusterResourceBinding": "work.karmada.io/v1alpha2"}
"""The one apiVersion the model reads each kind at (Karmada serves bindings at v1alpha1 too, in another shape)."""


@functools.cache
def _schemas() -> dict[str, dict[str, Any] | None]:
    """kind -> its structural schema at the version the model reads, from the CRDs the package carries."""
    found: dict[str, dict[str, Any] | None] = {}
    for crd in load_crds(default_crds_dir()):
        for (api_version, kind), schema in served_schemas(crd).items():
            if READ_AS.get(kind) == api_version:
                found[kind] = schema
    return found


def wrong_api_version(document: Mapping[str, Any]) -> str | None:
    """Why `document`'s apiVersion is not the one its kind is read at, or None."""
    kind, version = str(document.get("kind") or ""), document.get("apiVersion")
    wanted = READ_AS.get(kind)
    if wanted is None or version == wanted:
        return None
    return f"{version!r} is not read here: a {kind} is read as {wanted}"


def unknown_fields(document: Mapping[str, Any]) -> list[str]:
    """The fields of `document` its kind's schema does not have (`spec.placment`), in document order."""
    schema = _schemas().get(str(document.get("kind") or ""))
    if schema is None or wrong_api_version(document):
        return []
    return schema_unknown_fields(document, schema)

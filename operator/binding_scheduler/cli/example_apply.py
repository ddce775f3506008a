"""`binding-scheduler examples --apply`: put the bundled examples on an API server as their controllers would.

A plain `kubectl apply -f` of the examples (they carry their Namespaces) falls short once: the server drops every
Cluster's `status` (Cluster has a status subresource, so the main resource ignores it), which leaves each Cluster
without `Ready` or resources and every binding `NoClusterFit`. Here each namespace the documents name is applied
first (for files without their Namespaces), each object is applied server-side, and an object's status is then applied
through its `/status` subresource, as a cluster agent would report it. Server-side apply makes a second run an
update, not an error.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..kube import ApiClient, ApiError, NotFound, WriteGate, load_connection, resource_path
from ..model import ObjectMeta

FIELD_MANAGER = "binding-scheduler-examples"


@dataclass(frozen=True)
class Kind:
    """Where a kind of the examples lives on the API server."""

    group: str
    version: str
    plural: str
    namespaced: bool


KINDS: Mapping[str, Kind] = {
    "Namespace": Kind("", "v1", "namespaces", namespaced=False),
    "Cluster": Kind("cluster.karmada.io", "v1alpha1", "clusters", namespaced=False),
    "SchedulerConfiguration": Kind(
        "config.binding-scheduler.io", "v1alpha1", "schedulerconfigurations", namespaced=True),
    "ResourceBinding": Kind("work.karmada.io", "v1alpha2", "resourcebindings", namespaced=True),
    "ClusterResourceBinding": Kind("work.karmada.io", "v1alpha2", "clusterresourcebindings", namespaced=False),
}
"""In the order they are applied: what a binding's scheduling reads exists before the binding."""


class ApplyError(Exception):
    """An example could not be applied; the message names the object and the server's answer."""


def namespace_documents(documents: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """A Namespace for every namespace the documents' objects live in that they do not hold themselves, sorted by
    name."""
    documents = list(documents)
    held = {meta.name for d in documents if (meta := ObjectMeta.of(d)).kind == "Namespace"}
    names = sorted({meta.namespace for d in documents if (meta := ObjectMeta.of(d)).namespace} - held)
    return [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}} for name in names]


def object_path(document: Mapping[str, Any], subresource: str | None = None) -> str:
    meta = ObjectMeta.of(document)
    kind = KINDS.get(meta.kind)
    if kind is None:
        raise ApplyError(f"{meta.kind or '(no kind)'} {meta.name}: not a kind the examples hold")
    namespace = meta.namespace if kind.namespaced and meta.namespace else None
    return resource_path(kind.group, kind.version, kind.plural, namespace, meta.name, subresource)


def describe(document: Mapping[str, Any]) -> str:
    """`kubectl`'s `kind.group/name` form, with the namespace in front when there is one."""
    meta = ObjectMeta.of(document)
    kind = KINDS[meta.kind]
    qualified = f"{kind.plural.removesuffix('s')}.{kind.group}" if kind.group else kind.plural.removesuffix("s")
    prefix = f"{meta.namespace}/" if meta.namespace and kind.namespaced else ""
    return f"{prefix}{qualified}/{meta.name}"


def _apply_order(document: Mapping[str, Any]) -> tuple[int, str]:
    """By kind in `KINDS` order; Namespaces by name (the rest keep their order in the files)."""
    kind = document.get("kind")
    rank = list(KINDS).index(kind) if isinstance(kind, str) and kind in KINDS else len(KINDS)
    return rank, ObjectMeta.of(document).name if kind == "Namespace" else ""


async def apply_documents(
    client: ApiClient, documents: Sequence[Mapping[str, Any]], report: Callable[[str], None]
) -> None:
    """Apply the namespaces, then each document and its status, reporting one line per object as kubectl does.

    A SchedulerConfiguration is skipped with a note when its CRD is not installed (`simulate` and `run
    --config-file` read it from a file); any other refusal stops the run with an `ApplyError`.
    """
    ordered = sorted(documents, key=_apply_order)
    for document in [*namespace_documents(documents), *ordered]:
        spec_only = {key: value for key, value in document.items() if key != "status"}
        try:
            await client.apply(object_path(document), spec_only, field_manager=FIELD_MANAGER)
            if document.get("status"):
                status = {key: document[key] for key in ("apiVersion", "kind", "metadata", "status")}
                await client.apply(object_path(document, "status"), status, field_manager=FIELD_MANAGER)
        except NotFound as error:
            kind = KINDS[str(document["kind"])]
            unserved = f"the server does not serve {kind.group}/{kind.version} {kind.plural}"
            if document["kind"] != "SchedulerConfiguration":
                raise ApplyError(f"{describe(document)}: {unserved} (are Karmada's CRDs installed?)") from error
            report(f"{describe(document)} skipped: {unserved} "
                   f"(install crds/config.binding-scheduler.io_schedulerconfigurations.yaml)")
            continue
        except ApiError as error:
            raise ApplyError(f"{describe(document)}: {error}") from error
        report(f"{describe(document)} applied" + (" (with its status)" if document.get("status") else ""))


async def apply_examples(
    documents: Sequence[Mapping[str, Any]], report: Callable[[str], None], *, kubeconfig: str | None,
    context: str | None,
) -> None:
    """Apply `documents` to the API server of `kubeconfig` (or the usual lookup: $KUBECONFIG, ~/.kube/config,
    in-cluster)."""
    connection = load_connection(kubeconfig, context)
    async with ApiClient(connection, WriteGate(), user_agent="binding-scheduler-examples") as client:
        await apply_documents(client, documents, report)

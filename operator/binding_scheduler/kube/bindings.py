"""Fenced writes of a binding's schedule result and status, in exactly Karmada's merge-patch shapes.

Each body carries `metadata.resourceVersion`, the version the decision was computed from. In a JSON merge patch
it is a precondition: the API server answers 409 (`Conflict`) when the object changed since, and changes nothing.
So a decision computed from an old view can never overwrite a newer one, whoever sends it (docs/kube.md,
"Fenced binding writes"). Karmada itself sends these shapes without the version
(`pkg/scheduler/scheduler.go: patchScheduleResultForResourceBinding` and `patchBindingStatus`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..model.meta import ObjectMeta
from .client import ApiClient, resource_path

GROUP, VERSION = "work.karmada.io", "v1alpha2"
API_VERSION = f"{GROUP}/{VERSION}"
APPLIED_PLACEMENT = "policy.karmada.io/applied-placement"
BindingKind = Literal["ResourceBinding", "ClusterResourceBinding"]
PLURALS: dict[str, str] = {"ResourceBinding": "resourcebindings", "ClusterResourceBinding": "clusterresourcebindings"}


@dataclass(frozen=True, slots=True)
class BindingRef:
    """A ResourceBinding (namespaced) or a ClusterResourceBinding (cluster-scoped, `namespace` "")."""

    kind: BindingKind
    name: str
    namespace: str = ""

    def __post_init__(self) -> None:
        if self.kind not in PLURALS:
            raise ValueError(f"not a binding kind: {self.kind!r}")
        if not self.name:
            raise ValueError("a binding reference needs a name")
        if self.kind == "ResourceBinding" and not self.namespace:
            raise ValueError(f"ResourceBinding {self.name!r} needs a namespace")
        if self.kind == "ClusterResourceBinding" and self.namespace:
            raise ValueError(f"ClusterResourceBinding {self.name!r} is cluster-scoped, not in {self.namespace!r}")

    @property
    def plural(self) -> str:
        return PLURALS[self.kind]

    def path(self, subresource: str | None = None) -> str:
        return resource_path(GROUP, VERSION, self.plural, self.namespace or None, self.name, subresource)

    @property
    def key(self) -> str:
        """`namespace/name`, or `name` for a cluster-scoped binding."""
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    @classmethod
    def of(cls, obj: Mapping[str, Any]) -> BindingRef:
        """The reference of a binding object (its `kind` and `metadata`)."""
        return cls.of_meta(ObjectMeta.of(obj))

    @classmethod
    def of_meta(cls, meta: ObjectMeta) -> BindingRef:
        if meta.kind == "ResourceBinding":
            return cls("ResourceBinding", meta.name, meta.namespace)
        if meta.kind == "ClusterResourceBinding":
            return cls("ClusterResourceBinding", meta.name, meta.namespace)
        raise ValueError(f"not a binding kind: {meta.kind!r}" if meta.kind else "not a binding: the object has no kind")


def target_clusters(clusters: Sequence[Mapping[str, Any]] | None) -> list[dict[str, Any]] | None:
    """`spec.clusters` as Karmada writes it: None when empty (the patch writes `null`), `replicas` omitted
    when 0 (Go's `omitempty`), so a Duplicated non-workload target is `{"name": "m1"}`."""
    if not clusters:
        return None
    written: list[dict[str, Any]] = []
    for cluster in clusters:
        item = dict(cluster)
        if not item.get("replicas"):
            item.pop("replicas", None)
        written.append(item)
    return written


def schedule_result_patch(
    resource_version: str,
    placement_json: str | None,
    clusters: Sequence[Mapping[str, Any]] | None,
    drop_annotations: Sequence[str] = (),
) -> dict[str, Any]:
    """The body of the schedule-result write. `placement_json` None leaves the annotation untouched;
    `drop_annotations` are removed in the same write."""
    metadata: dict[str, Any] = {"resourceVersion": resource_version}
    annotations: dict[str, str | None] = dict.fromkeys(drop_annotations)
    if placement_json is not None:
        annotations[APPLIED_PLACEMENT] = placement_json
    if annotations:
        metadata["annotations"] = annotations
    return {"metadata": metadata, "spec": {"clusters": target_clusters(clusters)}}


async def patch_schedule_result(
    client: ApiClient,
    ref: BindingRef,
    resource_version: str,
    placement_json: str | None,
    clusters: Sequence[Mapping[str, Any]] | None,
    drop_annotations: Sequence[str] = (),
) -> dict[str, Any]:
    """Write `spec.clusters` and the applied-placement annotation (dropping `drop_annotations`), if the binding is
    still at `resource_version` (else `Conflict`). Returns the updated object (new resourceVersion and
    generation)."""
    _require_version(resource_version)
    body = schedule_result_patch(resource_version, placement_json, clusters, drop_annotations)
    return await client.patch_merge(ref.path(), body)


async def patch_annotations(
    client: ApiClient, ref: BindingRef, resource_version: str, annotations: Mapping[str, str | None]
) -> dict[str, Any]:
    """Set (or, with None, drop) annotations, if the binding is still at `resource_version` (else `Conflict`).
    Metadata only: the generation stays."""
    _require_version(resource_version)
    body = {"metadata": {"resourceVersion": resource_version, "annotations": dict(annotations)}}
    return await client.patch_merge(ref.path(), body)


async def patch_graceful_eviction(
    client: ApiClient,
    ref: BindingRef,
    resource_version: str,
    clusters: Sequence[Mapping[str, Any]],
    eviction_tasks: Sequence[Mapping[str, Any]],
) -> dict[str, Any]:
    """Evict the binding from a cluster as Karmada's `GracefulEvictCluster` leaves it: `spec.clusters` without that
    cluster and `spec.gracefulEvictionTasks` with a task for it, if the binding is still at `resource_version`
    (else `Conflict`). Both lists are written whole (merge-patch semantics)."""
    _require_version(resource_version)
    body = {"metadata": {"resourceVersion": resource_version},
            "spec": {"clusters": target_clusters(clusters), "gracefulEvictionTasks": [dict(t) for t in eviction_tasks]}}
    return await client.patch_merge(ref.path(), body)


async def patch_status(
    client: ApiClient, ref: BindingRef, resource_version: str, status: Mapping[str, Any]
) -> None:
    """Merge `status` into the `/status` subresource, if the binding is still at `resource_version`. The answer
    (the whole binding) is not read: the watch brings the same object to the store.

    Merge-patch semantics: lists (such as `conditions`) are replaced whole, so pass the full list."""
    _require_version(resource_version)
    body = {"metadata": {"resourceVersion": resource_version}, "status": dict(status)}
    await client.patch_merge(ref.path("status"), body, answer=False)


def _require_version(resource_version: str) -> None:
    if not resource_version:
        raise ValueError("a fenced write needs the resourceVersion its decision was computed from")

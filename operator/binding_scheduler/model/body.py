"""A lazy view of a binding's body as the API server sends it (modelled on Kopf's `Meta`/`Spec` views): every read
of a field the intake needs before (or without) parsing the binding whole goes through it, with one default per
field, so a field that is absent or of the wrong type means the same everywhere. Nothing is read until asked; the
view never raises (the API server's schema keeps wrong types out, and a binding that slips through still has a
view for the line that reports it)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from .binding import DEFAULT_SCHEDULER_NAME
from .meta import ObjectMeta

EMPTY: Mapping[str, Any] = MappingProxyType({})


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else EMPTY


def _items(value: object) -> list[Mapping[str, Any]]:
    return [item for item in value if isinstance(item, Mapping)] if isinstance(value, list) else []


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


class BindingBody:
    """A ResourceBinding or ClusterResourceBinding body, read field by field."""

    __slots__ = ("body",)

    def __init__(self, body: Mapping[str, Any] | None) -> None:
        self.body: Mapping[str, Any] = body if body is not None else EMPTY

    @property
    def meta(self) -> ObjectMeta:
        return ObjectMeta.of(self.body)

    @property
    def metadata(self) -> Mapping[str, Any]:
        return _mapping(self.body.get("metadata"))

    @property
    def labels(self) -> Mapping[str, Any]:
        return _mapping(self.metadata.get("labels"))

    @property
    def annotations(self) -> Mapping[str, Any]:
        return _mapping(self.metadata.get("annotations"))

    @property
    def spec(self) -> Mapping[str, Any]:
        return _mapping(self.body.get("spec"))

    @property
    def status(self) -> Mapping[str, Any]:
        return _mapping(self.body.get("status"))

    @property
    def scheduler_name(self) -> str:
        """`spec.schedulerName`; empty or absent is Karmada's `default-scheduler`."""
        return _text(self.spec.get("schedulerName")) or DEFAULT_SCHEDULER_NAME

    @property
    def scheduling_suspended(self) -> bool:
        return _mapping(self.spec.get("suspension")).get("scheduling") is True

    @property
    def priority(self) -> int:
        """`spec.schedulePriority.priority`, 0 when unset."""
        value = _mapping(self.spec.get("schedulePriority")).get("priority")
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    @property
    def targets(self) -> list[Mapping[str, Any]]:
        """`spec.clusters` as the body holds it (entries that are objects)."""
        return _items(self.spec.get("clusters"))

    @property
    def target_names(self) -> list[str]:
        """The names in `spec.clusters`, in order (entries without a name left out)."""
        return [name for target in self.targets if (name := _text(target.get("name")))]

    @property
    def eviction_tasks(self) -> list[Mapping[str, Any]]:
        return _items(self.spec.get("gracefulEvictionTasks"))

    @property
    def affinity_groups(self) -> tuple[str, str]:
        """`spec.workloadAffinityGroups`: its affinity group and anti-affinity group ("" when unset)."""
        groups = _mapping(self.spec.get("workloadAffinityGroups"))
        return _text(groups.get("affinityGroup")), _text(groups.get("antiAffinityGroup"))

    @property
    def healthy_clusters(self) -> set[str]:
        """The clusters whose `status.aggregatedStatus` item reports the workload Healthy."""
        return {name for item in _items(self.status.get("aggregatedStatus"))
                if item.get("health") == "Healthy" and (name := _text(item.get("clusterName")))}

    def condition_true(self, type_: str) -> bool:
        """The first `status.conditions` item of `type_` has status True (meta.IsStatusConditionTrue)."""
        for condition in _items(self.status.get("conditions")):
            if condition.get("type") == type_:
                return condition.get("status") == "True"
        return False


def raw_spec(body: Mapping[str, Any]) -> Any:
    """The body's `spec` object itself (not a view): a store compares it by identity to know a parse still holds."""
    return body.get("spec")


def raw_version(body: Mapping[str, Any]) -> Any:
    """`metadata.resourceVersion` as the body holds it, read without a metadata view (a scan of every stored
    binding reads it once each)."""
    metadata = body.get("metadata")
    return metadata.get("resourceVersion") if isinstance(metadata, Mapping) else None


def raw_targets(spec: Any) -> Any:
    """A raw `spec`'s `clusters` as it holds them (for a parse that reuses entries it knows)."""
    return spec.get("clusters") if isinstance(spec, Mapping) else None


def equal_but_clusters(spec: Any, other: Any) -> bool:
    """Do two `spec` objects differ in `spec.clusters` at most? Then a parse of one serves the other for
    everything else: a spec write of ours changes only the clusters, and re-parsing the whole binding after each
    (placement and all) made requeueing 50,000 bindings after a cluster change block the event loop for a
    minute."""
    if not isinstance(spec, Mapping) or not isinstance(other, Mapping) or spec.keys() - {"clusters"} != (
        other.keys() - {"clusters"}
    ):
        return False
    return all(value == other[key] for key, value in spec.items() if key != "clusters")


def compacted(
    body: Mapping[str, Any],
    previous: Mapping[str, Any] | None,
    share: Callable[[list[Any]], list[Any]],
) -> Mapping[str, Any]:
    """`body` as a store keeps it: no managedFields; the previous body's `spec` object when the spec is unchanged
    (a status write: nothing new to hold or parse), else its `spec.clusters` entries passed through `share` (which
    returns entries held already where it has equal ones)."""
    metadata = body.get("metadata")
    if isinstance(metadata, Mapping) and "managedFields" in metadata:
        body = {**body, "metadata": {k: v for k, v in metadata.items() if k != "managedFields"}}
    spec = body.get("spec")
    kept = previous.get("spec") if previous is not None else None
    if kept is not None and spec is not kept and spec == kept:
        return {**body, "spec": kept}
    if isinstance(spec, Mapping) and isinstance(spec.get("clusters"), list) and spec["clusters"]:
        body = {**body, "spec": {**spec, "clusters": share(spec["clusters"])}}
    return body

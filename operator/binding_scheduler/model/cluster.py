"""Cluster (`cluster.karmada.io/v1alpha1`): the fields the scheduler reads."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from .errors import ValidationError, show
from .fields import EMPTY_MAP, Fields, FrozenMap
from .quantity import EMPTY_RESOURCES, Quantity, ResourceList, parse_quantity, parse_resource_list
from .selectors import Taint, parse_taint

SYNC_MODES = ("Push", "Pull")


@dataclass(frozen=True, slots=True)
class ResourceRange:
    name: str
    min: Quantity
    max: Quantity


@dataclass(frozen=True, slots=True)
class ResourceModel:
    grade: int
    ranges: tuple[ResourceRange, ...]


@dataclass(frozen=True, slots=True)
class ResourceSummary:
    allocatable: ResourceList = EMPTY_RESOURCES
    allocating: ResourceList = EMPTY_RESOURCES
    allocated: ResourceList = EMPTY_RESOURCES
    allocatable_modelings: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True, slots=True)
class APIEnablement:
    group_version: str
    kinds: frozenset[str]


@dataclass(frozen=True, slots=True)
class Cluster:
    name: str
    labels: Mapping[str, str] = EMPTY_MAP
    generation: int = 0
    deletion_timestamp: datetime | None = None
    sync_mode: str = "Push"
    provider: str = ""
    region: str = ""
    zone: str = ""
    zones: tuple[str, ...] = ()
    taints: tuple[Taint, ...] = ()
    resource_models: tuple[ResourceModel, ...] = ()
    api_enablements: tuple[APIEnablement, ...] = ()
    complete_api_enablements: bool = False
    resource_summary: ResourceSummary | None = None
    pseudo_labels: Mapping[str, str] = field(default=EMPTY_MAP, compare=False)

    def __hash__(self) -> int:
        # Equal clusters have equal names; hashing only the name keeps per-pass memo lookups cheap.
        return hash(self.name)

    @property
    def deleting(self) -> bool:
        return self.deletion_timestamp is not None

    def api_enabled(self, group_version: str, kind: str) -> bool:
        return any(e.group_version == group_version and kind in e.kinds for e in self.api_enablements)


def _parse_models(spec: Fields) -> tuple[ResourceModel, ...]:
    models = []
    for item in spec.objects("resourceModels"):
        ranges = tuple(
            ResourceRange(
                name=r.required_str("name"),
                min=parse_quantity(r.raw("min") if r.has("min") else _required(r, "min"), r.at("min")),
                max=parse_quantity(r.raw("max") if r.has("max") else _required(r, "max"), r.at("max")),
            )
            for r in item.objects("ranges")
        )
        models.append(ResourceModel(grade=item.integer("grade", minimum=0), ranges=ranges))
    return tuple(models)


def _required(fields: Fields, key: str) -> Any:
    raise ValidationError(fields.at(key), "is required")


def _parse_summary(status: Fields) -> ResourceSummary | None:
    summary = status.obj("resourceSummary")
    if summary is None:
        return None
    return ResourceSummary(
        allocatable=parse_resource_list(summary.raw("allocatable"), summary.at("allocatable")),
        allocating=parse_resource_list(summary.raw("allocating"), summary.at("allocating")),
        allocated=parse_resource_list(summary.raw("allocated"), summary.at("allocated")),
        allocatable_modelings=tuple(
            (m.integer("grade", minimum=0), m.integer("count")) for m in summary.objects("allocatableModelings")
        ),
    )


def parse_cluster(data: Any) -> Cluster:
    """Parse a Cluster from its JSON form; raises `ValidationError` (and only that)."""
    root = Fields(data, "")
    kind = root.text("kind", "Cluster")
    if kind != "Cluster":
        raise ValidationError("kind", f"{show(kind)} is not Cluster")
    meta = root.required_obj("metadata")
    spec = root.obj("spec") or Fields({}, "spec")
    status = root.obj("status") or Fields({}, "status")
    provider, region = spec.text("provider"), spec.text("region")
    pseudo = {k: v for k, v in (("provider", provider), ("region", region)) if v}
    return Cluster(
        name=meta.required_str("name"),
        labels=meta.string_map("labels"),
        generation=meta.integer("generation"),
        deletion_timestamp=meta.time("deletionTimestamp"),
        sync_mode=spec.enum("syncMode", SYNC_MODES, "Push"),
        provider=provider,
        region=region,
        zone=spec.text("zone"),
        zones=spec.strings("zones"),
        taints=tuple(parse_taint(t) for t in spec.objects("taints")),
        resource_models=_parse_models(spec),
        api_enablements=tuple(
            APIEnablement(
                group_version=e.required_str("groupVersion"),
                kinds=frozenset(r.text("kind") for r in e.objects("resources")),
            )
            for e in status.objects("apiEnablements")
        ),
        complete_api_enablements=any(
            c.text("type") == "CompleteAPIEnablements" and c.text("status") == "True"
            for c in status.objects("conditions")
        ),
        resource_summary=_parse_summary(status),
        pseudo_labels=FrozenMap(pseudo),
    )

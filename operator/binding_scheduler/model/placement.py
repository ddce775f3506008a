"""Placement (`policy.karmada.io/v1alpha1`) and its parts, with the defaults Karmada's webhook applies."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from .errors import ValidationError
from .fields import Fields, FrozenMap
from .selectors import (
    NODE_SELECTOR_OPERATORS,
    LabelSelector,
    Requirement,
    Toleration,
    parse_label_selector,
    parse_requirement,
    parse_toleration,
    requirement_to_dict,
)


class ReplicaSchedulingType(StrEnum):
    DUPLICATED = "Duplicated"
    DIVIDED = "Divided"


class DivisionPreference(StrEnum):
    AGGREGATED = "Aggregated"
    WEIGHTED = "Weighted"


class SpreadField(StrEnum):
    CLUSTER = "cluster"
    REGION = "region"
    ZONE = "zone"
    PROVIDER = "provider"


DYNAMIC_WEIGHT_AVAILABLE_REPLICAS = "AvailableReplicas"


@dataclass(frozen=True, slots=True)
class ClusterAffinity:
    """Which clusters a placement may use; every set part must hold (ClusterMatches)."""

    label_selector: LabelSelector | None = None
    field_selector: tuple[Requirement, ...] | None = None
    cluster_names: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    _hash: int = field(default=0, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "_hash", hash((self.label_selector, self.field_selector, self.cluster_names, self.exclude))
        )

    def __hash__(self) -> int:
        return self._hash

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.label_selector is not None:
            out["labelSelector"] = self.label_selector.to_dict()
        if self.field_selector is not None:
            out["fieldSelector"] = {"matchExpressions": [requirement_to_dict(r) for r in self.field_selector]}
        if self.cluster_names:
            out["clusterNames"] = list(self.cluster_names)
        if self.exclude:
            out["exclude"] = list(self.exclude)
        return out


def parse_cluster_affinity(fields: Fields) -> ClusterAffinity:
    label_fields = fields.obj("labelSelector")
    field_fields = fields.obj("fieldSelector")
    return ClusterAffinity(
        label_selector=parse_label_selector(label_fields) if label_fields is not None else None,
        field_selector=(
            tuple(parse_requirement(e, NODE_SELECTOR_OPERATORS) for e in field_fields.objects("matchExpressions"))
            if field_fields is not None
            else None
        ),
        cluster_names=fields.strings("clusterNames"),
        exclude=fields.strings("exclude"),
    )


def _affinity_name(fields: Fields) -> str:
    name = fields.required_str("affinityName")
    if len(name) > 32:
        raise ValidationError(fields.at("affinityName"), f"{name!r} is longer than 32 characters")
    return name


@dataclass(frozen=True, slots=True)
class OverflowAffinity:
    affinity_name: str
    affinity: ClusterAffinity

    def to_dict(self) -> dict[str, Any]:
        return {"affinityName": self.affinity_name, **self.affinity.to_dict()}


@dataclass(frozen=True, slots=True)
class ClusterAffinityTerm:
    affinity_name: str
    affinity: ClusterAffinity
    overflow_affinities: tuple[OverflowAffinity, ...] | None = None

    def to_dict(self) -> dict[str, Any]:
        out = {"affinityName": self.affinity_name, **self.affinity.to_dict()}
        if self.overflow_affinities:
            out["overflowAffinities"] = [o.to_dict() for o in self.overflow_affinities]
        return out


def parse_affinity_term(fields: Fields) -> ClusterAffinityTerm:
    overflow = fields.objects("overflowAffinities")
    return ClusterAffinityTerm(
        affinity_name=_affinity_name(fields),
        affinity=parse_cluster_affinity(fields),
        overflow_affinities=(
            tuple(OverflowAffinity(_affinity_name(o), parse_cluster_affinity(o)) for o in overflow)
            if overflow
            else None
        ),
    )


@dataclass(frozen=True, slots=True)
class SpreadConstraint:
    spread_by_field: str = ""
    spread_by_label: str = ""
    max_groups: int = 0
    min_groups: int = 1

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.spread_by_field:
            out["spreadByField"] = self.spread_by_field
        if self.spread_by_label:
            out["spreadByLabel"] = self.spread_by_label
        if self.max_groups:
            out["maxGroups"] = self.max_groups
        if self.min_groups:
            out["minGroups"] = self.min_groups
        return out


def parse_spread_constraint(fields: Fields) -> SpreadConstraint:
    by_field = fields.enum("spreadByField", [f.value for f in SpreadField])
    by_label = fields.text("spreadByLabel")
    if by_field and by_label:
        raise ValidationError(fields.path, "spreadByLabel and spreadByField must not be set together")
    return SpreadConstraint(
        spread_by_field=by_field if (by_field or by_label) else SpreadField.CLUSTER.value,
        spread_by_label=by_label,
        max_groups=fields.integer("maxGroups", minimum=0),
        min_groups=fields.integer("minGroups", minimum=0) or 1,
    )


@dataclass(frozen=True, slots=True)
class StaticClusterWeight:
    target_cluster: ClusterAffinity
    weight: int

    def to_dict(self) -> dict[str, Any]:
        return {"targetCluster": self.target_cluster.to_dict(), "weight": self.weight}


@dataclass(frozen=True, slots=True)
class WeightPreference:
    static_weight_list: tuple[StaticClusterWeight, ...] = ()
    dynamic_weight: str = ""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.static_weight_list:
            out["staticWeightList"] = [w.to_dict() for w in self.static_weight_list]
        if self.dynamic_weight:
            out["dynamicWeight"] = self.dynamic_weight
        return out


@dataclass(frozen=True, slots=True)
class ReplicaScheduling:
    type: ReplicaSchedulingType = ReplicaSchedulingType.DIVIDED
    division_preference: DivisionPreference | None = DivisionPreference.WEIGHTED
    weight_preference: WeightPreference | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"replicaSchedulingType": self.type.value}
        if self.division_preference is not None:
            out["replicaDivisionPreference"] = self.division_preference.value
        if self.weight_preference is not None:
            out["weightPreference"] = self.weight_preference.to_dict()
        return out


def parse_replica_scheduling(fields: Fields) -> ReplicaScheduling:
    kind = ReplicaSchedulingType(
        fields.enum("replicaSchedulingType", [t.value for t in ReplicaSchedulingType]) or "Divided"
    )
    preference_text = fields.enum("replicaDivisionPreference", [p.value for p in DivisionPreference])
    preference = DivisionPreference(preference_text) if preference_text else None
    if kind is ReplicaSchedulingType.DIVIDED and preference is None:
        preference = DivisionPreference.WEIGHTED
    weight_fields = fields.obj("weightPreference")
    weights = None
    if weight_fields is not None:
        static = tuple(
            StaticClusterWeight(
                target_cluster=parse_cluster_affinity(item.required_obj("targetCluster")),
                weight=item.integer("weight", minimum=1) if item.has("weight") else _required_weight(item),
            )
            for item in weight_fields.objects("staticWeightList")
        )
        weights = WeightPreference(
            static_weight_list=static,
            dynamic_weight=weight_fields.enum("dynamicWeight", [DYNAMIC_WEIGHT_AVAILABLE_REPLICAS]),
        )
    return ReplicaScheduling(type=kind, division_preference=preference, weight_preference=weights)


def _required_weight(item: Fields) -> int:
    raise ValidationError(item.at("weight"), "is required")


@dataclass(frozen=True, slots=True)
class Placement:
    """Where a binding may go and how its replicas are divided.

    `None` and an empty list mean the same thing everywhere (a deliberate fix of Karmada's nil/empty
    distinction): an empty `clusterAffinities` is stored as `None`.
    """

    cluster_affinity: ClusterAffinity | None = None
    cluster_affinities: tuple[ClusterAffinityTerm, ...] | None = None
    cluster_tolerations: tuple[Toleration, ...] = ()
    spread_constraints: tuple[SpreadConstraint, ...] = ()
    replica_scheduling: ReplicaScheduling | None = None
    workload_affinity: Mapping[str, Any] | None = None

    @property
    def scheduling_type(self) -> ReplicaSchedulingType:
        """Karmada's `ReplicaSchedulingType()`: Duplicated when replicaScheduling is absent."""
        if self.replica_scheduling is None:
            return ReplicaSchedulingType.DUPLICATED
        return self.replica_scheduling.type

    def term(self, name: str) -> ClusterAffinityTerm | None:
        for term in self.cluster_affinities or ():
            if term.affinity_name == name:
                return term
        return None

    def spread(self, field: SpreadField) -> SpreadConstraint | None:
        """The constraint on `field`; the last one when several are (a policy may not repeat a field, but a
        binding created directly may, and Karmada then reads the last: it keeps them in a map by field, and
        its group scores take the minGroups of the last one it loops over)."""
        found = None
        for constraint in self.spread_constraints:
            if constraint.spread_by_field == field.value:
                found = constraint
        return found

    def to_dict(self) -> dict[str, Any]:
        """The placement as Go's `json.Marshal` writes it (field order of the Go type, empty fields left out)."""
        out: dict[str, Any] = {}
        if self.cluster_affinity is not None:
            out["clusterAffinity"] = self.cluster_affinity.to_dict()
        if self.cluster_affinities:
            out["clusterAffinities"] = [t.to_dict() for t in self.cluster_affinities]
        if self.cluster_tolerations:
            out["clusterTolerations"] = [t.to_dict() for t in self.cluster_tolerations]
        if self.spread_constraints:
            out["spreadConstraints"] = [s.to_dict() for s in self.spread_constraints]
        if self.replica_scheduling is not None:
            out["replicaScheduling"] = self.replica_scheduling.to_dict()
        if self.workload_affinity:
            out["workloadAffinity"] = dict(self.workload_affinity)
        return out


def parse_placement(fields: Fields) -> Placement:
    affinity_fields = fields.obj("clusterAffinity")
    terms = tuple(parse_affinity_term(t) for t in fields.objects("clusterAffinities"))
    if affinity_fields is not None and terms:
        raise ValidationError(fields.path, "clusterAffinity and clusterAffinities must not be set together")
    names = [t.affinity_name for t in terms]
    for i, name in enumerate(names):
        if name in names[:i]:
            raise ValidationError(f"{fields.at('clusterAffinities')}[{i}].affinityName", f"duplicate name {name!r}")
    spreads = tuple(parse_spread_constraint(s) for s in fields.objects("spreadConstraints"))
    scheduling_fields = fields.obj("replicaScheduling")
    workload = fields.obj("workloadAffinity")
    return Placement(
        cluster_affinity=parse_cluster_affinity(affinity_fields) if affinity_fields is not None else None,
        cluster_affinities=terms or None,
        cluster_tolerations=tuple(parse_toleration(t) for t in fields.objects("clusterTolerations")),
        spread_constraints=spreads,
        replica_scheduling=parse_replica_scheduling(scheduling_fields) if scheduling_fields is not None else None,
        workload_affinity=FrozenMap(workload.data) if workload is not None and workload.data else None,
    )

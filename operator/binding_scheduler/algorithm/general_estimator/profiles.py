"""What a cluster offers, what one replica asks and what a set of components asks, as integers: the forms the
estimates compute with, built once per object (`EstimatorCache` keeps them).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction

from ...model import Cluster, Quantity
from ...model.cluster import ResourceSummary
from ..resource_models import CPU, PODS, Demand, ModelError, NodeGroups, node_groups

MEMO_LIMIT = 64
"""Answers a cluster's profile memoises per kind (replicas, component sets) before it starts over."""


@dataclass(slots=True)
class ClusterProfile:
    """Everything a Cluster offers, as integers."""

    summary: ResourceSummary
    allowed_pods: int
    """allocatable − allocated − allocating pods, each rounded up first; may be ≤ 0."""
    available: dict[str, int]
    """Per resource in `allocatable`: allocatable − allocated − allocating, cpu in milli, others whole units."""
    set_available: dict[str, int]
    """The same, in the component-set units (see the QUIRK in `max_available_component_sets`)."""
    groups: NodeGroups | None
    """The virtual nodes, or None when the model path does not apply (no modelings, or the models are broken)."""
    replica_memo: dict[int, int] = field(default_factory=dict)
    set_memo: dict[int, int] = field(default_factory=dict)


def _value(resources: Mapping[str, Quantity], name: str) -> int:
    quantity = resources.get(name)
    return 0 if quantity is None else quantity.value()


def _ceil(value: Fraction, scale: int = 1) -> int:
    """ceil(value × scale) in integers (Fraction multiplication is slow)."""
    return -((-value.numerator * scale) // value.denominator)


def build_cluster_profile(cluster: Cluster) -> ClusterProfile | None:
    summary = cluster.resource_summary
    if summary is None:
        return None
    allowed_pods = (
        _value(summary.allocatable, PODS) - _value(summary.allocated, PODS) - _value(summary.allocating, PODS)
    )
    available: dict[str, int] = {}
    set_available: dict[str, int] = {}
    for name, allocatable in summary.allocatable.items():
        amount = allocatable.amount
        used = summary.allocated.get(name)
        if used is not None:
            amount -= used.amount
        used = summary.allocating.get(name)
        if used is not None:
            amount -= used.amount
        whole, milli = _ceil(amount), _ceil(amount, 1000)
        available[name] = milli if name == CPU else whole
        # The difference keeps the format of the allocatable quantity.
        set_available[name] = whole if allocatable.binary else milli
    groups: NodeGroups | None = None
    if summary.allocatable_modelings:
        try:
            groups = node_groups(cluster)
        except ModelError:
            groups = None
    return ClusterProfile(summary, allowed_pods, available, set_available, groups)


@dataclass(frozen=True, slots=True)
class RequestProfile:
    """One replica's request, as integers."""

    summary_request: tuple[tuple[str, int], ...]
    """Resources with `Value() > 0`: cpu in milli, others whole units; sorted by name."""
    demand: Demand
    """The same request on a virtual node (modelled resources only)."""
    summary_key: int
    model_key: int
    """Memo keys: small ints shared by equal requests (tuples do not cache their hash; ints hash for free)."""


@dataclass(frozen=True, slots=True)
class ComponentsProfile:
    pods_per_set: int
    per_set: tuple[tuple[str, int], ...]
    """Σ request × replicas per resource, in the component-set units (QUIRK), sorted by name."""
    demands: tuple[tuple[Demand, int], ...]
    """Each component's per-pod demand on a virtual node, with its replicas, in the given order."""
    key: int
    """Memo key shared by equal component lists."""

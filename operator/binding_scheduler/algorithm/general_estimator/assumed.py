"""Assumed workloads, and what they take as integers: one by one, and summed per cluster (the sums the
`SchedulingOvercommitProtection` assumption cache keeps as assumptions come and go)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import overload

from ...model import Component, ReplicaRequirements
from ..resource_models import CPU, Demand
from .units import component_request, set_demands, set_units


@dataclass(frozen=True, slots=True)
class AssumedWorkload:
    """Capacity a binding was just given on a cluster but that the cluster's status may not show yet.

    The `SchedulingOvercommitProtection` assumption cache records one per (binding, cluster) after a successful
    result patch; a single-template workload is one component named after the resource, with that cluster's
    replicas (Karmada's `pkg/scheduler/scheduler.go: updateAssumptionsCache` and `singleTemplateAsComponents`).
    The estimators deduct these before answering, so that concurrent decisions do not hand the same capacity out
    twice. Pass them only when that gate is on.
    """

    namespace: str
    components: tuple[Component, ...]


class AssumedLoad(Sequence[AssumedWorkload]):
    """The workloads assumed on one cluster, with what they take together kept as sums.

    The summary estimates only need the sums (pods, and each resource's amount), which the assumption cache
    keeps as assumptions come and go, so a pass pays per cluster, not per assumption there. The workloads one
    by one (first-fit on resource models, the accurate estimators' `assumedWorkloads`) are carried only when
    the caller asked for them (`workloads`); reading them otherwise is an error, never an empty answer."""

    __slots__ = ("_count", "_workloads", "deducted", "pods", "set_deducted", "set_pods")

    def __init__(
        self,
        count: int,
        pods: int,
        deducted: Mapping[str, int],
        set_pods: int,
        set_deducted: Mapping[str, int],
        workloads: tuple[AssumedWorkload, ...] | None = None,
    ) -> None:
        self._count = count
        self.pods = pods
        self.deducted = tuple(deducted.items())
        """Added to allocating for replicas: cpu milli × replicas, others Value() × replicas, summed."""
        self.set_pods = set_pods
        self.set_deducted = tuple(set_deducted.items())
        """Deducted for component sets, in the component-set units (QUIRK), summed."""
        self._workloads = workloads

    @property
    def workloads(self) -> tuple[AssumedWorkload, ...]:
        if self._workloads is None:
            raise LookupError(f"the {self._count} workloads of this assumed load were not asked for")
        return self._workloads

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[AssumedWorkload]:
        return iter(self.workloads)

    @overload
    def __getitem__(self, index: int) -> AssumedWorkload: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[AssumedWorkload]: ...
    def __getitem__(self, index: int | slice) -> AssumedWorkload | Sequence[AssumedWorkload]:
        return self.workloads[index]

    def __repr__(self) -> str:
        return f"AssumedLoad(count={self._count}, pods={self.pods}, deducted={self.deducted})"


@dataclass(slots=True)
class LoadTotals:
    """Running sums of assumed profiles (the assumption cache keeps one per cluster)."""

    count: int = 0
    pods: int = 0
    deducted: dict[str, int] = field(default_factory=dict)
    set_pods: int = 0
    set_deducted: dict[str, int] = field(default_factory=dict)

    def add(self, profile: AssumedProfile, sign: int = 1) -> None:
        self.count += sign
        self.pods += sign * profile.pods
        self.set_pods += sign * profile.set_pods
        for totals, amounts in ((self.deducted, profile.deducted), (self.set_deducted, profile.set_deducted)):
            for name, amount in amounts:
                left = totals.get(name, 0) + sign * amount
                if left or sign > 0:
                    totals[name] = left
                else:
                    del totals[name]

    def remove(self, profile: AssumedProfile) -> None:
        self.add(profile, -1)

    def load(self, workloads: tuple[AssumedWorkload, ...] | None, without: AssumedProfile | None = None) -> AssumedLoad:
        """The sums now as an `AssumedLoad`, less `without` (a binding's own workload there)."""
        if without is None:
            return AssumedLoad(self.count, self.pods, self.deducted, self.set_pods, self.set_deducted, workloads)
        deducted = dict(self.deducted)
        set_deducted = dict(self.set_deducted)
        for name, amount in without.deducted:
            deducted[name] -= amount
        for name, amount in without.set_deducted:
            set_deducted[name] -= amount
        return AssumedLoad(
            self.count - 1, self.pods - without.pods, deducted, self.set_pods - without.set_pods, set_deducted,
            workloads,
        )


@dataclass(frozen=True, slots=True)
class AssumedProfile:
    """What one assumed workload takes, as integers, in the units of each estimate."""

    pods: int
    """Pods deducted for replicas: components with replicas ≤ 0 are skipped."""
    deducted: tuple[tuple[str, int], ...]
    """Added to allocating for replicas: cpu milli × replicas, others Value() × replicas."""
    set_pods: int
    """Pods deducted for component sets: every component's replicas, as Karmada sums them."""
    set_deducted: tuple[tuple[str, int], ...]
    """Deducted for component sets, in the component-set units (QUIRK)."""
    demands: tuple[tuple[Demand, int], ...]
    """The workload as one set on the virtual nodes."""


def assumed_profile(workload: AssumedWorkload) -> AssumedProfile:
    """What `workload` takes, as integers (pure: the caches memoise it by identity)."""
    pods = 0
    deducted: dict[str, int] = {}
    set_deducted: dict[str, int] = {}
    for component in workload.components:
        replicas = component.replicas
        request = component_request(component)
        for name, q in request.items():
            set_deducted[name] = set_deducted.get(name, 0) + set_units(q) * replicas
        if replicas <= 0:
            continue
        pods += replicas
        for name, q in request.items():
            per_replica = q.milli_value() if name == CPU else q.value()
            deducted[name] = deducted.get(name, 0) + per_replica * replicas
    return AssumedProfile(
        pods=pods,
        deducted=tuple(deducted.items()),
        set_pods=sum(c.replicas for c in workload.components),
        set_deducted=tuple(set_deducted.items()),
        demands=tuple(set_demands(workload.components)),
    )


def replica_units(requirements: ReplicaRequirements | None) -> dict[str, int]:
    """What one replica requests, in `AssumedProfile.deducted`'s units (cpu in milli, others `Value()`), for the
    resources it requests a positive amount of (pods are counted apart)."""
    if requirements is None:
        return {}
    units = {}
    for name, quantity in requirements.resource_request.items():
        amount = quantity.milli_value() if name == CPU else quantity.value()
        if amount > 0 and name != "pods":
            units[name] = amount
    return units

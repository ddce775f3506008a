"""Virtual nodes built from a Cluster's resource models, and first-fit placement on them (Karmada's
`pkg/estimator/client/general.go: buildModelNodes` and `getMaximumReplicasBasedOnResourceModels`).

With the `CustomizedClusterResourceModeling` gate the general estimator does not trust the cluster-wide sums
alone: a cluster of many small nodes cannot host one big pod. Each grade of `spec.resourceModels` becomes a node
template whose capacity is the **minimum** of every range, plus 110 pods (Kubernetes' default per-node limit);
`status.resourceSummary.allocatableModelings` says how many nodes of each grade exist. Pods are then packed
first-fit, nodes in ascending grade order.

Units are integers throughout: cpu in milli-units, everything else in whole units (`Value()`, rounded up). Only
the resources a Kubernetes node accounts for are modelled (cpu, memory, ephemeral-storage, pods and the scalar
resources); any other name is ignored on both sides.

Nodes of one grade are identical, so they are kept as *runs* of identical nodes rather than one object per
node: a cluster reporting 5,000 nodes of a grade is one run until a placement makes some of them differ.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from ..model import Cluster, Quantity

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"
MODEL_NODE_PODS = 110
"""Pods one virtual node holds, whatever the model says (Kubernetes' default `maxPods`)."""

_NATIVE_PREFIX = "kubernetes.io/"
_REQUESTS_PREFIX = "requests."
_QUALIFIED_NAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")

Demand = tuple[tuple[str, int], ...]
"""What one pod takes: (resource, positive amount) pairs, sorted by name, modelled resources only, pods excluded."""

Capacity = dict[str, int]
"""What one node has left, in model units; always holds `pods`."""

NodeGroups = tuple[tuple[Mapping[str, int], int], ...]
"""(template capacity, node count) per grade, ascending grade, only grades with at least one node."""


class ModelError(ValueError):
    """The resource models cannot be turned into nodes; the caller falls back to the summary formula."""


def _is_qualified_name(value: str) -> bool:
    parts = value.split("/")
    if len(parts) > 2:
        return False
    if len(parts) == 2:
        prefix, name = parts
        if not prefix or len(prefix) > 253 or _DNS1123_SUBDOMAIN.match(prefix) is None:
            return False
    else:
        name = parts[0]
    return 0 < len(name) <= 63 and _QUALIFIED_NAME.match(name) is not None


def is_scalar_resource_name(name: str) -> bool:
    """Kubernetes' scalar resources: extended (`vendor.com/gpu`), hugepages-*, attachable-volumes-*, or
    prefixed native (`kubernetes.io/...`)."""
    if name.startswith(("hugepages-", "attachable-volumes-")) or _NATIVE_PREFIX in name:
        return True
    # Extended: namespaced (has a '/'), not native, not a quota `requests.` name, and a valid qualified name.
    if "/" not in name or name.startswith(_REQUESTS_PREFIX):
        return False
    return _is_qualified_name(_REQUESTS_PREFIX + name)


def is_modelled_resource_name(name: str) -> bool:
    """Whether a virtual node accounts for this resource; requests for any other resource are ignored."""
    return name in (CPU, MEMORY, EPHEMERAL_STORAGE, PODS) or is_scalar_resource_name(name)


def model_units(name: str, quantity: Quantity) -> int:
    """cpu in milli-units, anything else in whole units, both rounded up."""
    return quantity.milli_value() if name == CPU else quantity.value()


def replica_demand(resource_request: Mapping[str, Quantity] | None) -> Demand:
    """One pod's demand on a virtual node. Non-positive amounts ask for nothing; a `pods` request is
    replaced by the one pod every replica is."""
    if not resource_request:
        return ()
    items = []
    for name, quantity in resource_request.items():
        if name == PODS or not is_modelled_resource_name(name):
            continue
        amount = model_units(name, quantity)
        if amount > 0:
            items.append((name, amount))
    return tuple(sorted(items))


def node_groups(cluster: Cluster) -> NodeGroups:
    """The virtual nodes of a cluster, grouped by grade.

    Raises `ModelError` when there are no models, no summary, or a negative node count. Counts of a grade listed
    more than once are summed; a grade listed twice in the models takes its last definition; grades present on
    only one side (models or counts) give no nodes. A range listed twice takes its last value.
    """
    if cluster.resource_summary is None:
        raise ModelError("resource summary is nil")
    if not cluster.resource_models:
        raise ModelError("no resource models defined")
    templates: dict[int, Mapping[str, int]] = {}
    for model in cluster.resource_models:
        capacity = {
            r.name: model_units(r.name, r.min)
            for r in model.ranges
            if r.name != PODS and is_modelled_resource_name(r.name)
        }
        capacity[PODS] = MODEL_NODE_PODS
        templates[model.grade] = capacity
    counts: dict[int, int] = {}
    for grade, count in cluster.resource_summary.allocatable_modelings:
        if count < 0:
            raise ModelError(f"negative node count for grade {grade}")
        counts[grade] = counts.get(grade, 0) + count
    return tuple((templates[g], counts[g]) for g in sorted(templates) if counts.get(g, 0) > 0)


def node_fit(capacity: Mapping[str, int], demand: Demand) -> int:
    """How many pods of `demand` one node still takes: the pods left, bounded by every demanded resource.
    A demanded resource the node does not have gives 0."""
    fit = capacity[PODS]
    for name, amount in demand:
        bound = capacity.get(name, 0) // amount
        if bound < fit:  # noqa: PLR1730 (hot loop: no call)
            fit = bound
    return fit if fit > 0 else 0


def total_fit(groups: NodeGroups, demand: Demand) -> int:
    """Pods of `demand` that fit on fresh nodes: first-fit of identical pods fills each node to its own fit.

    Inlined `node_fit`: this runs for every modelled cluster of every decision.
    """
    total = 0
    for capacity, count in groups:
        fit = capacity[PODS]
        for name, amount in demand:
            bound = capacity.get(name, 0) // amount
            if bound < fit:  # noqa: PLR1730 (hot loop: no call)
                fit = bound
        if fit > 0:
            total += count * fit
    return total


def _consumed(capacity: Mapping[str, int], demand: Demand, pods: int) -> Capacity:
    left = dict(capacity)
    _consume(left, demand, pods)
    return left


def _consume(capacity: Capacity, demand: Demand, pods: int) -> None:
    capacity[PODS] -= pods
    for name, amount in demand:
        capacity[name] = capacity.get(name, 0) - amount * pods


class FirstFit:
    """The virtual nodes of one cluster being filled first-fit. Mutable; build one per estimate.

    Placement is never rolled back: a component that does not fully fit keeps what it placed, and the
    simulation stops there (the Go simulator behaves the same, and the assumed workloads rely on it).
    """

    __slots__ = ("_runs", "_starts")

    def __init__(self, groups: NodeGroups) -> None:
        self._runs: list[tuple[Capacity, int]] = [(dict(capacity), count) for capacity, count in groups]
        # Capacity only shrinks, so a run found full for a demand stays full: scans resume where they stopped.
        self._starts: dict[Demand, int] = {}

    def place(self, demand: Demand, replicas: int) -> bool:
        """First-fit `replicas` pods of `demand`, node by node in grade order; True when all of them fit.

        `replicas <= 0` places nothing and succeeds.
        """
        if replicas <= 0:
            return True
        runs = self._runs
        remaining = replicas
        i = self._starts.get(demand, 0)
        first_open = -1
        while i < len(runs):
            capacity, count = runs[i]
            fit = node_fit(capacity, demand)
            if fit == 0:
                i += 1
                continue
            if first_open < 0:
                first_open = i
                self._starts[demand] = i
            full = remaining // fit
            if full >= count:
                _consume(capacity, demand, fit)  # every node of the run takes `fit` pods
                remaining -= fit * count
                i += 1
                if remaining == 0:
                    return True
                continue
            rest = remaining - full * fit
            pieces: list[tuple[Capacity, int]] = []
            if full:
                pieces.append((_consumed(capacity, demand, fit), full))
            if rest:
                pieces.append((_consumed(capacity, demand, rest), 1))
            untouched = count - full - (1 if rest else 0)
            if untouched:
                pieces.append((capacity, untouched))
            self._split(i, pieces)
            return True
        if first_open < 0:
            self._starts[demand] = len(runs)
        return False

    def _split(self, i: int, pieces: list[tuple[Capacity, int]]) -> None:
        self._runs[i : i + 1] = pieces
        grown = len(pieces) - 1
        if grown:
            for key, start in self._starts.items():
                if start > i:
                    self._starts[key] = start + grown

    def place_set(self, components: Iterable[tuple[Demand, int]]) -> bool:
        """Place one set: every component's replicas in order; stops at the first component that does not fit."""
        return all(self.place(demand, replicas) for demand, replicas in components)

    def count_sets(self, components: Sequence[tuple[Demand, int]], upper_bound: int) -> int:
        """How many whole sets fit, one after the other, up to `upper_bound`."""
        placed = 0
        while placed < upper_bound and self.place_set(components):
            placed += 1
        return placed

    def fit(self, demand: Demand) -> int:
        """Pods of `demand` that still fit in total (first-fit of identical 1-pod units until one fails)."""
        return sum(count * node_fit(capacity, demand) for capacity, count in self._runs)

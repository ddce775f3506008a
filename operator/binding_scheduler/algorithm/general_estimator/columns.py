"""The general estimate with other bindings' assumptions deducted, for a decision's candidates at once.

A decision's general estimate is memoised per snapshot and request for every cluster; what the overcommit
protection's assumptions take changes it on the clusters holding some. Those sums live as columns in the
assumption cache (`scheduling.assumed_columns`), and here as an `AssumedAt`: per candidate position, whether
other bindings hold anything there, their pods and each resource's amount. The summary path (clusters without
resource models) is then a few array operations over those clusters instead of one Python estimate each; the
clusters whose resource models place the assumed workloads one by one, and component sets, keep the per-cluster
path with each cluster's `AssumedLoad`.

Integers stay exact: the fleet's columns are int64 while every value fits, else Python integers (object arrays),
as the assumption cache's columns are.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ...model import Cluster, ReplicaRequirements
from .assumed import AssumedLoad
from .cache import EstimatorCache
from .units import MAX_INT32

if TYPE_CHECKING:
    from ..snapshot import Snapshot

INT64_SAFE = 1 << 62
Column = npt.NDArray[Any]
"""int64, or object (Python integers) where a value does not fit in int64."""
Mask = npt.NDArray[np.bool_]


class AssumedAt:
    """Other bindings' assumptions at a decision's candidate positions (overcommit protection), as columns:
    `held` where any is assumed, their `pods` and `deducted(resource)` (cpu milli x replicas, others Value() x
    replicas, summed), and `load(cluster)`, the cluster's `AssumedLoad` for the estimates that read the workloads
    one by one (resource models) or their component-set sums."""

    __slots__ = ("_deducted", "_load", "held", "pods")

    def __init__(
        self,
        held: Mask,
        pods: Column,
        deducted: Callable[[str], Column],
        load: Callable[[str], AssumedLoad | None],
    ) -> None:
        self.held = held
        self.pods = pods
        self._deducted = deducted
        self._load = load

    def deducted(self, resource: str) -> Column:
        return self._deducted(resource)

    def load(self, cluster: str) -> AssumedLoad | None:
        return self._load(cluster)


class SummaryColumns:
    """What each cluster of a snapshot offers on the general estimator's summary path, as columns over the fleet:
    whether it has a summary, whether resource models apply to it, its allowed pods, and each resource's
    available amount (built on first use per resource)."""

    def __init__(self, clusters: Sequence[Cluster], cache: EstimatorCache) -> None:
        self._profiles = [cache.profile(c) for c in clusters]
        self.has_summary: Mask = np.fromiter((p is not None for p in self._profiles), dtype=np.bool_,
                                             count=len(clusters))
        self.modelled: Mask = np.fromiter((p is not None and p.groups is not None for p in self._profiles),
                                          dtype=np.bool_, count=len(clusters))
        self.allowed: Column = exact_column([0 if p is None else p.allowed_pods for p in self._profiles])
        self._available: dict[str, Column] = {}

    def available(self, resource: str) -> Column:
        """The resource's available amount per cluster (cpu in milli, others whole units); 0 where `allocatable`
        does not list it, which answers 0 as the absence does: what is left after the assumptions is ≤ 0."""
        found = self._available.get(resource)
        if found is None:
            found = self._available[resource] = exact_column(
                [0 if p is None else p.available.get(resource, 0) for p in self._profiles])
        return found


def exact_column(values: Sequence[int]) -> Column:
    """`values` as int64, or as Python integers when one does not fit."""
    try:
        return np.array(values, dtype=np.int64)
    except OverflowError:
        return np.array(values, dtype=object)


def summary_columns(snapshot: Snapshot) -> SummaryColumns:
    return snapshot.memo(("general-summary-columns", None),
                         lambda: SummaryColumns(snapshot.clusters, snapshot.estimator))


def replicas_with_assumed(
    fleet_indices: npt.NDArray[np.intp],
    requirements: ReplicaRequirements | None,
    assumed: AssumedAt,
    columns: SummaryColumns,
    cache: EstimatorCache,
    positions: npt.NDArray[np.intp],
) -> Column:
    """The general estimate (replicas) at the candidate `positions` (on the summary path, with a summary, others'
    assumptions held), the assumptions deducted: `max_available_replicas` steps 2, 3, 4 and 6 as array
    operations. `fleet_indices` are the candidates' fleet indices."""
    at = fleet_indices[positions]
    allowed = columns.allowed[at] - assumed.pods[positions]
    zero = allowed <= 0
    bound = allowed
    if requirements is not None:
        for name, amount in cache.request(requirements).summary_request:
            left = columns.available(name)[at] - assumed.deducted(name)[positions]
            if left.dtype != object and not -INT64_SAFE < amount < INT64_SAFE:
                left = left.astype(object)  # a request past int64: Python integers, as the per-cluster path
            zero |= left <= 0
            bound = np.minimum(bound, left // amount)
    result: Column = np.minimum(bound, MAX_INT32)
    result[zero] = 0
    return result

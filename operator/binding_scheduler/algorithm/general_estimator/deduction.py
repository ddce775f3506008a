"""Assumed workloads taken off a cluster before an estimate: their sums on the summary paths, their first-fit
placement on the virtual nodes."""

from __future__ import annotations

from collections.abc import Sequence

from ..resource_models import FirstFit, NodeGroups
from .assumed import AssumedLoad, AssumedWorkload, LoadTotals
from .cache import EstimatorCache


def place_assumed(cache: EstimatorCache, groups: NodeGroups, assumed: Sequence[AssumedWorkload]) -> FirstFit:
    """Virtual nodes after first-fit of each assumed workload as one set (what does not fit stays placed)."""
    simulator = FirstFit(groups)
    for workload in assumed.workloads if isinstance(assumed, AssumedLoad) else assumed:
        simulator.place_set(cache.assumed(workload).demands)
    return simulator


def load_of(cache: EstimatorCache, assumed: Sequence[AssumedWorkload]) -> AssumedLoad:
    if isinstance(assumed, AssumedLoad):
        return assumed
    totals = LoadTotals()
    for workload in assumed:
        totals.add(cache.assumed(workload))
    return totals.load(None)

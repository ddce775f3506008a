"""A metric's labelled children, each looked up once.

prometheus_client's `labels(...)` validates its values, takes the metric's lock and builds a key on every call;
on the pass's path (a plugin's, a step's, a request's observation) that was about 3 % of a binding's CPU
(benchmarks.profile). The children it returns live as long as the metric (none is ever removed here), so each
distinct tuple of label values is resolved once and kept.
"""

from __future__ import annotations

from typing import Generic, TypeVar

from prometheus_client.metrics import MetricWrapperBase

M = TypeVar("M", bound=MetricWrapperBase)


class Children(Generic[M]):
    """`children(*values)` is `metric.labels(*values)`, values in the metric's label order, resolved once."""

    __slots__ = ("_found", "_metric")

    def __init__(self, metric: M) -> None:
        self._metric = metric
        self._found: dict[tuple[str, ...], M] = {}

    def __call__(self, *values: str) -> M:
        child = self._found.get(values)
        if child is None:
            child = self._found[values] = self._metric.labels(*values)
        return child

"""`Children`: a metric's labelled series, resolved once per tuple of label values."""

from __future__ import annotations

from unittest import mock

from prometheus_client import CollectorRegistry, Counter

from binding_scheduler.scheduling.observability.children import Children


def counter() -> Counter:
    return Counter("writes", "Writes.", ["kind", "result"], registry=CollectorRegistry())


def test_child_is_the_series_labels_gives() -> None:
    metric = counter()
    assert Children(metric)("spec", "ok") is metric.labels(kind="spec", result="ok")


def test_each_tuple_of_values_is_resolved_once() -> None:
    metric = counter()
    children = Children(metric)
    with mock.patch.object(metric, "labels", wraps=metric.labels) as labels:
        for _ in range(3):
            children("spec", "ok").inc()
        children("status", "ok").inc()
    assert labels.call_count == 2
    assert metric.labels("spec", "ok")._value.get() == 3

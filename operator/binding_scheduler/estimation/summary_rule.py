"""A minimal answer from a Cluster's resource summary, for the estimator stub.

floor(available / request) over the requested resources (cpu in milli-units, everything else in whole units,
`available = allocatable - allocated - allocating`), bounded by the free pods. This is the summary path of
Karmada's general estimator (reference 3.2 step 6) without resource models or assumed workloads; the stub
needs only a plausible, predictable number.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from binding_scheduler.model import Quantity, ResourceSummary

INT32_MAX = 2**31 - 1


def _units(name: str, quantity: Quantity | None) -> int:
    if quantity is None:
        return 0
    return quantity.milli_value() if name == "cpu" else quantity.value()


def _available(summary: ResourceSummary, name: str) -> int:
    return sum(
        sign * _units(name, part.get(name))
        for sign, part in ((1, summary.allocatable), (-1, summary.allocated), (-1, summary.allocating))
    )


def free_pods(summary: ResourceSummary | None) -> int:
    return max(_available(summary, "pods"), 0) if summary is not None else 0


def replicas_from_summary(summary: ResourceSummary | None, request: Mapping[str, Quantity]) -> int:
    """How many replicas asking `request` each still fit."""
    pods = free_pods(summary)
    if summary is None or pods == 0:
        return 0
    answer = pods
    for name, quantity in request.items():
        need = _units(name, quantity)
        if need <= 0 or name == "pods":
            continue
        if name not in summary.allocatable:
            return 0
        answer = min(answer, max(_available(summary, name), 0) // need)
    return min(answer, INT32_MAX)


def sets_from_summary(summary: ResourceSummary | None, components: Sequence[tuple[int, Mapping[str, Quantity]]]) -> int:
    """How many whole sets of `components` ((replicas, request per replica) each) still fit."""
    pods = free_pods(summary)
    if summary is None or pods == 0:
        return 0
    pods_per_set = sum(max(replicas, 0) for replicas, _ in components)
    if pods_per_set == 0:
        return min(pods, INT32_MAX)
    answer = pods // pods_per_set
    per_set: dict[str, int] = {}
    for replicas, request in components:
        for name, quantity in request.items():
            if name != "pods":
                per_set[name] = per_set.get(name, 0) + _units(name, quantity) * max(replicas, 0)
    for name, need in per_set.items():
        if need <= 0:
            continue
        if name not in summary.allocatable:
            return 0
        answer = min(answer, max(_available(summary, name), 0) // need)
    return min(answer, INT32_MAX)

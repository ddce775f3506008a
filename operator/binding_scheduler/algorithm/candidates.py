"""A feasible cluster with what the later steps need to know about it."""

from __future__ import annotations

from collections.abc import Iterable

from ..model import Cluster

DEFAULT_OVERFLOW_ORDER = 0
UNMATCHED_OVERFLOW_ORDER = 1000


class ClusterDetail:
    """Karmada's `ClusterDetailInfo`.

    `allocatable` is the merged estimate of replicas that still fit; `available` adds the replicas already
    assigned to this cluster in `spec.clusters`; `overflow_order` is 0 for the observed term's own affinity,
    i+1 for its i-th overflow affinity and 1000 for none. A plain slotted class: passes build one per
    feasible cluster, so construction and `name` access are kept as cheap as Python allows.
    """

    __slots__ = ("allocatable", "available", "cluster", "name", "overflow_order", "score")

    def __init__(
        self,
        cluster: Cluster,
        score: int = 0,
        allocatable: int = 0,
        available: int = 0,
        overflow_order: int = DEFAULT_OVERFLOW_ORDER,
    ) -> None:
        self.cluster = cluster
        self.name = cluster.name
        self.score = score
        self.allocatable = allocatable
        self.available = available
        self.overflow_order = overflow_order

    def sort_key(self) -> tuple[int, int, int, str]:
        """(overflowOrder asc, score desc, available desc, name asc): a total order."""
        return (self.overflow_order, -self.score, -self.available, self.name)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ClusterDetail):
            return NotImplemented
        return (self.cluster, self.score, self.allocatable, self.available, self.overflow_order) == (
            other.cluster,
            other.score,
            other.allocatable,
            other.available,
            other.overflow_order,
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"ClusterDetail({self.name!r}, score={self.score}, allocatable={self.allocatable}, "
            f"available={self.available}, overflow_order={self.overflow_order})"
        )


def _sort_key(detail: ClusterDetail) -> tuple[int, int, int, str]:
    return (detail.overflow_order, -detail.score, -detail.available, detail.name)


def sort_candidates(candidates: Iterable[ClusterDetail]) -> list[ClusterDetail]:
    return sorted(candidates, key=_sort_key)

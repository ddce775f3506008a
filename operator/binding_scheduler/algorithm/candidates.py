"""A feasible cluster with what the later steps need to know about it."""

from __future__ import annotations

from dataclasses import dataclass

from ..model import Cluster

DEFAULT_OVERFLOW_ORDER = 0
UNMATCHED_OVERFLOW_ORDER = 1000


@dataclass(slots=True)
class ClusterDetail:
    """Karmada's `ClusterDetailInfo`.

    `allocatable` is the merged estimate of replicas that still fit; `available` adds the replicas already
    assigned to this cluster in `spec.clusters`; `overflow_order` is 0 for the observed term's own affinity,
    i+1 for its i-th overflow affinity and 1000 for none.
    """

    cluster: Cluster
    score: int = 0
    allocatable: int = 0
    available: int = 0
    overflow_order: int = DEFAULT_OVERFLOW_ORDER

    @property
    def name(self) -> str:
        return self.cluster.name

    def sort_key(self) -> tuple[int, int, int, str]:
        """(overflowOrder asc, score desc, available desc, name asc): a total order."""
        return (self.overflow_order, -self.score, -self.available, self.cluster.name)


def sort_candidates(candidates: list[ClusterDetail]) -> list[ClusterDetail]:
    return sorted(candidates, key=ClusterDetail.sort_key)

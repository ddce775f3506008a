"""A feasible cluster with what the later steps need to know about it."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TypeAlias, overload

import numpy as np
import numpy.typing as npt

from ..model import Cluster, TargetCluster
from .fleet import Indices

IntColumn: TypeAlias = npt.NDArray[np.int64]

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


class OrderedCandidates(Sequence[ClusterDetail]):
    """Every candidate in selection order, held as columns over the fleet: `members` (fleet indices into
    `fleet_names`, in snapshot order) and `order`, their positions in selection order, computed on first need (a
    StaticWeight division reads the members by name, not their order); `at` is the members in selection order.
    Names, allocatable replicas and name ranks are read from the columns; the `ClusterDetail` objects are built on
    first access to an item."""

    __slots__ = ("_allocatable", "_at", "_details", "_names", "_objects", "_order", "_ordered", "fleet_names",
                 "members", "ranks", "targets_of")

    def __init__(
        self, fleet_names: Sequence[str], members: Indices, details: Callable[[], list[ClusterDetail]], *,
        order: Callable[[], Indices] | None = None,
        targets_of: Callable[[int], Sequence[TargetCluster]] | None = None,
        allocatable: IntColumn | None = None,
        ranks: IntColumn | None = None,
    ) -> None:
        self.fleet_names = fleet_names
        self.members = members
        self.targets_of = targets_of
        """`replicas` on every cluster of the fleet, by position (`FleetColumns.targets_of`), when known."""
        self.ranks = ranks
        """Every fleet cluster's place among the fleet's names sorted (`FleetColumns.rank`), when known."""
        self._order = order
        self._ordered: Indices | None = None
        self._allocatable = allocatable
        self._details = details
        self._at: Indices | None = None
        self._names: list[str] | None = None
        self._objects: list[ClusterDetail] | None = None

    def _positions(self) -> Indices | None:
        """The members' positions in selection order (computed once), None when they are in it already."""
        if self._order is None:
            return None
        if self._ordered is None:
            self._ordered = self._order()
        return self._ordered

    @property
    def at(self) -> Indices:
        if self._at is None:
            positions = self._positions()
            self._at = self.members[positions] if positions is not None else self.members
        return self._at

    @property
    def allocatable_column(self) -> IntColumn | None:
        """Each candidate's `allocatable`, in selection order, when known without the objects."""
        if self._allocatable is None:
            return None
        positions = self._positions()
        return self._allocatable[positions] if positions is not None else self._allocatable

    def by_name(self) -> Indices | None:
        """The members in name order, without their selection order; None when the ranks are not known."""
        if self.ranks is None:
            return None
        return self.members[np.argsort(self.ranks[self.members])]

    def by_name_with_allocatable(self) -> tuple[Indices, IntColumn] | None:
        """`by_name`, with each member's allocatable replicas; None when either is not known."""
        if self.ranks is None or self._allocatable is None:
            return None
        order = np.argsort(self.ranks[self.members])
        return self.members[order], self._allocatable[order]

    @property
    def names(self) -> list[str]:
        if self._names is None:
            fleet_names = self.fleet_names
            self._names = [fleet_names[i] for i in self.at.tolist()]
        return self._names

    def _all(self) -> list[ClusterDetail]:
        if self._objects is None:
            self._objects = self._details()
        return self._objects

    def __len__(self) -> int:
        return len(self.members)

    def __iter__(self) -> Iterator[ClusterDetail]:
        return iter(self._all())

    @overload
    def __getitem__(self, index: int) -> ClusterDetail: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[ClusterDetail]: ...

    def __getitem__(self, index: int | slice) -> ClusterDetail | Sequence[ClusterDetail]:
        return self._all()[index]


def allocatable_of(candidates: Sequence[ClusterDetail]) -> list[int]:
    """Each candidate's `allocatable`, in order: read from the column when the candidates hold one."""
    if isinstance(candidates, OrderedCandidates) and candidates.allocatable_column is not None:
        column: list[int] = candidates.allocatable_column.tolist()
        return column
    return [detail.allocatable for detail in candidates]


def targets_each(candidates: Sequence[ClusterDetail], replicas: int) -> list[TargetCluster]:
    """`replicas` on each candidate, in order: `TargetCluster.each` over their names, read from the fleet's table
    when the candidates are held as fleet positions."""
    if isinstance(candidates, OrderedCandidates) and candidates.targets_of is not None:
        table = candidates.targets_of(replicas)
        return [table[i] for i in candidates.at.tolist()]
    return TargetCluster.each(names_of(candidates), replicas)


def names_of(candidates: Sequence[ClusterDetail]) -> list[str]:
    if isinstance(candidates, OrderedCandidates):
        return candidates.names
    return [detail.name for detail in candidates]

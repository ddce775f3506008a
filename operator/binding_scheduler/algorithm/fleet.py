"""The fleet as columns: one array entry per cluster of a snapshot, in the snapshot's order, so that a decision's
per-cluster questions (which clusters pass a filter, in which order the candidates go) are answered for the
whole fleet at once instead of one Python step per cluster (docs/design/fleet-arrays.md).

Index `i` is the snapshot's `clusters[i]`. Masks are numpy bool arrays of the fleet's length; what depends only
on the snapshot and a key (an affinity, an API, a set of tolerations) is memoised on the snapshot, as its name
sets are.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar

import numpy as np
import numpy.typing as npt

from ..model import Cluster, ClusterAffinity, TargetCluster, Toleration

if TYPE_CHECKING:
    from .snapshot import Snapshot

Mask: TypeAlias = npt.NDArray[np.bool_]
Indices: TypeAlias = npt.NDArray[np.intp]
SPREAD_FIELDS = ("provider", "region", "zone")
TARGET_TABLE_ENTRIES = 262_144
"""How many `TargetCluster`s a snapshot's result tables hold in all (~19 MB) before they are started afresh."""
T = TypeVar("T")


class FleetColumns:
    """The binding-independent columns of one snapshot: names and their ranks, the live clusters, the hard-tainted
    ones, the ones without each topology field; masks by API, affinity and tolerations on demand."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        clusters = snapshot.clusters
        self.names: tuple[str, ...] = tuple(c.name for c in clusters)
        self.index: Mapping[str, int] = {name: i for i, name in enumerate(self.names)}
        self.rank: npt.NDArray[np.int64] = _ranks(self.names)
        """Each cluster's place among the names sorted as Python sorts strings: the name tie-break as an integer."""
        self.live: Mask = self._flags(not c.deleting for c in clusters)
        self.hard_tainted: Mask = self.of_names(snapshot.hard_tainted)
        self.without: Mapping[str, Mask] = {f: self.of_names(snapshot.without[f]) for f in SPREAD_FIELDS}
        self.nothing: Mask = np.zeros(len(self.names), dtype=np.bool_)
        """No cluster (read-only)."""
        self.nothing.flags.writeable = False
        self._targeted: tuple[frozenset[str], Mask] | None = None
        self._target_tables: dict[int, tuple[TargetCluster, ...]] = {}

    def __len__(self) -> int:
        return len(self.names)

    def targeted(self, targets: frozenset[str]) -> Mask:
        """`of_names(targets)`, read-only, kept for the next call with the same set (an attempt's filters ask
        for its targets in turn)."""
        last = self._targeted
        if last is not None and last[0] is targets:
            return last[1]
        mask = self.of_names(targets)
        mask.flags.writeable = False
        self._targeted = (targets, mask)
        return mask

    def targets_of(self, replicas: int) -> tuple[TargetCluster, ...]:
        """`replicas` on each cluster, in fleet order: a Duplicated result (or a non-workload's, at 0) is read from
        it by position, since CPython builds a `TargetCluster` at about three times a plain tuple's cost and the
        bindings of a snapshot share few replica counts. Kept per replica count for the snapshot's life, up to
        `TARGET_TABLE_ENTRIES` entries in all."""
        tables = self._target_tables
        table = tables.get(replicas)
        if table is None:
            table = tuple(TargetCluster.each(self.names, replicas))
            if (len(tables) + 1) * len(table) > TARGET_TABLE_ENTRIES:
                tables.clear()
            tables[replicas] = table
        return table

    def positions_in(self, indices: Indices, names: Iterable[str]) -> dict[str, int]:
        """Where each of `names` stands in `indices` (fleet indices, ascending), for the names found there."""
        index = self.index
        known = [(name, index[name]) for name in names if name in index]
        if not known or not len(indices):
            return {}
        wanted = np.fromiter((at for _, at in known), dtype=np.intp, count=len(known))
        positions = np.minimum(np.searchsorted(indices, wanted), len(indices) - 1).tolist()
        hits = (indices[positions] == wanted).tolist()
        return {name: position for (name, _), position, hit in zip(known, positions, hits, strict=True) if hit}

    def of_names(self, names: Collection[str]) -> Mask:
        """True at the clusters named (names not in the snapshot are left out)."""
        mask = np.zeros(len(self.names), dtype=np.bool_)
        index = self.index
        where = [index[n] for n in names if n in index]
        if where:
            mask[where] = True
        return mask

    def topology_codes(self, field: str) -> tuple[npt.NDArray[np.int64], tuple[str, ...]]:
        """Each cluster's `region` or `provider` as a code into the distinct values (sorted); -1 for no region
        (an empty provider is a value of its own)."""

        def compute() -> tuple[npt.NDArray[np.int64], tuple[str, ...]]:
            values = [getattr(c, field) for c in self.snapshot.clusters]
            names = tuple(sorted(set(values)))
            code = {name: i for i, name in enumerate(names)}
            if field == "region":
                code[""] = -1
            return np.fromiter((code[v] for v in values), dtype=np.int64, count=len(values)), names

        return self._memo(("topology", field), compute)

    def clusters_at(self, indices: Iterable[int]) -> list[Cluster]:
        clusters = self.snapshot.clusters
        return [clusters[i] for i in indices]

    def api_enabled(self, group_version: str, kind: str) -> Mask:
        """The clusters whose status lists the resource's group/version and kind."""
        return self._memo(("api", group_version, kind),
                          lambda: self.of_names(self.snapshot.api_index.get((group_version, kind), frozenset())))

    def matching(self, affinities: tuple[ClusterAffinity, ...]) -> Mask:
        """The clusters matching any of `affinities`."""

        def compute() -> Mask:
            mask = np.zeros(len(self.names), dtype=np.bool_)
            for affinity in affinities:
                mask |= self.of_names(self.snapshot.matching(affinity))
            return mask

        return self._memo(("matching", affinities), compute)

    def untolerated(self, tolerations: tuple[Toleration, ...], reason: Callable[[Cluster], str | None]) -> Untolerated:
        """The hard-tainted clusters with a taint none of `tolerations` tolerates, and the reason of each
        (`reason` is the per-cluster filter, asked once per hard-tainted cluster and set of tolerations)."""

        def compute() -> Untolerated:
            clusters = self.snapshot.clusters
            reasons = {}
            for i in np.flatnonzero(self.hard_tainted).tolist():
                text = reason(clusters[i])
                if text is not None:
                    reasons[i] = text
            mask = np.zeros(len(self.names), dtype=np.bool_)
            if reasons:
                mask[list(reasons)] = True
            return Untolerated(mask, reasons)

        return self._memo(("untolerated", tolerations), compute)

    def _memo(self, key: tuple[Any, ...], compute: Callable[[], T]) -> T:
        return self.snapshot.memo(("fleet", *key), compute)

    def _flags(self, values: Iterable[bool]) -> Mask:
        return np.fromiter(values, dtype=np.bool_, count=len(self.names))


class Untolerated:
    """The clusters a set of tolerations leaves failed by a hard taint, with each one's reason by index."""

    __slots__ = ("mask", "reasons")

    def __init__(self, mask: Mask, reasons: Mapping[int, str]) -> None:
        self.mask = mask
        self.reasons = reasons


def _ranks(names: tuple[str, ...]) -> npt.NDArray[np.int64]:
    ranks = np.empty(len(names), dtype=np.int64)
    for rank, i in enumerate(sorted(range(len(names)), key=names.__getitem__)):
        ranks[i] = rank
    return ranks

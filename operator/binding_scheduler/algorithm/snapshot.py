"""A scheduling snapshot: every cluster, with the binding-independent indexes computed once."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from ..model import Cluster, ClusterAffinity
from .affinity import cluster_matches
from .fleet import FleetColumns
from .general_estimator import EstimatorCache

HARD_TAINT_EFFECTS = ("NoSchedule", "NoExecute")
_MEMO_LIMIT = 256
T = TypeVar("T")


class Snapshot:
    """An immutable view of all clusters for one or many passes.

    Everything that does not depend on the binding is computed here once (API enablement index, which
    clusters carry hard taints or lack topology fields), so a pass only does the binding-specific work.
    Per-affinity match sets are memoized: bindings of one policy share their affinity. `estimator` holds the
    general estimator's integer forms and answers; the cluster store hands one on from snapshot to snapshot.
    """

    def __init__(self, clusters: Iterable[Cluster], estimator: EstimatorCache | None = None) -> None:
        self.clusters: tuple[Cluster, ...] = tuple(clusters)
        self.by_name: Mapping[str, Cluster] = {c.name: c for c in self.clusters}
        self.live: tuple[Cluster, ...] = tuple(c for c in self.clusters if not c.deleting)
        self.api_index: Mapping[tuple[str, str], frozenset[str]] = _api_index(self.clusters)
        self.hard_tainted: frozenset[str] = frozenset(
            c.name for c in self.clusters if any(t.effect in HARD_TAINT_EFFECTS for t in c.taints)
        )
        self.without: Mapping[str, frozenset[str]] = {
            "provider": frozenset(c.name for c in self.clusters if not c.provider),
            "region": frozenset(c.name for c in self.clusters if not c.region),
            "zone": frozenset(c.name for c in self.clusters if not c.zones),
        }
        self.estimator: EstimatorCache = estimator if estimator is not None else EstimatorCache()
        self._memo: OrderedDict[Any, Any] = OrderedDict()
        self._columns: FleetColumns | None = None

    @property
    def columns(self) -> FleetColumns:
        """The fleet as arrays (built on first use: a snapshot only `explain` reads needs none)."""
        if self._columns is None:
            self._columns = FleetColumns(self)
        return self._columns

    def modelled(self) -> frozenset[str]:
        """The clusters whose resource summary carries resource models."""
        return self.memo(("modelled", None), lambda: frozenset(
            c.name for c in self.clusters
            if c.resource_summary is not None and c.resource_summary.allocatable_modelings
        ))

    def __len__(self) -> int:
        return len(self.clusters)

    def memo(self, key: Any, compute: Callable[[], T]) -> T:
        """A bounded per-snapshot cache for results that depend only on the snapshot and `key`."""
        try:
            value: T = self._memo[key]
        except KeyError:
            value = compute()
            self._memo[key] = value
            if len(self._memo) > _MEMO_LIMIT:
                self._memo.popitem(last=False)
            return value
        self._memo.move_to_end(key)
        return value

    def matching(self, affinity: ClusterAffinity) -> frozenset[str]:
        """The names of the clusters `affinity` matches (memoised: one policy's bindings share an affinity)."""
        return self.memo(("matching", affinity), lambda: frozenset(
            c.name for c in self.clusters if cluster_matches(c, affinity)
        ))

    def matches(self, cluster: Cluster, affinity: ClusterAffinity) -> bool:
        """`cluster_matches` for a cluster of this snapshot, from the memoised set."""
        if self.by_name.get(cluster.name) is not cluster:
            return cluster_matches(cluster, affinity)
        return cluster.name in self.matching(affinity)


def _api_index(clusters: Iterable[Cluster]) -> Mapping[tuple[str, str], frozenset[str]]:
    index: dict[tuple[str, str], set[str]] = {}
    for cluster in clusters:
        for enablement in cluster.api_enablements:
            for kind in enablement.kinds:
                index.setdefault((enablement.group_version, kind), set()).add(cluster.name)
    return {key: frozenset(names) for key, names in index.items()}

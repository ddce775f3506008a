"""What a scheduling plugin is, and the per-pass context plugins see.

A plugin is a small object with a `name` and a `filter` and/or a `score` method:

    class OnlyEurope:
        name = "OnlyEurope"
        def filter(self, ctx: FilterContext, cluster: Cluster) -> str | None:
            return None if cluster.region.startswith("eu-") else "cluster(s) are outside Europe"

`filter` returns None when the cluster passes and the unschedulable reason otherwise; `score` returns an
int added to the cluster's score. In-tree plugins may also offer `filter_many` / `score_many`, which
answer for many clusters at once from the snapshot's indexes (same verdicts, faster).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from ..model import Binding, Cluster, ClusterAffinity
from .snapshot import Snapshot


@dataclass(frozen=True, slots=True)
class FilterContext:
    """The binding being scheduled (with the affinity term under trial set in its status) and the snapshot."""

    binding: Binding
    snapshot: Snapshot
    targets: frozenset[str]
    affinities: tuple[ClusterAffinity, ...]

    @classmethod
    def of(cls, binding: Binding, snapshot: Snapshot) -> FilterContext:
        return cls(
            binding=binding,
            snapshot=snapshot,
            targets=binding.target_names,
            affinities=collect_affinities(binding),
        )


def collect_affinities(binding: Binding) -> tuple[ClusterAffinity, ...]:
    """The affinities a cluster must match one of: clusterAffinity, or the observed term (+ its overflow
    affinities for workloads). Empty means no affinity constraint."""
    placement = binding.placement
    if placement is None:
        return ()
    if placement.cluster_affinity is not None:
        return (placement.cluster_affinity,)
    term = placement.term(binding.status.scheduler_observing_affinity_name)
    if term is None:
        return ()
    overflow = tuple(o.affinity for o in term.overflow_affinities or ()) if binding.is_workload else ()
    return (term.affinity, *overflow)


@runtime_checkable
class FilterPlugin(Protocol):
    name: str

    def filter(self, ctx: FilterContext, cluster: Cluster) -> str | None: ...


@runtime_checkable
class ScorePlugin(Protocol):
    name: str

    def score(self, ctx: FilterContext, cluster: Cluster) -> int: ...


@runtime_checkable
class BatchFilter(Protocol):
    def filter_many(self, ctx: FilterContext, clusters: Sequence[Cluster]) -> Mapping[str, str]:
        """The failing clusters among `clusters`, by name, with their reasons."""


@runtime_checkable
class BatchScore(Protocol):
    def score_many(self, ctx: FilterContext, clusters: Sequence[Cluster]) -> Mapping[str, int]:
        """The non-zero scores among `clusters`, by name."""


class PluginError(ValueError):
    """A plugin set cannot be built (for example two plugins share a name)."""

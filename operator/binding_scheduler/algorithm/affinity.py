"""Karmada's `ClusterMatches`: does a cluster satisfy a ClusterAffinity (`pkg/util/selector.go: ClusterMatches`)."""

from __future__ import annotations

from ..model import Cluster, ClusterAffinity, Requirement


def _zone_matches(zones: tuple[str, ...], requirement: Requirement) -> bool:
    op = requirement.operator
    if op == "In":
        return any(zone in requirement.values for zone in zones)
    if op == "NotIn":
        return not any(zone in requirement.values for zone in zones)
    if op == "Exists":
        return bool(zones)
    if op == "DoesNotExist":
        return not zones
    return False


def field_selector_matches(cluster: Cluster, requirements: tuple[Requirement, ...]) -> bool:
    """`zone` is checked against spec.zones; other keys as label requirements on {provider, region}."""
    for requirement in requirements:
        if requirement.key == "zone":
            if not _zone_matches(cluster.zones, requirement):
                return False
        elif not requirement.matches(cluster.pseudo_labels):
            return False
    return True


def cluster_matches(cluster: Cluster, affinity: ClusterAffinity) -> bool:
    """Exclude first, then label selector, field selector and cluster names; every set part must hold.

    For the clusters of a snapshot, `Snapshot.matching` memoises the matching names per affinity (one policy's
    affinity is checked against the same clusters for each of its bindings)."""
    if cluster.name in affinity.exclude:
        return False
    if affinity.label_selector is not None and not affinity.label_selector.matches(cluster.labels):
        return False
    if affinity.field_selector is not None and not field_selector_matches(cluster, affinity.field_selector):
        return False
    return not affinity.cluster_names or cluster.name in affinity.cluster_names

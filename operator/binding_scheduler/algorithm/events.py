"""Event messages the scheduler records.

Karmada's: `pkg/scheduler/scheduler.go: recordScheduleResultEventForResourceBinding`,
`recordScheduleResultEventForClusterResourceBinding` and `targetClustersToString`, and the per-term warning of
`scheduleResourceBindingWithClusterAffinities`.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..model import Binding, Scope, TargetCluster
from .errors import SUCCESS_MESSAGE

SUCCEED_REASON = "ScheduleBindingSucceed"
FAILED_REASON = "ScheduleBindingFailed"


def clusters_text(clusters: Sequence[TargetCluster]) -> str:
    return "{" + ", ".join(f"{t.name}:{t.replicas}" for t in clusters) + "}"


def success_message(binding: Binding, clusters: Sequence[TargetCluster]) -> str:
    """RB: `... Result: {m1:2}`; CRB: `... Result {m1:2}` (no colon, as Karmada writes it)."""
    separator = "Result:" if binding.scope is Scope.NAMESPACED else "Result"
    return f"{SUCCESS_MESSAGE} {separator} {clusters_text(clusters)}"


def binding_ref(binding: Binding) -> str:
    if binding.scope is Scope.NAMESPACED:
        return f"ResourceBinding({binding.namespace}/{binding.name})"
    return f"ClusterResourceBinding({binding.name})"


def term_failed_message(binding: Binding, index: int, error: BaseException) -> str:
    # "clusterAffiliates" is Karmada's spelling; users grep for it.
    return f"failed to schedule {binding_ref(binding)} with clusterAffiliates index({index}): {error}"


def deleting_message(binding: Binding) -> str:
    if binding.scope is Scope.NAMESPACED:
        return f"skip schedule deleting resourceBinding: {binding.namespace}/{binding.name}"
    return f"skip schedule deleting clusterResourceBinding: {binding.name}"

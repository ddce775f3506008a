"""The workload affinity filters of Karmada's `WorkloadAffinity` gate: the ResourceBindings of one
`spec.workloadAffinityGroups.affinityGroup` go where the others of the group already are, those of one
`antiAffinityGroup` go where none of the others is. Karmada's:

- `pkg/scheduler/framework/plugins/workloadaffinity/workload_affinity.go: WorkloadAffinity.FilterWithContext`
  (with `obeyAffinityGroup`);
- `pkg/scheduler/framework/plugins/workloadantiaffinity/workload_anti_affinity.go: WorkloadAntiAffinity`
  (its `FilterWithContext`, with `obeyAntiAffinityGroup`).

Both read the group members from `AttemptContext.workload_groups` (the scheduling layer keeps that view) and, as
Karmada's, let every cluster the binding already targets pass, so they never take a placement away. A binding is
recognised as itself only by Karmada's generated name (`pkg/util/names/names.go: GenerateBindingName`): a member
named `<resource name>-<kind>` (lower case, `:` written `.`) is skipped, whatever the binding's own name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from .fleet import FleetColumns
from .plugins import AttemptContext, FilterMask, GroupMember, MaskFilter

AFFINITY_REASON = "ResourceBinding with the same affinity group does not target this cluster"
ANTI_AFFINITY_REASON = "cluster already has workload with the same anti-affinity group"
NO_INDEX_REASON = "ResourceBindingIndexer is nil"
VERSION_REASON = "failed to compare resource versions for ResourceBinding"


def generated_binding_name(kind: str, name: str) -> str:
    """The name Karmada's detector gives the binding of a resource (names.GenerateBindingName)."""
    return f"{name.replace(':', '.')}-{kind}".lower()


class WorkloadAffinityFilter(MaskFilter):
    """A cluster must be targeted by every other member of the binding's affinity group that targets any; the
    first member of a group goes anywhere."""

    name = "WorkloadAffinity"

    def filter_mask(self, ctx: AttemptContext, fleet: FleetColumns) -> FilterMask:
        return _mask(fleet, self.failures(ctx, fleet.names))

    def failures(self, ctx: AttemptContext, names: Sequence[str]) -> Mapping[str, str]:
        """The clusters among `names` the filter fails, with their reasons."""
        group = ctx.binding.affinity_group
        pending = [name for name in names if name not in ctx.targets] if group else []
        if not pending:
            return {}
        if ctx.workload_groups is None:
            return dict.fromkeys(pending, NO_INDEX_REASON)
        resource = ctx.binding.resource
        own = generated_binding_name(resource.kind, resource.name)

        def applies(member: GroupMember) -> bool:
            """Does this member constrain the binding? (Karmada skips the others the index holds)"""
            return (member.namespace == resource.namespace and member.affinity_group == group
                    and bool(member.clusters) and member.name != own)

        return _verdicts(pending, ctx.workload_groups.affinity_members(group), applies,
                         lambda member, name: name not in member.clusters, AFFINITY_REASON)


class WorkloadAntiAffinityFilter(MaskFilter):
    """A cluster another member of the binding's anti-affinity group targets is not a candidate."""

    name = "WorkloadAntiAffinity"

    def filter_mask(self, ctx: AttemptContext, fleet: FleetColumns) -> FilterMask:
        return _mask(fleet, self.failures(ctx, fleet.names))

    def failures(self, ctx: AttemptContext, names: Sequence[str]) -> Mapping[str, str]:
        """The clusters among `names` the filter fails, with their reasons."""
        group = ctx.binding.anti_affinity_group
        pending = [name for name in names if name not in ctx.targets] if group else []
        if not pending:
            return {}
        if ctx.workload_groups is None:
            return dict.fromkeys(pending, NO_INDEX_REASON)
        resource = ctx.binding.resource
        own = generated_binding_name(resource.kind, resource.name)

        def applies(member: GroupMember) -> bool:
            return member.namespace == resource.namespace and member.anti_affinity_group == group and member.name != own

        return _verdicts(pending, ctx.workload_groups.anti_affinity_members(group), applies,
                         lambda member, name: name in member.clusters, ANTI_AFFINITY_REASON)


def _mask(fleet: FleetColumns, failures: Mapping[str, str]) -> FilterMask:
    if not failures:
        return FilterMask(fleet.nothing, AFFINITY_REASON)
    names = fleet.names
    return FilterMask(fleet.of_names(failures), lambda index: failures[names[index]])


def _verdicts(
    pending: Sequence[str],
    members: Sequence[GroupMember],
    applies: Callable[[GroupMember], bool],
    violates: Callable[[GroupMember, str], bool],
    reason: str,
) -> dict[str, str]:
    """Each pending cluster against the members in order: the first member whose copies could not be compared, or
    the first that applies and is violated, fails it (Karmada's loop, per cluster)."""
    if all(member.comparable for member in members):  # always, with an API server's resourceVersions
        constraining = [member for member in members if applies(member)]
        return {name: reason for name in pending if any(violates(member, name) for member in constraining)}
    failures: dict[str, str] = {}
    for name in pending:
        for member in members:
            if not member.comparable:
                failures[name] = VERSION_REASON
                break
            if applies(member) and violates(member, name):
                failures[name] = reason
                break
    return failures


"""Which ResourceBindings are in which workload (anti-)affinity group, and where they are placed (Karmada's
`WorkloadAffinity` gate): the runtime state behind the `WorkloadGroups` view the workload affinity filters read.

Two parts, as in Karmada:

- the index of the stored bindings by `spec.workloadAffinityGroups.affinityGroup` and by `.antiAffinityGroup`
  (Karmada's two indexers on its binding informer, `pkg/scheduler/indexer.go: addIndexers`): every
  ResourceBinding the watch delivers, whatever its scheduler or labels; ClusterResourceBindings are never members;
- the "assigning" bindings (`pkg/scheduler/cache/cache.go: AssigningResourceBindingCache`, filled by
  `pkg/scheduler/scheduler.go: patchScheduleResultForResourceBinding`): right after our own spec write, the
  binding as the API server returned it, so that its new placement counts before the watch delivers it. A
  member is seen through that copy while it is newer (by resourceVersion) than the stored one. A watched version
  at least as new replaces the copy, or removes it when the binding's `FullyApplied` condition is True
  (`AssigningResourceBindingCache.OnBindingUpdate`); a deletion removes it.

Bodies are read field by field (never fully parsed): every binding event of the fleet comes through here while
the gate is on. With the gate off nothing creates or feeds an index.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ...algorithm.plugins import GroupMember
from ...model import Binding, ObjectMeta, Scope
from ...model.body import BindingBody
from .stores import BindingStore, binding_key

logger = logging.getLogger(__name__)

FULLY_APPLIED = "FullyApplied"


class WorkloadGroupIndex:
    """The stored ResourceBindings by workload group, with the assigning copies of our own writes."""

    def __init__(self) -> None:
        self._stored: dict[str, GroupMember] = {}  # key -> stored copy, for the bindings in a group
        self._versions: dict[str, str] = {}  # key -> its stored resourceVersion (every ResourceBinding in a group)
        self._affinity: dict[str, dict[str, None]] = {}  # group -> keys (insertion ordered)
        self._anti: dict[str, dict[str, None]] = {}
        self._assigning: dict[str, tuple[str, GroupMember]] = {}  # key -> (resourceVersion, copy)

    @classmethod
    def of_bindings(cls, bindings: Iterable[Binding]) -> WorkloadGroupIndex:
        """The index of bindings as they are stored (what `simulate` and `explain` read): no assigning copies."""
        index = cls()
        for binding in bindings:
            if binding.scope is Scope.NAMESPACED:
                member = GroupMember(binding.namespace, binding.name, binding.affinity_group,
                                     binding.anti_affinity_group, binding.target_names)
                index._store(binding.key, binding.resource_version, member)
        return index

    @classmethod
    def of_store(cls, store: BindingStore) -> WorkloadGroupIndex:
        """The index of every body a store holds (the gate turned on while running)."""
        index = cls()
        for body in map(store.body, list(store.keys())):
            if body is not None:
                index.stored(body)
        return index

    # -- the view the filters read -------------------------------------------------------------------------------

    def affinity_members(self, group: str) -> Sequence[GroupMember]:
        return [self._current(key) for key in self._affinity.get(group, ())]

    def anti_affinity_members(self, group: str) -> Sequence[GroupMember]:
        return [self._current(key) for key in self._anti.get(group, ())]

    def _current(self, key: str) -> GroupMember:
        """The member as a filter sees it: the assigning copy when its resourceVersion is newer."""
        stored = self._stored[key]
        assigning = self._assigning.get(key)
        if assigning is None:
            return stored
        order = compare_versions(assigning[0], self._versions.get(key, ""))
        if order is None:
            return stored._replace(comparable=False)
        return assigning[1] if order > 0 else stored

    # -- fed by the watch and by our writes ----------------------------------------------------------------------

    def stored(self, body: Mapping[str, Any]) -> None:
        """A ResourceBinding body the watch (or a list) delivered: its stored copy, and the assigning copy's
        update (Karmada's OnBindingUpdate)."""
        member = _member(body)
        if member is None:
            return
        key, version = binding_key(body), _version(body)
        self._store(key, version, member)
        assigning = self._assigning.get(key)
        if assigning is None:
            return
        order = compare_versions(assigning[0], version)
        if order is None:
            logger.error("binding %s: resourceVersions %r and %r cannot be compared", key, assigning[0], version)
            return
        if order > 0:
            return
        if _fully_applied(body):
            del self._assigning[key]
        else:
            self._assigning[key] = (version, member)

    def assigned(self, body: Mapping[str, Any]) -> None:
        """Our spec write of a ResourceBinding landed; `body` is the API server's answer (Karmada's Add)."""
        member = _member(body)
        if member is not None and (member.affinity_group or member.anti_affinity_group):
            # A copy without a group is never read: its stored copy, in no group index, is at least as new.
            self._assigning[binding_key(body)] = (_version(body), member)

    def forget(self, key: str) -> None:
        """The binding was deleted (or is missing from a new list)."""
        self._assigning.pop(key, None)
        self._unstore(key)

    def __len__(self) -> int:
        return len(self._stored)

    @property
    def assigning(self) -> Mapping[str, tuple[str, GroupMember]]:
        """The assigning copies by binding key, each with its resourceVersion."""
        return dict(self._assigning)

    def _store(self, key: str, version: str, member: GroupMember) -> None:
        previous = self._stored.get(key)
        groups = (member.affinity_group, member.anti_affinity_group)
        if previous is not None and (previous.affinity_group, previous.anti_affinity_group) != groups:
            self._unstore(key)
        if groups == ("", ""):
            return
        self._stored[key] = member
        self._versions[key] = version
        if member.affinity_group:
            self._affinity.setdefault(member.affinity_group, {})[key] = None
        if member.anti_affinity_group:
            self._anti.setdefault(member.anti_affinity_group, {})[key] = None

    def _unstore(self, key: str) -> None:
        previous = self._stored.pop(key, None)
        self._versions.pop(key, None)
        if previous is None:
            return
        for groups, group in ((self._affinity, previous.affinity_group), (self._anti, previous.anti_affinity_group)):
            keys = groups.get(group)
            if keys is not None:
                keys.pop(key, None)
                if not keys:
                    del groups[group]


def compare_versions(a: str, b: str) -> int | None:
    """Kubernetes' resourceversion.CompareResourceVersion: 1, 0 or -1 for two decimal integers without leading
    zeros; None when either is not one."""
    if not _well_formed(a) or not _well_formed(b):
        return None
    if len(a) != len(b):
        return 1 if len(a) > len(b) else -1
    return (a > b) - (a < b)


def _well_formed(version: str) -> bool:
    return bool(version) and version[0] != "0" and version.isascii() and version.isdigit()


def _member(body: Mapping[str, Any]) -> GroupMember | None:
    """A ResourceBinding body as a group member; None for anything else (ClusterResourceBindings are in no group).
    A field of the wrong type counts as absent: the API server's schema keeps them out."""
    view = BindingBody(body)
    meta = view.meta
    if meta.kind != Scope.NAMESPACED.value or not view.metadata:
        return None
    affinity, anti_affinity = view.affinity_groups
    return GroupMember(meta.namespace, meta.name, affinity, anti_affinity, frozenset(view.target_names))


def _version(body: Mapping[str, Any]) -> str:
    return ObjectMeta.of(body).resource_version


def _fully_applied(body: Mapping[str, Any]) -> bool:
    """The first `FullyApplied` condition is True (meta.IsStatusConditionTrue)."""
    return BindingBody(body).condition_true(FULLY_APPLIED)

"""Choosing a combination of groups (regions) by depth-first search (reference 2.7, `selectGroups`).

Every combination whose size lies in [minGroups, maxGroups] and whose value (clusters) reaches the target
is a feasible path. The heaviest path wins (weight = sum of group scores), then the most valuable, then the
first found; a feasible path that is a strict prefix of the winner (same leading groups, fewer of them) is
preferred over it, since it meets the constraints with fewer groups. The search is over groups, which are
few (regions), and stops extending a path once it is feasible or at maxGroups.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class GroupOption:
    """One group as the search sees it: `value` is its cluster count, `weight` its group score."""

    name: str
    value: int
    weight: int


@dataclass(frozen=True, slots=True)
class GroupPath:
    """A feasible combination; `groups` are ordered by weight descending, then name."""

    id: int
    groups: tuple[GroupOption, ...]
    weight: int
    value: int

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(g.name for g in self.groups)

    def is_strict_prefix_of(self, other: GroupPath) -> bool:
        return len(self.groups) < len(other.groups) and self.names == other.names[: len(self.groups)]

    def rank(self) -> tuple[int, int, int]:
        """Best first: weight descending, value descending, id ascending."""
        return (-self.weight, -self.value, self.id)

    def describe(self) -> str:
        return f"[{', '.join(self.names)}] (weight {self.weight}, value {self.value}, id {self.id})"


def _search_order(group: GroupOption) -> tuple[int, int, str]:
    return (group.value, -group.weight, group.name)


def _path_order(group: GroupOption) -> tuple[int, str]:
    return (-group.weight, group.name)


def feasible_paths(groups: Sequence[GroupOption], min_groups: int, max_groups: int, target: int) -> list[GroupPath]:
    """Every feasible path, numbered in the order the search finds them.

    QUIRK kept from Karmada: when there are exactly minGroups groups, each level stops after its first
    branch. Only the path of all groups can be feasible then, and it lies on that first branch, so this
    changes the work done, not the result.
    """
    ordered = sorted(groups, key=_search_order)
    first_branch_only = len(ordered) == min_groups
    found: list[GroupPath] = []
    path: list[GroupOption] = []

    def extend(start: int, value: int) -> None:
        for index in range(start, len(ordered)):
            group = ordered[index]
            path.append(group)
            total = value + group.value
            if total >= target and min_groups <= len(path) <= max_groups:
                members = tuple(sorted(path, key=_path_order))
                found.append(GroupPath(len(found), members, sum(g.weight for g in members), total))
            elif len(path) < max_groups:
                extend(index + 1, total)
            path.pop()
            if first_branch_only:
                break

    extend(0, 0)
    return found


def choose_path(paths: Sequence[GroupPath], trace: list[str] | None = None) -> GroupPath | None:
    """The best path, then walked down to the shortest strict prefix of it that is also feasible."""
    if not paths:
        return None
    ranked = sorted(paths, key=GroupPath.rank)
    chosen = ranked[0]
    if trace is not None:
        trace.append(f"best region path {chosen.describe()} of {len(ranked)} feasible")
    for path in ranked[1:]:
        if path.is_strict_prefix_of(chosen):
            if trace is not None:
                trace.append(f"prefer {path.describe()}: a strict prefix of [{', '.join(chosen.names)}]")
            chosen = path
    return chosen


def select_groups(
    groups: Sequence[GroupOption],
    min_groups: int,
    max_groups: int,
    target: int,
    trace: list[str] | None = None,
) -> tuple[GroupOption, ...]:
    """The chosen groups, heaviest first; empty when no combination is feasible."""
    chosen = choose_path(feasible_paths(groups, min_groups, max_groups, target), trace)
    return chosen.groups if chosen is not None else ()

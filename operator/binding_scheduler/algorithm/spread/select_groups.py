"""Choosing a combination of groups (regions) by depth-first search (Karmada's
`pkg/scheduler/core/spreadconstraint/select_groups.go: selectGroups`, with `findFeasiblePaths` and
`prioritizePaths`).

Every combination whose size lies in [minGroups, maxGroups] and whose value (clusters) reaches the target
is a feasible path. The heaviest path wins (weight = sum of group scores), then the most valuable, then the
first found; a feasible path that is a strict prefix of the winner (same leading groups, fewer of them) is
preferred over it, since it meets the constraints with fewer groups. The search is over groups, which are
few (regions), and stops extending a path once it is feasible or at maxGroups.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..errors import no_checkpoint


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
        return ", ".join(self.names)


def _search_order(group: GroupOption) -> tuple[int, int, str]:
    return (group.value, -group.weight, group.name)


def _path_order(group: GroupOption) -> tuple[int, str]:
    return (-group.weight, group.name)


_Found = tuple[int, int, tuple[int, ...]]
"""A feasible path as the search records it: (weight, value, indices into the search order)."""


def _search(
    ordered: Sequence[GroupOption],
    min_groups: int,
    max_groups: int,
    target: int,
    checkpoint: Callable[[], None] = no_checkpoint,
) -> list[_Found]:
    """Depth-first over combinations in index order; a path's id is its position in the answer.

    QUIRK kept from Karmada: when there are exactly minGroups groups, each level stops after its first
    branch. Only the path of all groups can be feasible then, and it lies on that first branch, so this
    changes the work done, not the result.

    Not Karmada's: a loop stops as soon as even all its remaining groups together cannot reach the target.
    Those branches hold no feasible path, so the paths found, their order and ids are Karmada's; but a
    search Karmada makes exponential (26 regions of one cluster each, a target of 26) becomes linear.
    `checkpoint` is called at every step (it may raise to abandon the search).
    """
    first_branch_only = len(ordered) == min_groups
    found: list[_Found] = []
    path: list[int] = []
    reachable = [0] * (len(ordered) + 1)  # reachable[i]: the value of ordered[i:] together
    for index in range(len(ordered) - 1, -1, -1):
        reachable[index] = reachable[index + 1] + ordered[index].value

    def extend(start: int, weight: int, value: int) -> None:
        for index in range(start, len(ordered)):
            if value + reachable[index] < target:
                return
            checkpoint()
            group = ordered[index]
            path.append(index)
            total_weight, total_value = weight + group.weight, value + group.value
            if total_value >= target and min_groups <= len(path) <= max_groups:
                found.append((total_weight, total_value, tuple(path)))
            elif len(path) < max_groups:
                extend(index + 1, total_weight, total_value)
            path.pop()
            if first_branch_only:
                break

    extend(0, 0, 0)
    return found


def _as_path(ordered: Sequence[GroupOption], path_id: int, found: _Found) -> GroupPath:
    weight, value, indices = found
    members = tuple(sorted((ordered[i] for i in indices), key=_path_order))
    return GroupPath(path_id, members, weight, value)


def feasible_paths(groups: Sequence[GroupOption], min_groups: int, max_groups: int, target: int) -> list[GroupPath]:
    """Every feasible path, numbered in the order the search finds them (for tests and `explain`)."""
    ordered = sorted(groups, key=_search_order)
    return [_as_path(ordered, i, f) for i, f in enumerate(_search(ordered, min_groups, max_groups, target))]


def choose_path(paths: Sequence[GroupPath], trace: list[str] | None = None) -> GroupPath | None:
    """The rule as Karmada states it: rank every path, then walk the ranking switching to strict prefixes."""
    if not paths:
        return None
    ranked = sorted(paths, key=GroupPath.rank)
    chosen = ranked[0]
    if trace is not None:
        trace.append(f"best: {chosen.describe()}, {_why_best(chosen, ranked[1:])}")
    for path in ranked[1:]:
        if path.is_strict_prefix_of(chosen):
            if trace is not None:
                trace.append(f"then {path.describe()}: it meets the constraints with fewer regions, the best's first")
            chosen = path
    return chosen


def _why_best(best: GroupPath, others: Sequence[GroupPath]) -> str:
    """What ranked `best` first among the feasible combinations: its score, its clusters, or the search's order."""
    if not others:
        return f"the only one (total score {best.weight}, the sum of its regions' scores)"
    score = f"the highest total score ({best.weight}, the sum of its regions' scores)"
    if others[0].weight < best.weight:
        return score
    if others[0].value < best.value:
        return f"tied on score ({best.weight}) with another, it holds the most clusters ({best.value})"
    tied = sum(1 for path in others if (path.weight, path.value) == (best.weight, best.value))
    return (f"tied on score ({best.weight}) and clusters ({best.value}) with {tied} other{'' if tied == 1 else 's'}, "
            "it is the first the search finds (regions with fewer clusters first, then the higher score, then by "
            "name)")


def _fast_choice(ordered: Sequence[GroupOption], found: Sequence[_Found]) -> list[GroupPath]:
    """The best path and the feasible strict prefixes of it, without ranking every path.

    Only a strict prefix of the best path can ever be switched to, and a strict prefix of the best path
    holds the best path's first k groups in path order, so looking those sets up is enough.
    """
    ranked = [(weight, value) for weight, value, _ in found]
    best_id = ranked.index(max(ranked))  # the heaviest, then the most valuable, then the first found
    best = _as_path(ordered, best_id, found[best_id])
    prefixes = [best]
    if len(best.groups) < 2 or min(len(f[2]) for f in found) >= len(best.groups):
        return prefixes
    index_of = {g: i for i, g in enumerate(ordered)}
    by_members = {f[2]: i for i, f in enumerate(found) if len(f[2]) < len(best.groups)}  # indices ascending
    for length in range(1, len(best.groups)):
        path_id = by_members.get(tuple(sorted(index_of[g] for g in best.groups[:length])))
        if path_id is not None:
            prefixes.append(_as_path(ordered, path_id, found[path_id]))
    return prefixes


def _best_smallest_path(
    ordered: Sequence[GroupOption], min_groups: int, max_groups: int, target: int
) -> tuple[GroupOption, ...] | None:
    """The search's choice, without the search, when every group alone reaches the target.

    Then a path is feasible exactly when it reaches minGroups groups, so the search finds every combination of
    minGroups groups, in lexicographic order of their indices, and no shorter feasible path exists to be
    preferred as a prefix: the choice is the heaviest combination, then the most valuable, then the first. That
    is the first minGroups groups by (weight descending, value descending, index): a heaviest combination holds
    every group heavier than its lightest member and the most valuable of those as heavy as it, and the
    remaining ties go to the lowest indices, which make the first combination. None when that does not hold.
    """
    if not 1 <= min_groups <= max_groups or len(ordered) < min_groups:
        return None
    if any(group.value < target for group in ordered):
        return None
    best = sorted(range(len(ordered)), key=lambda i: (-ordered[i].weight, -ordered[i].value, i))[:min_groups]
    return tuple(sorted((ordered[i] for i in best), key=_path_order))


def _combinations_note(count: int, min_groups: int, max_groups: int, target: int) -> str:
    span = f"{min_groups} to {max_groups}" if min_groups != max_groups else f"{min_groups}"
    combinations = f"{count} combination{'' if count == 1 else 's'} of {span} region{'' if max_groups == 1 else 's'}"
    return (f"{combinations} hold{'s' if count == 1 else ''} at least {target} cluster{'' if target == 1 else 's'} "
            "(the region spread's minGroups and maxGroups, the cluster spread's minGroups)")


def select_groups(
    groups: Sequence[GroupOption],
    min_groups: int,
    max_groups: int,
    target: int,
    trace: list[str] | None = None,
    checkpoint: Callable[[], None] = no_checkpoint,
) -> tuple[GroupOption, ...]:
    """The chosen groups, heaviest first; empty when no combination is feasible.

    Same answer as `choose_path(feasible_paths(...))`, which property tests check, but it builds paths
    only for the best one and its feasible prefixes, and needs no search at all when every group alone reaches
    the target (unless a trace is asked for: it names the paths found).
    """
    ordered = sorted(groups, key=_search_order)
    if trace is None:
        smallest = _best_smallest_path(ordered, min_groups, max_groups, target)
        if smallest is not None:
            return smallest
    found = _search(ordered, min_groups, max_groups, target, checkpoint)
    if not found:
        return ()
    if trace is not None:
        trace.append(_combinations_note(len(found), min_groups, max_groups, target))
        chosen = choose_path([_as_path(ordered, i, f) for i, f in enumerate(found)], trace)
    else:
        chosen = choose_path(_fast_choice(ordered, found))
    assert chosen is not None
    return chosen.groups

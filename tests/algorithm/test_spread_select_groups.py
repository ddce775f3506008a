"""The group search behind region selection (Karmada's pkg/scheduler/core/spreadconstraint/select_groups.go:
selectGroups; TestSelectGroups, rebuilt from its description). A group is (name, value = clusters, weight = group
score)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from binding_scheduler.algorithm.spread import GroupOption, choose_path, feasible_paths, select_groups


def g(name: str, value: int, weight: int) -> GroupOption:
    return GroupOption(name, value, weight)


def chosen(groups: list[GroupOption], min_groups: int, max_groups: int, target: int) -> list[str]:
    return [group.name for group in select_groups(groups, min_groups, max_groups, target)]


def test_single_group_that_reaches_target_is_chosen() -> None:
    assert chosen([g("r1", 3, 100)], 1, 1, 2) == ["r1"]


def test_heaviest_single_group_wins_when_any_one_suffices() -> None:
    assert chosen([g("r1", 1, 100), g("r2", 1, 200), g("r3", 1, 150)], 1, 1, 1) == ["r2"]


def test_groups_are_combined_when_no_single_one_reaches_target() -> None:
    groups = [g("r1", 1, 300), g("r2", 1, 200), g("r3", 1, 100)]
    assert chosen(groups, 1, 2, 2) == ["r1", "r2"]


def test_equal_weights_prefer_path_with_more_clusters() -> None:
    assert chosen([g("small", 1, 100), g("big", 3, 100)], 1, 1, 1) == ["big"]


def test_equal_weight_and_value_prefer_path_found_first() -> None:
    # the search visits groups by value, then weight descending, then name: "a" is found first
    assert chosen([g("b", 2, 100), g("a", 2, 100)], 1, 1, 2) == ["a"]


def test_feasible_strict_prefix_of_best_path_is_preferred() -> None:
    # z+y+x (weight 160) is heaviest, but z+y (150) already reaches the target and leads it
    groups = [g("x", 1, 10), g("y", 2, 50), g("z", 3, 100)]
    assert chosen(groups, 2, 3, 5) == ["z", "y"]


def test_prefix_preference_keeps_shortening_through_ranked_paths() -> None:
    # ranked: a+b+c (130), a+b (120), a+c (110), a (100): a+b replaces a+b+c, then a replaces a+b;
    # a+c leads with a but is no prefix of a+b, so it never wins
    groups = [g("c", 1, 10), g("b", 2, 20), g("a", 5, 100)]
    assert [p.names for p in feasible_paths(groups, 1, 3, 5)] == [("a", "b", "c"), ("a", "c"), ("a", "b"), ("a",)]
    assert chosen(groups, 1, 3, 5) == ["a"]


def test_shorter_path_that_is_no_prefix_does_not_displace_best() -> None:
    groups = [g("a", 2, 100), g("b", 2, 90), g("c", 4, 10)]
    assert chosen(groups, 1, 2, 4) == ["a", "b"]


def test_paths_longer_than_max_groups_are_never_considered() -> None:
    groups = [g("r1", 1, 100), g("r2", 1, 100), g("r3", 1, 100)]
    assert chosen(groups, 1, 2, 3) == []


def test_min_groups_chosen_heaviest_first() -> None:
    # the QUIRK (first branch only at every level) leaves the all-groups path as the only candidate
    groups = [g("r1", 1, 10), g("r2", 5, 20), g("r3", 2, 15)]
    assert chosen(groups, 3, 3, 1) == ["r2", "r3", "r1"]
    assert [p.names for p in feasible_paths(groups, 3, 3, 1)] == [("r2", "r3", "r1")]


def test_min_groups_missing_target_fails() -> None:
    assert chosen([g("r1", 1, 10), g("r2", 1, 20)], 2, 2, 3) == []


def test_short_path_extended_to_min_groups() -> None:
    groups = [g("r1", 5, 100), g("r2", 1, 10), g("r3", 1, 20)]
    assert chosen(groups, 2, 2, 1) == ["r1", "r3"]


def test_max_groups_zero_has_no_feasible_path() -> None:
    assert chosen([g("r1", 5, 100)], 1, 0, 1) == []


def test_paths_ordered_by_weight_then_name() -> None:
    paths = feasible_paths([g("b", 1, 50), g("a", 1, 50), g("c", 2, 10)], 2, 2, 2)
    assert [(p.id, p.names, p.weight, p.value) for p in paths] == [
        (0, ("a", "b"), 100, 2),
        (1, ("a", "c"), 60, 3),
        (2, ("b", "c"), 60, 3),
    ]


group_sets = st.lists(
    st.tuples(st.integers(1, 6), st.integers(0, 5).map(lambda w: w * 1000)), min_size=0, max_size=7
).map(lambda items: [g(f"r{i}", value, weight) for i, (value, weight) in enumerate(items)])


@given(group_sets, st.integers(0, 4), st.integers(0, 5), st.integers(0, 12))
def test_fast_choice_agrees_with_ranking_every_path(
    groups: list[GroupOption], min_groups: int, max_groups: int, target: int
) -> None:
    slow = choose_path(feasible_paths(groups, min_groups, max_groups, target))
    fast = select_groups(groups, min_groups, max_groups, target)
    assert fast == (slow.groups if slow is not None else ())


def karmadas_unpruned_search(groups: list[GroupOption], min_groups: int, max_groups: int, target: int) -> list[
    tuple[str, ...]
]:
    """Karmada's DFS (select_groups.go: findFeasiblePaths) with no pruning: every feasible path, in the order found,
    each re-sorted by weight descending then name."""
    ordered = sorted(groups, key=lambda x: (x.value, -x.weight, x.name))
    first_branch_only = len(ordered) == min_groups
    found: list[tuple[str, ...]] = []

    def dfs(start: int, path: list[GroupOption]) -> None:
        for index in range(start, len(ordered)):
            candidate = [*path, ordered[index]]
            value = sum(x.value for x in candidate)
            if value >= target and min_groups <= len(candidate) <= max_groups:
                found.append(tuple(x.name for x in sorted(candidate, key=lambda x: (-x.weight, x.name))))
            elif len(candidate) < max_groups:
                dfs(index + 1, candidate)
            if first_branch_only:
                break

    dfs(0, [])
    return found


@given(group_sets, st.integers(0, 4), st.integers(0, 8), st.integers(0, 16))
def test_pruned_search_finds_karmadas_paths(
    groups: list[GroupOption], min_groups: int, max_groups: int, target: int
) -> None:
    assert [p.names for p in feasible_paths(groups, min_groups, max_groups, target)] == karmadas_unpruned_search(
        groups, min_groups, max_groups, target
    )


def test_twenty_six_required_regions_search_linearly() -> None:
    """Karmada visits 2^26 partial paths here; the pruned search checks each depth a few times."""
    groups = [g(f"region-{chr(97 + i)}", 1, 1000) for i in range(26)]
    steps = 0

    def count() -> None:
        nonlocal steps
        steps += 1

    chosen = select_groups(groups, 1, 26, 26, checkpoint=count)
    assert [x.name for x in chosen] == sorted(x.name for x in groups)
    assert steps <= 26 * 2


def test_checkpoint_that_raises_abandons_search() -> None:
    class Abandon(Exception):
        pass

    def abandon() -> None:
        raise Abandon

    with pytest.raises(Abandon):
        select_groups([g("a", 1, 10), g("b", 1, 10)], 1, 2, 2, checkpoint=abandon)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.tuples(st.integers(3, 9), st.sampled_from([0, 1000, 2000, 2500, 3000])), min_size=1, max_size=9),
    st.integers(1, 4), st.integers(0, 3), st.integers(0, 3),
)
def test_when_every_group_reaches_target_choice_is_searchs(
    items: list[tuple[int, int]], min_groups: int, extra: int, target: int
) -> None:
    """Every group alone reaches the target (values from 3, target at most 3): the choice made without the
    search (ties in weight and value everywhere) is the one ranking every path the search finds."""
    groups = [g(f"r{i}", value, weight) for i, (value, weight) in enumerate(items)]
    slow = choose_path(feasible_paths(groups, min_groups, min_groups + extra, target))
    assert select_groups(groups, min_groups, min_groups + extra, target) == (slow.groups if slow is not None else ())

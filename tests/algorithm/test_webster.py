"""Webster (Sainte-Laguë) apportionment and Karmada's uid-hash tie-breaker (pkg/util/helper/webstermethod.go:
AllocateWebsterSeats and pkg/util/helper/binding.go: tieBreakerByUID)."""

from __future__ import annotations

import heapq
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from binding_scheduler.algorithm.webster import (
    ARRAYS_FROM,
    allocate_webster,
    allocate_webster_array,
    fnv1a_32,
    names_descending,
)

ODD_UID = "uid-1"  # FNV-1a 0x50c45a43
EVEN_UID = "uid-2"  # FNV-1a 0x51c45bd6


@pytest.mark.parametrize(
    ("text", "expected"),
    [("", 0x811C9DC5), ("a", 0xE40C292C), ("foobar", 0xBF9CF968), (ODD_UID, 0x50C45A43)],
)
def test_fnv1a_32_matches_published_vectors(text: str, expected: int) -> None:
    assert fnv1a_32(text.encode()) == expected


def test_odd_uid_hash_means_names_descending() -> None:
    assert names_descending(ODD_UID)


def test_even_uid_hash_means_names_ascending() -> None:
    assert not names_descending(EVEN_UID)


def test_empty_uid_means_names_ascending() -> None:
    assert not names_descending("")


@pytest.mark.parametrize(
    ("uid", "descending"),
    # FNV-1a: uid-3 0x52c45d69 (odd), uid-4 0x53c45efc (even), uid-5 0x54c4608f (odd), uid-6 0x55c46222 (even)
    [("uid-3", True), ("uid-4", False), ("uid-5", True), ("uid-6", False)],
)
def test_tie_direction_is_parity_of_uid_hash(uid: str, descending: bool) -> None:
    assert names_descending(uid) is descending


CLASSIC = [("PartyA", 100000), ("PartyB", 80000), ("PartyC", 30000), ("PartyD", 20000)]


@pytest.mark.parametrize(
    ("seats", "expected"),
    [
        (1, [1, 0, 0, 0]),
        (2, [1, 1, 0, 0]),
        (3, [2, 1, 0, 0]),
        (4, [2, 1, 1, 0]),
        (5, [2, 2, 1, 0]),
        # Round 6 ties A (100000/5) with D (20000/1): the binding tie-breaker gives it to fewer seats (D),
        # where the textbook (and Karmada's default, votes-first, tie-breaker) gives it to A.
        (6, [2, 2, 1, 1]),
        (7, [3, 2, 1, 1]),
        (8, [3, 3, 1, 1]),
    ],
    ids=lambda value: f"{value}" if isinstance(value, int) else None,
)
def test_classic_sainte_lague_example_round_by_round(seats: int, expected: list[int]) -> None:
    assert allocate_webster(seats, CLASSIC) == list(
        zip(["PartyA", "PartyB", "PartyC", "PartyD"], expected, strict=True)
    )


@pytest.mark.parametrize(
    ("seats", "expected"),
    [(12, [6, 4, 2]), (13, [7, 4, 2]), (14, [7, 5, 2])],
)
def test_three_two_one_weights(seats: int, expected: list[int]) -> None:
    assert allocate_webster(seats, [("m1", 3), ("m2", 2), ("m3", 1)]) == list(
        zip(["m1", "m2", "m3"], expected, strict=True)
    )


def test_output_is_sorted_by_name_whatever_input_order() -> None:
    assert allocate_webster(4, [("Gamma", 400), ("Alpha", 1200), ("Beta", 900)]) == [
        ("Alpha", 2),
        ("Beta", 1),
        ("Gamma", 1),
    ]


def test_zero_seat_parties_are_kept_in_output() -> None:
    assert allocate_webster(1, [("a", 1), ("b", 5)]) == [("a", 0), ("b", 1)]


def test_no_seats_gives_every_party_zero() -> None:
    assert allocate_webster(0, [("a", 100), ("b", 200)]) == [("a", 0), ("b", 0)]


def test_zero_total_votes_allocates_nothing() -> None:
    assert allocate_webster(5, [("a", 0), ("b", 0)]) == [("a", 0), ("b", 0)]


def test_no_parties_gives_empty_allocation() -> None:
    assert allocate_webster(3, []) == []


def test_zero_vote_party_never_wins_while_others_have_votes() -> None:
    assert allocate_webster(10, [("a", 0), ("b", 1)]) == [("a", 0), ("b", 10)]


def test_equal_priority_goes_to_fewer_seats_first() -> None:
    # After a:1 seat (priority 3/3 = 1) and b:0 seats (priority 1/1 = 1) tie; b has fewer seats.
    assert allocate_webster(2, [("a", 3), ("b", 1)]) == [("a", 1), ("b", 1)]


def test_full_tie_goes_to_first_name_ascending() -> None:
    assert allocate_webster(1, [("b", 1), ("a", 1)]) == [("a", 1), ("b", 0)]


def test_full_tie_goes_to_last_name_when_descending() -> None:
    assert allocate_webster(1, [("a", 1), ("b", 1)], descending=True) == [("a", 0), ("b", 1)]


def test_three_replicas_at_one_to_one_favour_first_name() -> None:
    assert allocate_webster(3, [("m1", 1), ("m2", 1)]) == [("m1", 2), ("m2", 1)]


def test_ties_favour_last_name_when_descending() -> None:
    assert allocate_webster(3, [("m1", 1), ("m2", 1)], descending=True) == [("m1", 1), ("m2", 2)]


def test_priorities_are_compared_in_float64() -> None:
    # 2**53 + 1 is not a float64: Go's float64(votes) rounds it to 2**53, which ties with the other party,
    # so the name decides. Exact integer arithmetic would give the seat to "b".
    assert allocate_webster(1, [("a", 2**53), ("b", 2**53 + 1)]) == [("a", 1), ("b", 0)]


def test_every_seat_is_allocated_for_many_parties() -> None:
    votes = [(f"member{i:04d}", i % 17 + 1) for i in range(5000)]
    allocation = allocate_webster(10000, votes)
    assert sum(seats for _, seats in allocation) == 10000
    assert len(allocation) == 5000


def seat_by_seat(seats: int, votes: list[tuple[str, int]], descending: bool) -> list[tuple[str, int]]:
    """The textbook greedy, one seat at a time: the oracle for the fast path."""
    won = {name: 0 for name, _ in votes}
    if sum(v for _, v in votes) <= 0:
        return sorted(won.items())
    ballots = dict(votes)
    for _ in range(seats):

        def key(name: str) -> tuple[float, int, str | tuple[int, ...]]:
            order = tuple(-ord(c) for c in name) if descending else name
            return (-(float(ballots[name]) / float(2 * won[name] + 1)), won[name], order)

        won[min(won, key=key)] += 1
    return sorted(won.items())


@pytest.mark.parametrize("seed", range(60))
def test_fast_path_matches_seat_by_seat(seed: int) -> None:
    rng = random.Random(seed)
    parties = rng.randint(1, 12)
    scale = rng.choice([1, 3, 10, 1000, 2**40])
    votes = [(f"m{i:02d}", rng.choice([0, rng.randint(0, 4), rng.randint(0, scale)])) for i in range(parties)]
    seats = rng.randint(0, 60)
    descending = bool(seed % 2)
    assert allocate_webster(seats, votes, descending=descending) == seat_by_seat(seats, votes, descending)


def test_billion_seats_are_split_without_walking_every_seat() -> None:
    assert allocate_webster(10**9, [("a", 1), ("b", 2)]) == [("a", 333333333), ("b", 666666667)]


@st.composite
def elections(draw: st.DrawFn) -> tuple[int, list[tuple[str, int]], bool]:
    """Small elections of two shapes: full of ties (few distinct vote counts, often multiples of each other, so
    priorities meet the jump threshold exactly and claims tie across parties), or one dominant party among many
    small ones (its claims crowd the threshold, so the jump misses several seats and one party wins more than one
    of them)."""
    parties = draw(st.integers(1, 11))
    if draw(st.booleans()):
        base = draw(st.sampled_from([1, 2, 3, 5, 7, 10**6, 2**40]))
        votes = [base * draw(st.sampled_from([0, 1, 1, 2, 3, 4, 5, 6, 9, 15])) for _ in range(parties)]
    else:
        big = draw(st.integers(100, 100_000))
        votes = [big, *(draw(st.integers(0, big // draw(st.integers(1, 200)) + 1)) for _ in range(parties - 1))]
    return draw(st.integers(0, 150)), [(f"p{i:02d}", v) for i, v in enumerate(votes)], draw(st.booleans())


@pytest.mark.parametrize(
    ("seats", "votes", "descending"),
    [
        # One dominant party: the jump leaves seats to hand out, and the dominant party wins two of them.
        (77, [97992, 1112, 585, 289, 421, 530, 617, 595, 926], True),
        (44, [80007, 147, 2797, 58, 176, 499, 775, 62, 22, 214, 646], True),
        # The jump takes too many: the worst claims go back, two of them from one party.
        (137, [24845, 99, 155, 108, 181, 143, 619, 105, 186, 199, 43], True),
        # Every party gives back: the last seat of a party is taken back to zero.
        (2, [36, 31, 30], False),
        # A quotient of exactly 2001 (an odd number) over a threshold of exactly 1: the closed form counts the
        # claim that only ties the threshold, at a count above 1,000 (where the near-integer slack is mostly its
        # relative part); the last seat is a tie that the party with fewer seats wins.
        (1001, [2001, 1], False),
        # Taking back, a party's next claim ties another's still untouched one: the tie goes by seats held, as
        # in the greedy (found by searching for inputs that tell the two apart, against mutants of the take-back).
        (27, [1, 1, 5, 35, 9], True),
        (16, [1, 3, 1, 3, 1, 9, 7, 1, 0], False),
    ],
)
def test_elections_where_jump_misses(
    seats: int, votes: list[int], descending: bool
) -> None:
    named = [(f"p{i:02d}", v) for i, v in enumerate(votes)]
    assert allocate_webster(seats, named, descending=descending) == seat_by_seat(seats, named, descending)


@settings(max_examples=600, deadline=None)
@given(elections())
def test_threshold_jump_gives_what_seat_by_seat_greedy_gives(
    election: tuple[int, list[tuple[str, int]], bool],
) -> None:
    seats, votes, descending = election
    assert allocate_webster(seats, votes, descending=descending) == seat_by_seat(seats, votes, descending)


# --- the same elections counted on arrays ------------------------------------------------------------------


def on_arrays(seats: int, votes: list[tuple[str, int]], descending: bool) -> list[tuple[str, int]]:
    named = sorted(votes)
    won = allocate_webster_array(seats, np.array([v for _, v in named], dtype=np.int64), descending=descending)
    return [(name, seats) for (name, _), seats in zip(named, won.tolist(), strict=True)]


def greedy_by_heap(seats: int, votes: list[tuple[str, int]], descending: bool) -> list[tuple[str, int]]:
    """The seat-by-seat greedy with a heap (one seat per step, no jump): the oracle for elections too large for
    `seat_by_seat`."""
    named = sorted(votes)
    won = [0] * len(named)
    if sum(v for _, v in named) <= 0:
        return [(name, 0) for name, _ in named]
    heap = [(-float(v), 0, -i if descending else i, i) for i, (_, v) in enumerate(named)]
    heapq.heapify(heap)
    for _ in range(seats):
        _, held, rank, i = heap[0]
        won[i] = held + 1
        heapq.heapreplace(heap, (-(float(named[i][1]) / (2 * held + 3)), held + 1, rank, i))
    return [(name, w) for (name, _), w in zip(named, won, strict=True)]


@settings(max_examples=600, deadline=None)
@given(elections())
def test_arrays_give_what_seat_by_seat_greedy_gives(election: tuple[int, list[tuple[str, int]], bool]) -> None:
    seats, votes, descending = election
    assert on_arrays(seats, votes, descending) == seat_by_seat(seats, votes, descending)


@pytest.mark.parametrize(
    ("seats", "votes", "descending"),
    [
        (77, [97992, 1112, 585, 289, 421, 530, 617, 595, 926], True),
        (137, [24845, 99, 155, 108, 181, 143, 619, 105, 186, 199, 43], True),
        (2, [36, 31, 30], False),
        (1001, [2001, 1], False),
        (27, [1, 1, 5, 35, 9], True),
        (16, [1, 3, 1, 3, 1, 9, 7, 1, 0], False),
        (0, [1, 2], False),
        (5, [0, 0], False),
    ],
)
def test_arrays_settle_elections_where_jump_misses(seats: int, votes: list[int], descending: bool) -> None:
    named = [(f"p{i:02d}", v) for i, v in enumerate(votes)]
    assert on_arrays(seats, named, descending) == seat_by_seat(seats, named, descending)


def test_no_parties_on_arrays_gives_no_seats() -> None:
    assert allocate_webster_array(3, np.zeros(0, dtype=np.int64)).tolist() == []


@st.composite
def fleet_elections(draw: st.DrawFn) -> tuple[int, list[tuple[str, int]], bool]:
    """Elections over hundreds of clusters: static weights of a few values (ties everywhere), or free capacities
    with a few large clusters (parties owed two seats or more among the ones the jump leaves)."""
    parties = draw(st.integers(ARRAYS_FROM, 260))
    if draw(st.booleans()):
        weights = draw(st.lists(st.integers(0, 5), min_size=1, max_size=3))
        votes = [draw(st.sampled_from(weights)) for _ in range(parties)]
    else:
        big = draw(st.lists(st.integers(1_000, 200_000), min_size=1, max_size=4))
        votes = [*big, *(draw(st.integers(0, 300)) for _ in range(parties - len(big)))]
    names = [f"member-{i:04d}" for i in draw(st.permutations(range(parties)))]
    return draw(st.integers(0, 700)), list(zip(names, votes, strict=True)), draw(st.booleans())


@settings(max_examples=250, deadline=None)
@given(fleet_elections())
def test_hundreds_of_parties_get_what_greedy_gives(election: tuple[int, list[tuple[str, int]], bool]) -> None:
    seats, votes, descending = election
    assert allocate_webster(seats, votes, descending=descending) == greedy_by_heap(seats, votes, descending)


def test_heap_oracle_agrees_with_textbook_greedy() -> None:
    rng = random.Random(7)
    for _ in range(40):
        votes = [(f"m{i:02d}", rng.choice([0, 1, 2, 3, rng.randint(0, 500)])) for i in range(rng.randint(1, 9))]
        seats, descending = rng.randint(0, 40), rng.random() < 0.5
        assert greedy_by_heap(seats, votes, descending) == seat_by_seat(seats, votes, descending)

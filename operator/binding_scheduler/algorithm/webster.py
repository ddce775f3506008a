"""Webster (Sainte-Laguë) apportionment with Karmada's binding tie-breaker
(`pkg/util/helper/webstermethod.go: AllocateWebsterSeats`, `pkg/util/helper/binding.go: tieBreakerByUID`).

Each seat goes to the party with the highest priority `votes / (2*seats + 1)`, computed in float64 (Python's
float is IEEE-754 binary64, and both operands are converted to float first as Go does, so huge vote counts
round the same way). Equal priorities go to the party with fewer seats, then by name in the direction the
binding's uid hash picks. A threshold jump plus a heap make it O(parties log parties) whatever the seat count,
so 5,000 parties x 10,000 seats (or a billion seats) stays fast.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Sequence
from typing import TypeAlias

import numpy as np
import numpy.typing as npt

FNV32_OFFSET_BASIS = 0x811C9DC5
FNV32_PRIME = 0x01000193

_NEAR_INTEGER = 1e-9
_RELATIVE_NOISE = 1e-12  # far above the few ulps (2.2e-16 each) the closed form can be off by

Allocation = list[tuple[str, int]]
"""(party name, seats) for every party, sorted by name ascending; zero-seat parties included."""

Seats: TypeAlias = npt.NDArray[np.int64]

ARRAYS_FROM = 96
"""From this many parties `allocate_webster` counts on arrays (below it, numpy's per-call cost exceeds the loop)."""
VOTES_LIMIT = 2**62
"""Above this vote total (or seat count) the arrays' int64 could overflow: Python's integers take over."""


def fnv1a_32(data: bytes) -> int:
    """FNV-1a, 32 bits (Go's `hash/fnv.New32a`)."""
    value = FNV32_OFFSET_BASIS
    for byte in data:
        value = ((value ^ byte) * FNV32_PRIME) & 0xFFFFFFFF
    return value


def names_descending(uid: str) -> bool:
    """Karmada's tie direction: an odd FNV-1a hash of `spec.resource.uid` means name descending.

    An empty uid means ascending.
    """
    return bool(uid) and fnv1a_32(uid.encode("utf-8")) % 2 == 1


def allocate_webster(seats: int, votes: Iterable[tuple[str, int]], *, descending: bool = False) -> Allocation:
    """Distribute `seats` over the parties (name, votes); names must be unique.

    With no seats or a vote total of 0 nothing is allocated (every party gets 0).

    Seat by seat, the greedy method hands out the `seats` best "claims" (party, s) ordered by (priority
    `votes/(2s+1)` descending, s ascending, name rank): each party's claims come in that order, so the greedy
    is a merge of sorted runs. We therefore jump close to the answer first: the claims whose priority is above
    a threshold form a prefix of that order, so taking all of them is exact; a heap then adds (or takes back)
    only the few claims between that prefix and `seats`. Same result as seat by seat, in O(parties log parties).
    """
    parties = dict(votes)
    names = sorted(parties)
    ballots = [parties[name] for name in names]
    total = sum(ballots)
    if seats <= 0 or total <= 0:
        return [(name, 0) for name in names]
    if len(names) >= ARRAYS_FROM and total < VOTES_LIMIT and seats < VOTES_LIMIT:
        won_array = allocate_webster_array(seats, np.array(ballots, dtype=np.int64), descending=descending)
        return list(zip(names, won_array.tolist(), strict=True))
    return list(zip(names, _allocate(seats, ballots, total, descending), strict=True))


def _allocate(seats: int, ballots: list[int], total: int, descending: bool) -> list[int]:
    """Seats per party (parties in name order), Python's integers throughout."""
    threshold = float(total) / float(2 * seats)
    won = _claims_above(ballots, threshold)
    taken = sum(won)
    ranks = range(0, -len(ballots), -1) if descending else range(len(ballots))
    if taken < seats:
        _add_best(won, ballots, ranks, seats - taken)
    elif taken > seats:
        _drop_worst(won, ballots, ranks, taken - seats)
    return won


def _claims_above(ballots: list[int], threshold: float) -> list[int]:
    """Per party, how many claims have a float64 priority strictly above `threshold` (> 0).

    The count of odd numbers below votes/threshold, in closed form; where that quotient sits within float
    noise of an odd number, the count is settled against the priorities themselves.
    """
    counts = []
    for votes in ballots:
        fvotes = float(votes)
        if not fvotes > threshold:  # its first claim's priority is votes/1: no claim is above
            counts.append(0)
            continue
        half = (fvotes / threshold + 1.0) * 0.5
        count = int(half)
        slack = _NEAR_INTEGER + half * _RELATIVE_NOISE
        if not slack < half - count < 1.0 - slack:
            count = _settled(fvotes, count, threshold)
        counts.append(count)
    return counts


def _settled(votes: float, count: int, threshold: float) -> int:
    """A closed-form claim count within float noise, checked against the priorities themselves."""
    while count > 0 and not votes / (2 * count - 1) > threshold:
        count -= 1
    while votes / (2 * count + 1) > threshold:
        count += 1
    return count


def _add_best(won: list[int], ballots: list[int], ranks: Sequence[int], count: int) -> None:
    """Hand out `count` more seats, best next claim first (the seat-by-seat greedy).

    A party whose next claim is below the count-th best next claim can win nothing (that many claims beat
    all of its own), so only the parties at or above it enter the heap.
    """
    if any(won):
        upcoming = [float(v) / (2 * w + 1) for v, w in zip(ballots, won, strict=True)]
    else:
        upcoming = list(map(float, ballots))  # every first claim: votes / 1
    contenders: Iterable[int] = range(len(upcoming))
    if count < len(upcoming):
        bound = sorted(upcoming, reverse=True)[count - 1]
        contenders = [i for i, priority in enumerate(upcoming) if priority >= bound]
    heap = [(-upcoming[i], won[i], ranks[i], i) for i in contenders]
    heapq.heapify(heap)
    for _ in range(count):
        _, held, rank, i = heap[0]
        held += 1
        won[i] = held
        heapq.heapreplace(heap, (-(float(ballots[i]) / (2 * held + 1)), held, rank, i))


def _drop_worst(won: list[int], ballots: list[int], ranks: Sequence[int], count: int) -> None:
    """Take back `count` seats, worst held claim first (the exact reverse of the greedy order)."""
    heap = [
        (float(v) / (2 * w - 1), 1 - w, -rank, i)
        for i, (v, w, rank) in enumerate(zip(ballots, won, ranks, strict=True))
        if w > 0
    ]
    heapq.heapify(heap)
    for _ in range(count):
        _, _, neg_rank, i = heap[0]
        held = won[i] - 1
        won[i] = held
        if held > 0:
            heapq.heapreplace(heap, (float(ballots[i]) / (2 * held - 1), 1 - held, neg_rank, i))
        else:
            heapq.heappop(heap)


def allocate_webster_array(seats: int, votes: Seats, *, descending: bool = False) -> Seats:
    """`allocate_webster` over parties already in name order, as arrays: the seats of each party.

    `votes` are non-negative and their total below 2**62. The threshold jump runs over the whole array in closed
    form; the seats then left to hand out (or to take back) go in one sort when each goes to a different party,
    which is the common case (hundreds of clusters, tens of replicas); otherwise `_allocate`'s heap finishes from
    the jump. Same result as the seat-by-seat greedy either way.
    """
    won = np.zeros(len(votes), dtype=np.int64)
    total = int(votes.sum()) if len(votes) else 0
    if seats <= 0 or total <= 0:
        return won
    threshold = float(total) / float(2 * seats)
    fvotes = votes.astype(np.float64)
    won = _claims_above_array(fvotes, threshold)
    taken = int(won.sum())
    ranks = np.arange(0, -len(votes), -1, dtype=np.int64) if descending else np.arange(len(votes), dtype=np.int64)
    if taken < seats and not _add_once_each(won, fvotes, ranks, seats - taken):
        return _finished_by_heap(won, votes, ranks, lambda w, b, r: _add_best(w, b, r, seats - taken))
    if taken > seats and not _drop_once_each(won, fvotes, ranks, taken - seats):
        return _finished_by_heap(won, votes, ranks, lambda w, b, r: _drop_worst(w, b, r, taken - seats))
    return won


def _claims_above_array(fvotes: npt.NDArray[np.float64], threshold: float) -> Seats:
    """`_claims_above` for every party at once; the few quotients within float noise of an odd number are settled
    one by one against the priorities, as there."""
    above = fvotes > threshold
    half = (fvotes / threshold + 1.0) * 0.5
    counts = np.where(above, np.floor(half), 0.0).astype(np.int64)
    fraction = half - counts
    slack = _NEAR_INTEGER + half * _RELATIVE_NOISE
    unsure = above & ~((slack < fraction) & (fraction < 1.0 - slack))
    for i in np.flatnonzero(unsure).tolist():
        counts[i] = _settled(float(fvotes[i]), int(counts[i]), threshold)
    return counts


def _add_once_each(won: Seats, fvotes: npt.NDArray[np.float64], ranks: Seats, count: int) -> bool:
    """Hand out the `count` best next claims when no party's claim after its next one would be among them.

    The greedy's seats are the `count` best claims of all (each party's claims come in the greedy's order), so
    when the second claim of every party chosen falls behind the count-th chosen claim, the chosen next claims are
    exactly those. Returns False, leaving `won` as it was, when one would not (a party owed two seats or more).
    """
    if count >= len(won):
        return False
    upcoming = fvotes / (2 * won + 1)
    bound = np.partition(upcoming, len(upcoming) - count)[len(upcoming) - count]
    contenders = np.flatnonzero(upcoming >= bound)
    chosen = contenders[np.lexsort((ranks[contenders], won[contenders], -upcoming[contenders]))[:count]]
    last = chosen[-1]
    priority, held, rank = upcoming[last], won[last], ranks[last]
    then = fvotes[chosen] / (2 * won[chosen] + 3)
    then_held = won[chosen] + 1
    ahead = (then > priority) | (
        (then == priority) & ((then_held < held) | ((then_held == held) & (ranks[chosen] < rank)))
    )
    if ahead.any():
        return False
    won[chosen] += 1
    return True


def _drop_once_each(won: Seats, fvotes: npt.NDArray[np.float64], ranks: Seats, count: int) -> bool:
    """Take back the `count` worst held claims when no party's held claim before its last one would be among
    them (the reverse of `_add_once_each`). Returns False, leaving `won` as it was, when one would."""
    holders = np.flatnonzero(won > 0)
    if count >= len(holders):
        return False
    held = won[holders]
    priority = fvotes[holders] / (2 * held - 1)
    order = np.lexsort((-ranks[holders], 1 - held, priority))[:count]
    chosen = holders[order]
    last = order[-1]
    last_priority, last_held, last_rank = priority[last], held[last], ranks[chosen[-1]]
    chosen_held = won[chosen]
    before = fvotes[chosen] / (2 * chosen_held - 3)
    before_held = chosen_held - 1
    behind = (chosen_held > 1) & (
        (before < last_priority)
        | ((before == last_priority) & ((before_held > last_held) | ((before_held == last_held)
                                                                      & (ranks[chosen] > last_rank))))
    )
    if behind.any():
        return False
    won[chosen] -= 1
    return True


def _finished_by_heap(
    won: Seats, votes: Seats, ranks: Seats, finish: Callable[[list[int], list[int], Sequence[int]], None]
) -> Seats:
    seats = won.tolist()
    finish(seats, votes.tolist(), ranks.tolist())
    return np.array(seats, dtype=np.int64)

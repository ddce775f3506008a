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
from collections.abc import Iterable, Sequence

FNV32_OFFSET_BASIS = 0x811C9DC5
FNV32_PRIME = 0x01000193

_NEAR_INTEGER = 1e-9
_RELATIVE_NOISE = 1e-12  # far above the few ulps (2.2e-16 each) the closed form can be off by

Allocation = list[tuple[str, int]]
"""(party name, seats) for every party, sorted by name ascending; zero-seat parties included."""


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
    threshold = float(total) / float(2 * seats)
    won = _claims_above(ballots, threshold)
    taken = sum(won)
    ranks = range(0, -len(names), -1) if descending else range(len(names))
    if taken < seats:
        _add_best(won, ballots, ranks, seats - taken)
    elif taken > seats:
        _drop_worst(won, ballots, ranks, taken - seats)
    return list(zip(names, won, strict=True))


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
            while count > 0 and not fvotes / (2 * count - 1) > threshold:
                count -= 1
            while fvotes / (2 * count + 1) > threshold:
                count += 1
        counts.append(count)
    return counts


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

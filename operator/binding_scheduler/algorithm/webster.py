"""Webster (Sainte-Laguë) apportionment with Karmada's binding tie-breaker (reference 2.9.5).

Each seat goes to the party with the highest priority `votes / (2*seats + 1)`, computed in float64 (Python's
float is IEEE-754 binary64, and both operands are converted to float first as Go does, so huge vote counts
round the same way). Equal priorities go to the party with fewer seats, then by name in the direction the
binding's uid hash picks. A heap keeps a draw O(log parties), so 5,000 parties x 10,000 seats stays fast.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable

FNV32_OFFSET_BASIS = 0x811C9DC5
FNV32_PRIME = 0x01000193

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
    """
    parties = dict(votes)
    names = sorted(parties)
    if seats <= 0 or sum(parties.values()) <= 0:
        return [(name, 0) for name in names]
    won = dict.fromkeys(names, 0)
    # Heap entries: (-priority, seats, name rank, name, votes). heapq is a min-heap, so the negated priority
    # puts the highest first, then fewer seats, then the name order picked by `descending`.
    heap = [
        (-float(parties[name]), 0, -rank if descending else rank, name, parties[name])
        for rank, name in enumerate(names)
    ]
    heapq.heapify(heap)
    for _ in range(seats):
        _, held, rank, name, party_votes = heap[0]
        held += 1
        won[name] = held
        heapq.heapreplace(heap, (-(float(party_votes) / float(2 * held + 1)), held, rank, name, party_votes))
    return [(name, won[name]) for name in names]

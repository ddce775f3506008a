"""The assumption cache's sums as columns: one slot per cluster name, and per slot how many workloads are assumed
there, what they take (pods and each resource, for replicas and for component sets) and the cluster's version.

A Duplicated binding's footprint covers hundreds of clusters; adding or removing it is a few array operations
over its clusters' slots, and a decision reads the sums at its candidates as columns (`AssumptionCache.at`)
instead of one load object per cluster. Slots are handed out on first sight of a name and never reused, so a
snapshot's fleet maps to slots once (`fleet_slots`).

Beside the sums, what was ever added at each slot (pods and each resource, never taken away): the difference between
two reads bounds what the workloads assumed in between can take from a cluster (`AddedAt`, read by Reserve).

The sums are exact: int64 while they fit, and a column whose values could leave int64 is turned into Python
integers (an object array) before it does.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from ...algorithm.general_estimator import AssumedLoad, AssumedProfile, AssumedWorkload

Column = npt.NDArray[Any]
Slots = npt.NDArray[np.intp]
HeldSlots = npt.NDArray[np.int32]
"""Slots as a footprint keeps them: half the bytes (a cache holds tens of thousands of footprints, a Duplicated
one over hundreds of clusters)."""
SHARED_FROM = 16
"""Footprints over this many clusters or more share equal slot arrays."""
SAFE = 1 << 61
"""A column stays int64 while the largest magnitude it can hold is below this (adding one amount below it
cannot overflow)."""


class _Sums:
    """One column of sums with an upper bound on the magnitude of its values (raised by each change, measured
    again when it passes `SAFE`)."""

    __slots__ = ("bound", "values")

    def __init__(self, capacity: int) -> None:
        self.values: Column = np.zeros(capacity, dtype=np.int64)
        self.bound = 0

    def add(self, slots: Slots | HeldSlots, amount: int) -> None:
        if self.values.dtype != object:
            self.bound += abs(amount)
            if self.bound >= SAFE:
                self.bound = int(np.abs(self.values).max()) + abs(amount)
                if self.bound >= SAFE:
                    self.values = self.values.astype(object)
        self.values[slots] += amount

    def grow(self, capacity: int) -> None:
        grown = np.zeros(capacity, dtype=self.values.dtype)
        grown[: len(self.values)] = self.values
        self.values = grown


class AssumedColumns:
    """Per cluster slot: the count of assumed workloads, their sums, and the cluster's version (bumped by every
    assumption added there or taken from there)."""

    def __init__(self, capacity: int = 256) -> None:
        self._slot: dict[str, int] = {}
        self.names: list[str] = []
        """The cluster name of each slot."""
        self._capacity = capacity
        self.count = _Sums(capacity)
        self.pods = _Sums(capacity)
        self.set_pods = _Sums(capacity)
        self.versions = np.zeros(capacity, dtype=np.int64)
        self.deducted: dict[str, _Sums] = {}
        self.set_deducted: dict[str, _Sums] = {}
        self.added_pods = _Sums(capacity)
        self.added: dict[str, _Sums] = {}
        """Per resource, every amount ever added at a slot (in `AssumedProfile.deducted`'s units)."""
        self._fleet: tuple[tuple[str, ...], Slots] | None = None
        self._held: weakref.WeakValueDictionary[int, HeldSlots] = weakref.WeakValueDictionary()
        """Footprints' slot arrays by the hash of their bytes, while a footprint holds them."""

    def slot(self, name: str) -> int:
        found = self._slot.get(name)
        if found is None:
            found = self._slot[name] = len(self._slot)
            self.names.append(name)
            if found >= self._capacity:
                self._grow(2 * self._capacity)
        return found

    def slots(self, names: Iterable[str]) -> Slots:
        slot = self.slot
        return np.array([slot(name) for name in names], dtype=np.intp)

    def held_slots(self, names: Iterable[str]) -> HeldSlots:
        """The slots of `names` as a footprint keeps them: read-only, and one array for every footprint over the
        same `SHARED_FROM` or more clusters while any holds it (the Duplicated bindings of a policy cover the same
        hundreds of clusters)."""
        slot = self.slot
        made = np.array([slot(name) for name in names], dtype=np.int32)
        made.flags.writeable = False
        if len(made) < SHARED_FROM:
            return made
        key = hash(made.tobytes())
        held = self._held.get(key)
        if held is None:
            self._held[key] = made
        elif np.array_equal(held, made):
            return held
        return made

    def names_of(self, slots: HeldSlots | Slots) -> list[str]:
        names = self.names
        return [names[slot] for slot in slots.tolist()]

    def known(self, name: str) -> int | None:
        """The name's slot, if it has one."""
        return self._slot.get(name)

    def fleet_slots(self, names: tuple[str, ...]) -> Slots:
        """The slot of each of a snapshot's clusters, in its order (kept for the next call with the same names)."""
        last = self._fleet
        if last is not None and last[0] is names:
            return last[1]
        slots = self.slots(names)
        self._fleet = (names, slots)
        return slots

    def add(self, slots: Slots | HeldSlots, profile: AssumedProfile, sign: int) -> None:
        """One workload's profile added at (sign 1) or taken from (sign -1) each of `slots` (distinct), whose
        versions change."""
        self.count.add(slots, sign)
        self.pods.add(slots, sign * profile.pods)
        self.set_pods.add(slots, sign * profile.set_pods)
        for sums, amounts in ((self.deducted, profile.deducted), (self.set_deducted, profile.set_deducted)):
            for name, amount in amounts:
                self._column(sums, name).add(slots, sign * amount)
        if sign > 0:
            self.added_pods.add(slots, profile.pods)
            for name, amount in profile.deducted:
                self._column(self.added, name).add(slots, amount)
        self.versions[slots] += 1

    def _column(self, sums: dict[str, _Sums], name: str) -> _Sums:
        column = sums.get(name)
        if column is None:
            column = sums[name] = _Sums(self._capacity)
        return column

    def added_at(self, slots: Slots, request: Mapping[str, int]) -> AddedAt:
        """What was ever added at `slots`, now: pods, and each resource of `request` (one replica's, in
        `AssumedProfile.deducted`'s units)."""
        return AddedAt(self.added_pods.values[slots],
                       {name: _values_at(self.added.get(name), slots) for name in request}, request)

    def version(self, name: str) -> int:
        slot = self._slot.get(name)
        return 0 if slot is None else int(self.versions[slot])

    def load(self, slot: int, workloads: tuple[AssumedWorkload, ...] | None,
             without: AssumedProfile | None) -> AssumedLoad:
        """The sums at `slot` as an `AssumedLoad`, less `without` (a binding's own workload there)."""
        deducted = _at(self.deducted, slot)
        set_deducted = _at(self.set_deducted, slot)
        count, pods, set_pods = int(self.count.values[slot]), int(self.pods.values[slot]), int(
            self.set_pods.values[slot])
        if without is not None:
            count -= 1
            pods -= without.pods
            set_pods -= without.set_pods
            for totals, amounts in ((deducted, without.deducted), (set_deducted, without.set_deducted)):
                for name, amount in amounts:
                    totals[name] = totals.get(name, 0) - amount
        return AssumedLoad(count, pods, _nonzero(deducted), set_pods, _nonzero(set_deducted), workloads)

    def _grow(self, capacity: int) -> None:
        self._capacity = capacity
        for sums in (self.count, self.pods, self.set_pods, *self.deducted.values(), *self.set_deducted.values(),
                     self.added_pods, *self.added.values()):
            sums.grow(capacity)
        versions = np.zeros(capacity, dtype=np.int64)
        versions[: len(self.versions)] = self.versions
        self.versions = versions


class AddedAt:
    """What had ever been added at some clusters when a pass read them (pods, and each resource its binding
    requests), in the order it read them, with the request itself (one replica's)."""

    __slots__ = ("pods", "request", "resources")

    def __init__(self, pods: Column, resources: dict[str, Column], request: Mapping[str, int]) -> None:
        self.pods = pods
        self.resources = resources
        self.request = request


def _values_at(sums: _Sums | None, slots: Slots) -> Column:
    return np.zeros(len(slots), dtype=np.int64) if sums is None else sums.values[slots]


def _at(columns: dict[str, _Sums], slot: int) -> dict[str, int]:
    return {name: int(sums.values[slot]) for name, sums in columns.items() if sums.values[slot]}


def _nonzero(amounts: dict[str, int]) -> dict[str, int]:
    return {name: amount for name, amount in amounts.items() if amount}

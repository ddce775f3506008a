"""The preemption claims the scheduler holds (gates PriorityBasedScheduling and PriorityBasedPreemptiveScheduling,
Karmada's open PR #7832; docs/design/preemption.md): the capacity a preemptor's victims free is kept for it, in
memory and on the preemptor (`CLAIM_ANNOTATION`), so a scheduler that starts meanwhile takes it up."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping

from ...algorithm.preemption import Claim
from ...model import Binding

logger = logging.getLogger(__name__)

CLAIM_TTL = 600.0
"""Seconds a claim holds the freed capacity for its preemptor (the PR's `defaultPreemptionClaimTTL`)."""
CLAIM_ANNOTATION = "binding-scheduler.io/preemption-claim"
"""On the preemptor, written before its first victim is evicted and dropped by the spec write that places it: a
scheduler that starts meanwhile (a restart, a new leader) takes the claim up from there, so the capacity its
victims free is still kept for it (the PR keeps claims in memory only)."""
class PreemptionClaims:
    """The live claims, one per preemptor, each for `CLAIM_TTL` seconds of wall-clock time (their expiry travels
    in `CLAIM_ANNOTATION`, so another process reads the same deadline)."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._claims: dict[str, tuple[Claim, float]] = {}
        self._dropped: dict[str, float] = {}
        """The deadline of each preemptor's claim dropped for a failed preemption: its annotation, until the write
        that removes it lands, is not taken up again."""
        self._waiting: dict[str, dict[str, int]] = {}
        """By cluster, the preemptors (key: priority) that found another's claim there and made no plan: they hold
        no claim of their own, so no change of that cluster's summary would wake them."""
        self.on_free: Callable[[str, int], None] = lambda key, priority: None
        """Told (key, priority) of each waiting preemptor once nothing blocks it on its cluster any more, or that
        cluster's capacity may have freed (the scheduler puts it back in its queue)."""

    def set(self, claim: Claim, until: float | None = None) -> float:
        """Hold `claim` until `until` (default: `CLAIM_TTL` from now) and return that; it replaces its
        preemptor's earlier one and the lower-priority claims of others on its cluster."""
        self._expire()
        replaced = [other.cluster for key, (other, _) in self._claims.items()
                    if key == claim.key or (other.cluster == claim.cluster and other.priority < claim.priority)]
        for key, (other, _) in list(self._claims.items()):
            if other.cluster == claim.cluster and other.priority < claim.priority:
                del self._claims[key]
        deadline = until if until is not None else self._clock() + CLAIM_TTL
        self._claims[claim.key] = (claim, deadline)
        self._dropped.pop(claim.key, None)
        self._stop_waiting(claim.key)
        for cluster in dict.fromkeys(replaced):  # a claim moved off a cluster frees its waiters there
            self._ended(cluster)
        return deadline

    def take_up(self, key: str, annotations: Mapping[str, str]) -> None:
        """The claim `CLAIM_ANNOTATION` carries for `key`, held here unless it has expired or is held already."""
        text = annotations.get(CLAIM_ANNOTATION)
        if text is None or key in self._claims:
            return
        found = read_claim(key, text)
        if found is not None and found[1] > self._clock() and self._dropped.get(key) != round(found[1], 3):
            self.set(*found)

    def clear(self, key: str) -> None:
        """The preemptor placed, gone, or its claim never written: nothing of it is held (nor taken up again from
        an event that still carries its annotation), and the preemptors that waited behind its claim try again."""
        held = self._claims.pop(key, None)
        self._dropped.pop(key, None)
        self._stop_waiting(key)
        if held is not None:
            self._dropped[key] = round(held[1], 3)  # an event still carrying its annotation must not take it up
            self._ended(held[0].cluster)

    def drop(self, key: str) -> None:
        """The preemption behind `key`'s claim failed: the claim goes, and the annotation that carries it is not
        taken up again (the same deadline; a new claim has a new one)."""
        held = self._claims.pop(key, None)
        if held is not None:
            self._dropped[key] = round(held[1], 3)
            self._ended(held[0].cluster)

    def wait_behind(self, cluster: str, binding: Binding) -> None:
        """`binding` would preempt on `cluster` but another's claim there blocks it: it is woken (`on_free`) when
        that claim ends (its preemptor placed, failed, deleted or the claim expired) or `freed(cluster)`."""
        self._waiting.setdefault(cluster, {})[binding.key] = binding.schedule_priority

    def waiting_on(self, cluster: str) -> bool:
        return cluster in self._waiting

    def freed(self, cluster: str) -> None:
        """Capacity may have freed on `cluster` (its summary changed): every preemptor waiting there tries again."""
        waiting = self._waiting.pop(cluster, None)
        for key, priority in (waiting or {}).items():
            self.on_free(key, priority)

    def _ended(self, cluster: str) -> None:
        """A claim on `cluster` ended: the preemptors waiting there that no live claim blocks now try again."""
        waiting = self._waiting.get(cluster)
        if not waiting:
            return
        claims = [claim for claim, _ in self._claims.values() if claim.cluster == cluster]
        for key, priority in list(waiting.items()):
            if not any(c.key != key and c.priority >= priority for c in claims):
                del waiting[key]
                self.on_free(key, priority)
        if not waiting:
            del self._waiting[cluster]

    def _stop_waiting(self, key: str) -> None:
        for cluster in [c for c, waiting in self._waiting.items() if key in waiting]:
            del self._waiting[cluster][key]
            if not self._waiting[cluster]:
                del self._waiting[cluster]

    def of(self, key: str) -> Claim | None:
        self._expire()
        held = self._claims.get(key)
        return held[0] if held is not None else None

    def on(self, cluster: str) -> list[Claim]:
        self._expire()
        return [claim for claim, _ in self._claims.values() if claim.cluster == cluster]

    def clusters(self) -> frozenset[str]:
        """The clusters some live claim is on."""
        self._expire()
        return frozenset(claim.cluster for claim, _ in self._claims.values())

    def blocking(self, cluster: str, binding: Binding) -> bool:
        """Another binding's claim on `cluster` of at least `binding`'s priority: no preemption there."""
        return any(c.key != binding.key and c.priority >= binding.schedule_priority for c in self.on(cluster))

    def __len__(self) -> int:
        self._expire()
        return len(self._claims)

    def _expire(self) -> None:
        now = self._clock()
        for key in [k for k, (_, until) in self._claims.items() if until <= now]:
            claim, _ = self._claims.pop(key)
            self._ended(claim.cluster)


def claim_annotation(claim: Claim, until: float) -> str:
    """`claim` and its deadline (epoch seconds) as `CLAIM_ANNOTATION`'s JSON."""
    return json.dumps({"cluster": claim.cluster, "priority": claim.priority, "replicas": claim.replicas,
                       "request": dict(claim.request), "until": round(until, 3)}, separators=(",", ":"))


def read_claim(key: str, text: str) -> tuple[Claim, float] | None:
    """The claim and deadline `text` holds, or None (with a warning) when it is not one."""
    try:
        data = json.loads(text)
        claim = Claim(key, str(data["cluster"]), int(data["priority"]), int(data["replicas"]),
                      {str(k): int(v) for k, v in dict(data["request"]).items()})
        return claim, float(data["until"])
    except (ValueError, TypeError, KeyError) as error:
        logger.warning("binding %s: annotation %s is not a preemption claim (%s): ignored", key, CLAIM_ANNOTATION,
                       error)
        return None



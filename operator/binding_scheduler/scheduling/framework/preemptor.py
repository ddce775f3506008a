"""The framework's `Preemptor` port as the scheduler fills it (gates PriorityBasedScheduling and
PriorityBasedPreemptiveScheduling, Karmada's open PR #7832; docs/design/preemption.md): the claims deducted at
Estimate, and a plan at PostFilter from the bindings the scheduler holds, within its bounds."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping, Sequence

from ...algorithm.errors import SchedulingError
from ...algorithm.preemption import (
    BOTH_GATES,
    MAX_VICTIM_CANDIDATES,
    PreemptionPlan,
    claimed_replicas,
    milli_request,
    not_applicable,
    select_victims,
    target_cluster,
    victim_candidates,
)
from ...algorithm.schedule import Candidates
from ...model import Binding
from ..state.claims import PreemptionClaims

logger = logging.getLogger(__name__)


class Preemption:
    """The framework's `Preemptor`: claims deducted at Estimate, a plan at PostFilter. Two bounds: a plan that
    needs more than `max_victims` victims is not made, nor one past `max_per_minute` preemptions in the last 60
    seconds; the binding then stays unschedulable, a warning says why and `on_limited` is told which bound."""

    def __init__(
        self,
        bindings: Callable[[], Iterable[Binding]],
        claims: PreemptionClaims,
        *,
        max_victims: int,
        max_per_minute: int = 30,
        on_limited: Callable[[str], None] = lambda _: None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.bindings = bindings
        """The bindings as the scheduler holds them now (the store's `parsed_bindings`; `simulate`'s inputs)."""
        self.claims = claims
        self.max_victims = max_victims
        self.max_per_minute = max_per_minute
        self.on_limited = on_limited
        self._clock = clock
        self._recent: list[float] = []

    def claimed(self, binding: Binding, clusters: Sequence[str]) -> Mapping[str, int]:
        """Looked up from the claims' side: few clusters hold claims, a decision's candidates may be the fleet."""
        held = self.claims.clusters()
        if not held:
            return {}
        taken = {}
        for cluster in held.intersection(clusters):
            if replicas := claimed_replicas(binding, cluster, self.claims.on(cluster)):
                taken[cluster] = replicas
        return taken

    def plan(self, candidates: Candidates, unclaimed: Mapping[str, int]) -> PreemptionPlan | None:
        binding = candidates.binding
        if not_applicable(binding, BOTH_GATES) is not None:
            return None
        target = target_cluster(binding, candidates.details, unclaimed)
        if target is None:
            return None
        if self.claims.blocking(target, binding):
            self.claims.wait_behind(target, binding)
            return None
        request = milli_request(binding)
        own = self.claims.of(binding.key)
        if own is not None and own.cluster == target:
            # Its victims are still leaving: no more are evicted meanwhile (kube-scheduler's DefaultPreemption
            # waits the same way; the PR would choose more victims here, docs/compatibility.md).
            return PreemptionPlan(binding.key, binding.schedule_priority, target, (), binding.replicas, request)
        placed = self._placed_on(target)
        if len(placed) > MAX_VICTIM_CANDIDATES:
            raise SchedulingError(f"too many preemption victim candidates on cluster {target}: {len(placed)} "
                                  f"bindings, at most {MAX_VICTIM_CANDIDATES}")
        available = next(d.available for d in candidates.details if d.name == target) + unclaimed.get(target, 0)
        victims = select_victims(binding, available, victim_candidates(binding, target, placed))
        if victims is None:
            return None
        if len(victims) > self.max_victims:
            logger.warning("binding %s: preempting on cluster %s would evict %d bindings, more than "
                           "spec.preemption.maxVictims (%d): nothing preempted", binding.key, target, len(victims),
                           self.max_victims)
            self.on_limited("victims")
            return None
        if not self._within_rate():
            logger.warning("binding %s: %d preemptions in the last minute, spec.preemption.maxPerMinute: not "
                           "preempting on cluster %s now", binding.key, self.max_per_minute, target)
            self.on_limited("rate")
            return None
        return PreemptionPlan(binding.key, binding.schedule_priority, target, victims, binding.replicas, request)

    def _within_rate(self) -> bool:
        """Room for one more preemption in the last 60 seconds (and then it is counted)."""
        now = self._clock()
        self._recent = [at for at in self._recent if at > now - 60.0]
        if len(self._recent) >= self.max_per_minute:
            return False
        self._recent.append(now)
        return True

    def _placed_on(self, cluster: str) -> list[Binding]:
        return [binding for binding in self.bindings() if any(t.name == cluster for t in binding.clusters)]

"""Binding priority preemption in the scheduler (gates PriorityBasedScheduling and PriorityBasedPreemptiveScheduling,
Karmada's open PR #7832; docs/design/preemption.md): the claims, the planner the framework asks at PostFilter, and
the victims' evictions a pass writes after its commit point.

A preemption is written in this order: the claim, held here and written on the preemptor (`CLAIM_ANNOTATION`,
fenced: a 409 preempts no one), so a victim rescheduled by our own write, or by a scheduler that starts
meanwhile, already sees the capacity taken; then each victim's eviction, fenced with the resourceVersion the plan
was made from (a stale view evicts nothing: the 409 ends the preemption); then the preemptor's `Preempting`
condition. The first victim that cannot be evicted ends it: the claim goes (here, and its annotation from the
preemptor: taken up again, it would have the preemptor wait for capacity no one is freeing), and the preemptor
gets a SchedulerError condition and backs off; victims evicted before stay evicted, as in the PR. A stop lets
the pass finish (it is past its commit point), within the drain bound.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...algorithm.errors import ConditionVerdict, SchedulingError, condition_for
from ...algorithm.preemption import (
    BOTH_GATES,
    MAX_VICTIM_CANDIDATES,
    Candidate,
    Claim,
    PreemptingError,
    PreemptionPlan,
    claimed_replicas,
    milli_request,
    not_applicable,
    select_victims,
    target_cluster,
    victim_candidates,
)
from ...algorithm.schedule import Candidates
from ...kube.bindings import BindingRef, patch_annotations, patch_graceful_eviction
from ...kube.errors import ApiError, Conflict, KubeError
from ...kube.gate import WriteGateClosed
from ...model import Binding, ObjectMeta, ParsedBinding
from ...model.body import BindingBody
from ..observability.labels import PassOutcome, WriteKind, WriteResult

if TYPE_CHECKING:
    from .context import PassContext

logger = logging.getLogger(__name__)

CLAIM_TTL = 600.0
"""Seconds a claim holds the freed capacity for its preemptor (the PR's `defaultPreemptionClaimTTL`)."""
CLAIM_ANNOTATION = "binding-scheduler.io/preemption-claim"
"""On the preemptor, written before its first victim is evicted and dropped by the spec write that places it: a
scheduler that starts meanwhile (a restart, a new leader) takes the claim up from there, so the capacity its
victims free is still kept for it (the PR keeps claims in memory only)."""
GRACE_PERIOD_SECONDS = 30
EVICTION_REASON, EVICTION_PRODUCER, PURGE_MODE = "BindingPreempted", "Scheduler", "Gracefully"
INITIATED_REASON, PREEMPTED_REASON = "PreemptionInitiated", "Preempted"


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


class _Refused(Exception):
    """A victim can no longer be evicted as planned (gone, changed, or no longer lower or on the cluster)."""


Involved = Callable[[ObjectMeta], dict[str, str]]


@dataclass(frozen=True, slots=True)
class Preempted:
    """How a preemption's writes ended: the preemptor's condition to write (None: nothing more is written) at
    `version`, and the pass's outcome."""

    verdict: ConditionVerdict | None
    outcome: PassOutcome
    version: str = ""


async def carry_out(entry: ParsedBinding, error: PreemptingError, ctx: PassContext, involved: Involved) -> Preempted:
    """Write the plan of `error` for the preemptor `entry`, in the module's order: the claim (held here and written
    to the preemptor, fenced), each victim's eviction, and what the preemptor's condition is to be."""
    plan = error.plan
    binding = entry.binding
    if not plan.victims:
        return Preempted(condition_for(error), PassOutcome.PREEMPTING, binding.resource_version)
    # No await lies between the PostFilter that made the plan and here, so no other pass's claim can have come
    # between: with several workers, the second preemptor of a cluster plans with this claim deducted already.
    until = ctx.claims.set(plan.claim())
    try:
        claimed = await patch_annotations(ctx.client, BindingRef.of_meta(entry.meta), binding.resource_version,
                                          {CLAIM_ANNOTATION: claim_annotation(plan.claim(), until)})
    except Conflict:
        ctx.claims.clear(binding.key)
        ctx.metrics.write(WriteKind.SPEC, WriteResult.CONFLICT)
        logger.info("binding %s changed before its preemption claim was written (409): nothing preempted, requeued",
                    binding.key)
        return Preempted(None, PassOutcome.CONFLICT)
    except BaseException:
        ctx.claims.clear(binding.key)
        raise
    ctx.metrics.write(WriteKind.SPEC, WriteResult.OK)
    version = ObjectMeta.of(claimed).resource_version or binding.resource_version
    message = (f'ResourceBinding {binding.key} initiated preemption on cluster "{plan.cluster}" for '
               f"{len(plan.victims)} victim(s)")
    await ctx.events.record(involved(entry.meta), "Normal", INITIATED_REASON, message)
    for victim in plan.victims:
        try:
            await _evict(ctx, victim, plan, binding, involved)
        except WriteGateClosed:
            raise
        except (KubeError, _Refused) as failure:
            ctx.claims.drop(binding.key)
            ctx.metrics.preemption_attempt(success=False, victims=0)
            text = failure.message if isinstance(failure, ApiError) else str(failure)
            logger.error("binding %s: preemption on cluster %s stopped at victim %s: %s", binding.key, plan.cluster,
                         victim.key, text)
            verdict = ConditionVerdict("False", "SchedulerError", f"failed to preempt: {text}", retry=True)
            return Preempted(verdict, PassOutcome.ERROR, await _unclaim(ctx, entry, version))
    ctx.metrics.preemption_attempt(success=True, victims=len(plan.victims))
    return Preempted(condition_for(error), PassOutcome.PREEMPTING, version)


async def _unclaim(ctx: PassContext, entry: ParsedBinding, version: str) -> str:
    """Remove the claim's annotation from the preemptor (fenced by the version its claim write returned), so no
    scheduler takes the failed claim up again; returns the version the preemptor's status write goes against. A
    refused removal is logged: this process will not take the claim up again, and the claim expires."""
    try:
        answer = await patch_annotations(ctx.client, BindingRef.of_meta(entry.meta), version, {CLAIM_ANNOTATION: None})
    except KubeError as error:
        ctx.metrics.write(WriteKind.SPEC, WriteResult.CONFLICT if isinstance(error, Conflict) else WriteResult.ERROR)
        logger.warning("binding %s: could not remove the claim of its failed preemption (%s): it expires by itself",
                       entry.binding.key, error)
        return version
    ctx.metrics.write(WriteKind.SPEC, WriteResult.OK)
    return ObjectMeta.of(answer).resource_version or version


async def _evict(
    ctx: PassContext, victim: Candidate, plan: PreemptionPlan, preemptor: Binding, involved: Involved
) -> None:
    stored = ctx.bindings.entry(victim.key)
    if not isinstance(stored, ParsedBinding):
        raise _Refused(f"ResourceBinding {victim.key} is gone")
    if not victim_candidates(preemptor, plan.cluster, [stored.binding]):
        raise _Refused(f"ResourceBinding {victim.key} changed: it is no longer a lower-priority binding on cluster "
                       f"{plan.cluster}")
    view = BindingBody(stored.body)
    clusters = [t for t in view.targets if t.get("name") != plan.cluster]
    task = {"fromCluster": plan.cluster, "purgeMode": PURGE_MODE, "reason": EVICTION_REASON,
            "producer": EVICTION_PRODUCER, "gracePeriodSeconds": GRACE_PERIOD_SECONDS, "replicas": victim.replicas}
    tasks = [*view.eviction_tasks, task]
    try:
        await patch_graceful_eviction(ctx.client, BindingRef.of_meta(stored.meta), stored.meta.resource_version,
                                      clusters, tasks)
    except KubeError:
        ctx.metrics.write(WriteKind.SPEC, WriteResult.ERROR)
        raise
    ctx.metrics.write(WriteKind.SPEC, WriteResult.OK)
    message = (f"ResourceBinding {victim.key} was preempted by higher-priority ResourceBinding {preemptor.key} on "
               f'cluster "{plan.cluster}"')
    await ctx.events.record(involved(stored.meta), "Warning", PREEMPTED_REASON, message)

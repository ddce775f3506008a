"""One scheduling pass for one binding key: decide, then commit with fenced writes.

```
read the body -> parse -> decision tree -> framework: decide (estimators asked, cancellable) -> Reserve
  -> COMMIT POINT -> Bind: spec write (resourceVersion precondition) -> status write (version from that
  response) -> events -> bound, or Unreserve when the spec write did not land -> outcome for the queue
```

Before the commit point a pass has no side effect and is cancelled the moment a stop is asked. From the
commit point on, the runtime lets it finish its writes (bounded by the drain timeout), so no binding is left
with a new `spec.clusters` and an old condition because of a stop. A 409 anywhere means someone wrote after
our read: the decision is dropped and the key runs again once the cache holds a newer version (or after a
second), and no condition is written.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from ...algorithm.errors import (
    ConditionVerdict,
    FitError,
    SchedulingError,
    UnschedulableError,
    condition_for,
    owner_must_act,
)
from ...algorithm.events import FAILED_REASON, SUCCEED_REASON, deleting_message
from ...algorithm.plugins import CycleState
from ...algorithm.preemption import PreemptingError
from ...algorithm.snapshot import Snapshot
from ...algorithm.status import status_patch
from ...algorithm.triggers import ScheduleType, condition_owed, schedule_trigger
from ...algorithm.walk import Decision
from ...kube.bindings import BindingRef, patch_schedule_result, patch_status
from ...kube.errors import ApiError, Conflict, Forbidden, KubeError, NotFound
from ...kube.gate import WriteGateClosed
from ...model import Binding, InvalidBinding, ObjectMeta, ParsedBinding, Scope, StoredBinding, TargetCluster
from ...model.meta import status_of
from ..framework.cpu import OverCpuLimit
from ..framework.runner import Framework, Reservation
from ..observability.labels import AttemptResult, PassOutcome, WriteKind, WriteResult
from ..state.claims import CLAIM_ANNOTATION
from .context import EventType, PassContext, PassSettings, PassTracker
from .decision_log import UNREADABLE_REASON, DecisionRecord, log_decision
from .preemption import carry_out

logger = logging.getLogger(__name__)

GROUP_VERSION = "work.karmada.io/v1alpha2"
RESERVE_TRIES = 3
"""Decisions a pass makes in a row when Reserve finds another pass took capacity on its clusters meanwhile;
then the key is requeued."""


def binding_ref(binding: Binding) -> BindingRef:
    return BindingRef.of_meta(ObjectMeta.of_binding(binding))


def involved_binding(meta: ObjectMeta) -> dict[str, str]:
    return {"apiVersion": GROUP_VERSION, "kind": meta.kind, "namespace": meta.namespace, "name": meta.name,
            "uid": meta.uid}


def involved_resource(binding: Binding) -> dict[str, str]:
    resource = binding.resource
    return {
        "apiVersion": resource.api_version,
        "kind": resource.kind,
        "namespace": resource.namespace,
        "name": resource.name,
        "uid": resource.uid,
    }


@dataclass(frozen=True, slots=True)
class Attempt:
    """One attempt of a pass that decides: what triggered it, when it started (perf_counter), and which try of
    the binding it is; its metric and its decision line read them."""

    trigger: ScheduleType
    started: float
    number: int

    def seconds(self) -> float:
        return time.perf_counter() - self.started


async def run_pass(key: str, ctx: PassContext, settings: PassSettings, tracker: PassTracker) -> PassOutcome:
    """Schedule the binding at `key` once. Cancellation before the commit point leaves no trace."""
    entry = ctx.bindings.entry(key)
    if entry is None:
        return PassOutcome.FORGOTTEN
    if isinstance(entry, InvalidBinding):
        return await _reject_invalid(entry, ctx, tracker)
    binding = entry.binding
    if binding.deletion_timestamp is not None:
        tracker.enter_commit()
        await _event_pair(ctx, entry, "Warning", FAILED_REASON, deleting_message(binding))
        return PassOutcome.SKIPPED
    if binding.placement is None:
        scope = "resourceBinding" if binding.scope is Scope.NAMESPACED else "clusterResourceBinding"
        return await _refuse(entry, f"failed to get placement from {scope}({binding.key})", ctx, tracker)
    snapshot = ctx.clusters.snapshot()
    trigger = schedule_trigger(
        binding, snapshot.by_name, multiple_pod_templates=settings.options.multiple_pod_templates
    )
    owed = trigger is None and condition_owed(binding)
    if owed:
        logger.info("binding %s: generation %d has no Scheduled condition yet: deciding again", key, binding.generation)
        trigger = ScheduleType.RECONCILE
    if trigger is None:
        return await _observe_generation(binding, ctx, tracker)
    attempt = Attempt(trigger, time.perf_counter(), tracker.attempt)
    reserved = await _decide_and_reserve(entry, snapshot, ctx, settings, tracker, owed=owed)
    if isinstance(reserved, PassOutcome):
        return reserved
    decision, reservation = reserved
    tracker.enter_commit()
    return await _bind(entry, decision, ctx, settings.framework, reservation, attempt)


async def _decide_and_reserve(
    entry: ParsedBinding,
    snapshot: Snapshot,
    ctx: PassContext,
    settings: PassSettings,
    tracker: PassTracker,
    *,
    owed: bool,
) -> PassOutcome | tuple[Decision, Reservation | None]:
    """Decide, then Reserve: the decision and its reservation, or the outcome that ends the pass before its commit
    point. Decided again on a fresh snapshot when other passes reserved on its clusters meanwhile (RESERVE_TRIES
    times). A Reserve plugin's failure becomes the decision's error, with nothing reserved and nothing placed (the
    observed affinity term is left as it was): its condition names the plugin, as any plugin's failure does."""
    framework, binding = settings.framework, entry.binding
    for _ in range(RESERVE_TRIES):
        state = CycleState()
        try:
            decision = await settings.decide(binding, snapshot, state)
        except OverCpuLimit as error:
            # Tried again when clusters change (or at the unschedulable flush), not in a loop of long decisions.
            return await _refuse(entry, str(error), ctx, tracker, outcome=PassOutcome.UNSCHEDULABLE)
        if owed and _placements(decision.clusters or ()) != _placements(binding.clusters):
            # Deciding again only recovers a lost condition: it never moves a binding Karmada would leave alone.
            logger.info("binding %s: deciding again would change its clusters, which no rule asks for: left as it "
                        "is, generation %d recorded without a condition (as Karmada does)", binding.key,
                        binding.generation)
            return await _observe_generation(binding, ctx, tracker)
        try:
            reservation = framework.reserve(binding, decision, state)
        except SchedulingError as error:
            return Decision(None, None, error, decision.warnings), None  # nothing placed: the term stays as it was
        if reservation is not None:
            return decision, reservation
        snapshot = ctx.clusters.snapshot()
    logger.info("binding %s: other passes reserved capacity on its clusters while it decided, %d times: requeued",
                binding.key, RESERVE_TRIES)
    return PassOutcome.CONFLICT


@dataclass(frozen=True, slots=True)
class SpecWrite:
    """What the spec write of a pass did. `landed`: the decision's `spec.clusters` is in the binding now (written
    by this pass, or there already); `written`: changed by this pass (a patch the server applied as a no-op keeps
    the resourceVersion: not written). `version`/`generation`: what the status write goes against. `error` and
    `verdict`: the decision's, or the aggregate with the write's error. `ended`: the outcome that ends the pass
    here (a 409, a 404, a terminating namespace), or None."""

    landed: bool
    version: str
    generation: int
    error: BaseException | None
    verdict: ConditionVerdict
    ended: PassOutcome | None = None
    written: bool = False


async def _bind(
    entry: ParsedBinding,
    decision: Decision,
    ctx: PassContext,
    framework: Framework,
    reservation: Reservation | None,
    attempt: Attempt,
) -> PassOutcome:
    """Bind: the spec write, then the reservation settled (it stands when the placement landed, and is undone
    when it did not or the write was cut), then the condition, the decision line and the events."""
    try:
        spec = await _write_spec(entry.binding, decision, ctx)
    except BaseException:
        if reservation is not None:
            framework.unreserve(reservation)
        raise
    if reservation is not None:
        if spec.landed:
            framework.bound(reservation, written=spec.written)
        else:
            framework.unreserve(reservation)
    if spec.landed:
        ctx.claims.clear(entry.binding.key)  # a preemptor placed: the capacity it claimed is its own now
    if spec.ended is not None:
        return spec.ended
    if isinstance(decision.error, PreemptingError):
        return await _preempt(entry, decision, decision.error, ctx, attempt)
    return await _report(entry, decision, spec, ctx, attempt)


async def _preempt(
    entry: ParsedBinding,
    decision: Decision,
    error: PreemptingError,
    ctx: PassContext,
    attempt: Attempt,
) -> PassOutcome:
    """The preemption the decision planned: the victims' evictions, then the preemptor's condition (Preempting, or
    SchedulerError when a victim could not be evicted) and its decision line. No ScheduleBindingFailed event: the
    preemptor's PreemptionInitiated and each victim's Preempted say what happened (as the PR's)."""
    binding = entry.binding
    preempted = await carry_out(entry, error, ctx, involved_binding)
    if preempted.verdict is None:
        return preempted.outcome
    ended = await _write_status(binding, binding_ref(binding), preempted.verdict, ctx, version=preempted.version,
                                generation=binding.generation, affinity_name=None)
    if ended is not None:
        return ended
    seconds = attempt.seconds()
    ctx.metrics.observe_attempt(AttemptResult.ERROR, attempt.trigger, seconds)
    preempting = preempted.verdict.reason != "SchedulerError"  # else a victim could not be evicted: ours to act on
    ctx.metrics.schedule_error(owner=preempting)
    _log_decision(binding, preempted.verdict, decision, attempt, seconds, owner=preempting)
    return preempted.outcome


async def _write_spec(binding: Binding, decision: Decision, ctx: PassContext) -> SpecWrite:
    """The fenced spec write (resourceVersion precondition), skipped when the binding holds the result already
    (Karmada sends no empty diff). A write error other than 409/404 joins the decision's error."""
    version, generation = binding.resource_version, binding.generation
    verdict = condition_for(decision.error)
    unwritten = SpecWrite(False, version, generation, decision.error, verdict)
    if decision.clusters is None:
        return unwritten
    placement_json = json.dumps(binding.placement.to_dict() if binding.placement else {}, separators=(",", ":"))
    if binding.applied_placement == placement_json and binding.clusters == decision.clusters:
        return SpecWrite(True, version, generation, decision.error, verdict)
    clusters = [t.to_dict() for t in decision.clusters]
    try:
        claim = (CLAIM_ANNOTATION,) if CLAIM_ANNOTATION in binding.annotations else ()
        written = await patch_schedule_result(ctx.client, binding_ref(binding), version, placement_json, clusters,
                                              drop_annotations=claim)
    except Conflict:
        ctx.metrics.write(WriteKind.SPEC, WriteResult.CONFLICT)
        logger.info("binding %s changed after our read (409): decision dropped, requeued", binding.key)
        return replace(unwritten, ended=PassOutcome.CONFLICT)
    except WriteGateClosed:
        ctx.metrics.write(WriteKind.SPEC, WriteResult.GATE_CLOSED)
        raise
    except NotFound:
        ctx.metrics.write(WriteKind.SPEC, WriteResult.ERROR)
        logger.info("binding %s was deleted after our read (404): forgotten", binding.key)
        return replace(unwritten, ended=PassOutcome.FORGOTTEN)
    except KubeError as patch_error:
        ctx.metrics.write(WriteKind.SPEC, WriteResult.ERROR)
        if isinstance(patch_error, Forbidden) and patch_error.namespace_terminating:
            return replace(unwritten, ended=PassOutcome.FORGOTTEN)
        error, verdict = _with_write_error(decision.error, patch_error)
        return replace(unwritten, error=error, verdict=verdict)
    ctx.metrics.write(WriteKind.SPEC, WriteResult.OK)
    landed = ObjectMeta.of(written)
    changed = bool(landed.resource_version) and landed.resource_version != version  # a no-op patch keeps it
    version, generation = landed.resource_version or version, landed.generation or generation
    ctx.bindings.wrote(binding.key, generation)
    if ctx.workload_groups is not None:
        ctx.workload_groups.assigned(written)
    return SpecWrite(True, version, generation, decision.error, verdict, written=changed)


async def _report(
    entry: ParsedBinding,
    decision: Decision,
    spec: SpecWrite,
    ctx: PassContext,
    attempt: Attempt,
) -> PassOutcome:
    """After the spec write: the condition (one status write), the attempt's metric, the decision line, and
    the events on the binding and its resource template."""
    binding = entry.binding
    error, verdict = spec.error, spec.verdict
    outcome = await _write_status(
        binding, binding_ref(binding), verdict, ctx, version=spec.version, generation=spec.generation,
        affinity_name=decision.affinity_name, after_spec_write=spec.version != binding.resource_version,
    )
    if outcome is not None:
        return outcome
    seconds = attempt.seconds()
    ctx.metrics.observe_attempt(
        AttemptResult.ERROR if error is not None and not isinstance(error, FitError) else AttemptResult.SCHEDULED,
        attempt.trigger, seconds,
    )
    if error is not None:
        ctx.metrics.schedule_error(owner=owner_must_act(error))
    _log_decision(binding, verdict, decision, attempt, seconds, owner=owner_must_act(error))
    for warning in decision.warnings:
        await _event_pair(ctx, entry, "Warning", FAILED_REASON, warning)
    kind, message = decision.event(binding)
    event_type: EventType = "Normal" if kind == "Normal" else "Warning"
    if error is not decision.error:
        event_type, message = "Warning", verdict.message
    reason = SUCCEED_REASON if event_type == "Normal" else FAILED_REASON
    await _event_pair(ctx, entry, event_type, reason, message)
    return _outcome_of(error, verdict)


def _log_decision(
    binding: Binding, verdict: ConditionVerdict, decision: Decision, attempt: Attempt, seconds: float, *,
    owner: bool = False,
) -> None:
    """The one line of a pass that decided: which binding, the result, how long, which try (`owner`: a failure
    the binding's owner or the fleet's must act on)."""
    clusters = [(target.name, target.replicas) for target in decision.clusters or ()]
    log_decision(DecisionRecord(
        binding.key, binding.scope.value, verdict.reason, verdict.message, clusters, attempt.trigger.value, seconds,
        attempt.number, owner=owner,
    ))


def _placements(clusters: Iterable[TargetCluster]) -> set[tuple[str, int]]:
    """Where a decision put replicas, as every Karmada API version stores it. The per-component results
    (`spec.clusters[].components`, karmada-io/karmada #7837) are derived from `spec.components`, and a Karmada
    v1.18 API server prunes them: two decisions that differ only there are one decision."""
    return {(target.name, target.replicas) for target in clusters}


def _with_write_error(
    decision_error: SchedulingError | None, write_error: KubeError
) -> tuple[BaseException, ConditionVerdict]:
    """Karmada aggregates [decision error, write error]; the condition follows its table for aggregates. A
    write that got no answer at all (connection refused or cut) is reported the same way, with its text."""
    items = [str(decision_error)] if decision_error is not None else []
    items.append(write_error.message if isinstance(write_error, ApiError) else str(write_error))
    unique = list(dict.fromkeys(items))
    text = unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"
    if isinstance(decision_error, FitError):
        return write_error, ConditionVerdict("False", "NoClusterFit", text, retry=True)
    if isinstance(write_error, Forbidden) and write_error.reason == "QuotaExceeded":
        return write_error, ConditionVerdict("False", "QuotaExceeded", write_error.message, retry=True)
    return write_error, ConditionVerdict("False", "SchedulerError", text, retry=True)


async def _write_status(
    binding: Binding,
    ref: BindingRef,
    verdict: ConditionVerdict,
    ctx: PassContext,
    *,
    version: str,
    generation: int,
    affinity_name: str | None,
    after_spec_write: bool = False,
) -> PassOutcome | None:
    """The one status write of a pass; a PassOutcome when it ends the pass early (409, namespace gone).

    A 409 after our own spec write succeeded cannot drop the decision (it is in `spec.clusters` already), and
    no later pass would write its condition (the result matches, so nothing triggers one). So when the spec is
    still at the generation we wrote (only status or metadata changed meanwhile), the status write is sent once
    more against a fresh read; otherwise the key is requeued for the newer spec."""
    latest = ctx.bindings.body(binding.key)
    status = status_of(latest) if latest is not None else {}
    for attempt in range(2 if after_spec_write else 1):
        patch = status_patch(status, verdict, ctx.now(), observed_generation=generation, affinity_name=affinity_name)
        if patch is None:
            return None
        ended = await _counted_status_write(ctx, ref, version, patch)
        if ended is not PassOutcome.CONFLICT:
            return ended
        if attempt == 0 and after_spec_write:
            fresh = await ctx.client.get(ref.path())
            meta = ObjectMeta.of(fresh)
            if meta.generation == generation:
                version, status = meta.resource_version, status_of(fresh)
                continue
        logger.info("binding %s changed before its status write (409): requeued", binding.key)
        return PassOutcome.CONFLICT
    return None


def _outcome_of(error: BaseException | None, verdict: ConditionVerdict) -> PassOutcome:
    if error is None:
        return PassOutcome.SCHEDULED
    if isinstance(error, FitError) and not verdict.retry:
        return PassOutcome.NO_CLUSTER_FIT
    if isinstance(error, UnschedulableError):
        return PassOutcome.UNSCHEDULABLE
    return PassOutcome.ERROR


async def _observe_generation(binding: Binding, ctx: PassContext, tracker: PassTracker) -> PassOutcome:
    """No scheduling needed: record that this generation was seen (the last step of Karmada's
    `pkg/scheduler/scheduler.go: doScheduleBinding` does the same)."""
    if binding.generation == binding.status.scheduler_observed_generation:
        return PassOutcome.SKIPPED
    tracker.enter_commit()
    patch = {"schedulerObservedGeneration": binding.generation}
    outcome = await _counted_status_write(ctx, binding_ref(binding), binding.resource_version, patch)
    return outcome or PassOutcome.SKIPPED


async def _counted_status_write(
    ctx: PassContext, ref: BindingRef, version: str, status: Mapping[str, Any]
) -> PassOutcome | None:
    """One fenced status write, counted: None when it landed, CONFLICT on a 409, FORGOTTEN when the namespace
    is terminating; other failures are raised. Every status write of a pass goes through here."""
    try:
        await patch_status(ctx.client, ref, version, status)
    except Conflict:
        ctx.metrics.write(WriteKind.STATUS, WriteResult.CONFLICT)
        return PassOutcome.CONFLICT
    except WriteGateClosed:
        ctx.metrics.write(WriteKind.STATUS, WriteResult.GATE_CLOSED)
        raise
    except Forbidden as error:
        ctx.metrics.write(WriteKind.STATUS, WriteResult.ERROR)
        if error.namespace_terminating:
            return PassOutcome.FORGOTTEN
        raise
    except KubeError:
        ctx.metrics.write(WriteKind.STATUS, WriteResult.ERROR)
        raise
    ctx.metrics.write(WriteKind.STATUS, WriteResult.OK)
    return None


async def _reject_invalid(entry: InvalidBinding, ctx: PassContext, tracker: PassTracker) -> PassOutcome:
    """A binding the model rejects: refused with its field path. Every other binding keeps flowing."""
    meta = entry.meta
    if meta.kind not in (Scope.NAMESPACED.value, Scope.CLUSTER.value) or not meta.name:
        # No condition can be written to it: an ERROR line, not the owner's WARNING, is all that tells.
        log_decision(DecisionRecord(meta.key or "?", meta.kind or "?", UNREADABLE_REASON, f"ignored: {entry.error}",
                                    attempt=tracker.attempt))
        return PassOutcome.ERROR
    return await _refuse(entry, f"invalid binding: {entry.error}", ctx, tracker)


async def _refuse(
    entry: StoredBinding,
    message: str,
    ctx: PassContext,
    tracker: PassTracker,
    *,
    outcome: PassOutcome = PassOutcome.ERROR,
) -> PassOutcome:
    """A binding that cannot be scheduled as it is (invalid, no placement, a decision over its CPU limit):
    Scheduled=False/SchedulerError with `message`, one Warning event when the condition changes, and a retry
    (`outcome` says how). Karmada only retries a binding without placement; the condition says why."""
    verdict = ConditionVerdict("False", "SchedulerError", message, retry=True)
    meta = entry.meta
    log_decision(DecisionRecord(meta.key, meta.kind, verdict.reason, message, attempt=tracker.attempt, refused=True))
    patch = status_patch(entry.status, verdict, ctx.now(), observed_generation=0)
    if patch is None:
        return outcome
    tracker.enter_commit()
    ended = await _counted_status_write(ctx, BindingRef.of_meta(meta), meta.resource_version, patch)
    if ended is not None:
        return ended
    await ctx.events.record(involved_binding(meta), "Warning", FAILED_REASON, message)
    ctx.metrics.write(WriteKind.EVENT, WriteResult.OK)
    return outcome


async def _event_pair(ctx: PassContext, entry: ParsedBinding, type_: EventType, reason: str, message: str) -> None:
    """The same event on the binding and on its resource template (Karmada's
    `pkg/scheduler/scheduler.go: recordScheduleResultEventForResourceBinding`)."""
    await ctx.events.record(involved_binding(entry.meta), type_, reason, message)
    await ctx.events.record(involved_resource(entry.binding), type_, reason, message)
    ctx.metrics.write(WriteKind.EVENT, WriteResult.OK)

"""Binding priority preemption's writes (gates PriorityBasedScheduling and PriorityBasedPreemptiveScheduling, Karmada's
open PR #7832; docs/design/preemption.md): what a pass writes after its commit point when its decision planned a
preemption. The claims live in `state/claims.py`, the planner the framework asks at PostFilter in
`framework/preemptor.py`.

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

import logging
from collections.abc import Callable
from dataclasses import dataclass

from ...algorithm.errors import ConditionVerdict, condition_for
from ...algorithm.preemption import (
    Candidate,
    PreemptingError,
    PreemptionPlan,
    victim_candidates,
)
from ...kube.bindings import BindingRef, patch_annotations, patch_graceful_eviction
from ...kube.errors import ApiError, Conflict, KubeError
from ...kube.gate import WriteGateClosed
from ...model import Binding, ObjectMeta, ParsedBinding
from ...model.body import BindingBody
from ..observability.labels import PassOutcome, WriteKind, WriteResult
from ..state.claims import CLAIM_ANNOTATION, claim_annotation
from .context import PassContext

logger = logging.getLogger(__name__)

GRACE_PERIOD_SECONDS = 30
EVICTION_REASON, EVICTION_PRODUCER, PURGE_MODE = "BindingPreempted", "Scheduler", "Gracefully"
INITIATED_REASON, PREEMPTED_REASON = "PreemptionInitiated", "Preempted"


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

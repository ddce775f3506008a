"""`binding-scheduler explain`: why a binding lands where it does, verdict by verdict."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from ..algorithm.errors import SchedulingError, condition_for
from ..algorithm.events import clusters_text
from ..algorithm.explain import ClusterVerdicts, cluster_verdicts, mark_result, why_not_selected
from ..algorithm.explain_division import division_lines
from ..algorithm.plugins import AttemptContext, WorkloadGroups
from ..algorithm.preemption import PreemptingError
from ..algorithm.registry import PluginSet
from ..algorithm.schedule import DEFAULT_OPTIONS, ScheduleOptions
from ..algorithm.snapshot import Snapshot
from ..algorithm.triggers import schedule_trigger
from ..algorithm.walk import Decision
from ..kube.jsonio import dumps_indented
from ..model import Binding
from ..model.meta import InvalidBinding, ParsedBinding, StoredBinding
from ..scheduling.framework.cpu import OverCpuLimit
from ..scheduling.framework.record import AttemptRecord, AttemptRecorder
from ..scheduling.framework.runner import Framework
from .common import (
    add_estimator_arguments,
    add_input_arguments,
    load_or_exit,
    open_estimator,
    run_command,
    skip_reasons,
)
from .inputs import Inputs
from .settings import decision_settings


def find_binding(inputs: Inputs, reference: str) -> StoredBinding:
    namespace, _, name = reference.rpartition("/")
    matches = [
        e for e in inputs.entries if e.meta.name == name and (not namespace or e.meta.namespace == namespace)
    ]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        known = ", ".join(e.meta.key for e in inputs.entries) or "none"
        print(f"error: no binding {reference!r} in the inputs (bindings: {known})", file=sys.stderr)
    else:
        keys = ", ".join(e.meta.key for e in matches)
        print(f"error: {reference!r} is ambiguous ({keys}); use NAMESPACE/NAME", file=sys.stderr)
    raise SystemExit(2)


def not_decided(entry: StoredBinding, skipped: str | None, output: str) -> str:
    """What explain says of a binding it does not decide: one `run` would skip, or one the model refuses."""
    meta = entry.meta
    extra: dict[str, Any]
    if skipped is not None:
        text, extra = f"skipped: {skipped} (--all explains the decision anyway)", {
            "scheduled": False, "reason": "Skipped", "message": f"skipped: {skipped}", "skipped": True}
    else:
        assert isinstance(entry, InvalidBinding)
        text, extra = f"SchedulerError invalid binding: {entry.error}", {
            "scheduled": False, "reason": "SchedulerError", "message": f"invalid binding: {entry.error}"}
    if output == "json":
        return dumps_indented({"kind": meta.kind, "namespace": meta.namespace, "name": meta.name, **extra})
    return f"{meta.kind} {meta.key}: {text}"


def attempt_verdicts(
    record: AttemptRecord, snapshot: Snapshot, plugins: PluginSet, groups: WorkloadGroups | None = None
) -> list[ClusterVerdicts]:
    verdicts = cluster_verdicts(AttemptContext.of(record.binding, snapshot, groups), plugins)
    details = {d.name: d for d in record.candidates.details} if record.candidates is not None else {}
    for entry in verdicts:
        entry.detail = details.get(entry.name)
        if entry.name in record.general:
            entry.estimates["general"] = record.general[entry.name]
        if entry.name in record.accurate:
            entry.estimates["accurate"] = record.accurate[entry.name]
        elif entry.name in record.accurate_failures:
            entry.estimates["accurate"] = f"failed: {record.accurate_failures[entry.name]}"
    result = record.outcome if isinstance(record.outcome, list) else []
    mark_result(verdicts, record.selected, result)
    return verdicts


ROOM_LEGEND = (
    "room: 'general' is the general estimator's count of replicas that still fit, from the cluster's resource "
    "summary (allocatable minus allocated minus allocating, over one replica's requests; by its resource models' "
    "grades where it has them); 'accurate' is its scheduler-estimator's answer; allocatable is the least of them, "
    "less what other passes were assumed to take; available adds the replicas the binding holds there now",
)


def _describe_strategy(binding: Binding) -> str:
    placement = binding.placement
    if placement is None or placement.replica_scheduling is None:
        return "Duplicated"
    scheduling = placement.replica_scheduling
    text = scheduling.type.value
    if scheduling.division_preference is not None and scheduling.type.value == "Divided":
        text += f"/{scheduling.division_preference.value}"
        weights = scheduling.weight_preference
        if weights is not None and weights.dynamic_weight:
            text += f" (dynamic weight: {weights.dynamic_weight})"
        elif scheduling.division_preference.value == "Weighted":
            text += " (static weights)"
    return text


def _cluster_lines(entry: ClusterVerdicts, record: AttemptRecord) -> list[str]:
    if entry.cluster.deleting:
        return [f"  cluster {entry.name}: being deleted, not considered"]
    state = "feasible" if entry.feasible else "filtered out"
    lines = [f"  cluster {entry.name}: {state}"]
    verdicts = "; ".join(f"{name} {'ok' if reason is None else 'FAILED: ' + reason}" for name, reason in entry.filters)
    lines.append(f"    filters: {verdicts or 'none enabled'}")
    if entry.feasible:
        total = sum(score for _, score in entry.scores if isinstance(score, int))
        parts = ", ".join(f"{name} {score}" for name, score in entry.scores)
        lines.append(f"    scores: {parts or 'none enabled'} (total {total})")
    if entry.estimates or entry.detail is not None:
        estimates = ", ".join(f"{name} {value}" for name, value in entry.estimates.items()) or "not asked"
        line = f"    room (replicas that fit): {estimates}"
        if entry.detail is not None:
            line += f" -> allocatable {entry.detail.allocatable}, available {entry.detail.available}"
            if entry.detail.overflow_order:
                line += f", overflow tier {entry.detail.overflow_order}"
        lines.append(line)
    if entry.feasible and record.candidates is not None:
        if not entry.selected:
            lines.append(f"    selected: no ({why_not_selected(record.binding, entry.cluster, record.selected)})")
        elif entry.replicas is None and isinstance(record.outcome, list):
            lines.append("    selected: yes, no replicas (the division gave it none)")
        else:
            placed = f", replicas {entry.replicas}" if entry.replicas is not None else ""
            lines.append(f"    selected: yes{placed}")
    return lines


def render_text(
    binding: Binding,
    records: Sequence[AttemptRecord],
    decision: Decision,
    snapshot: Snapshot,
    plugins: PluginSet,
    options: ScheduleOptions = DEFAULT_OPTIONS,
    groups: WorkloadGroups | None = None,
) -> str:
    trigger = schedule_trigger(binding, snapshot.by_name, multiple_pod_templates=options.multiple_pod_templates)
    lines = [
        f"{binding.scope.value} {binding.key}: {binding.replicas} replicas, {_describe_strategy(binding)}",
        f"current spec.clusters: {clusters_text(binding.clusters)}",
        f"a pass now would {'schedule (' + trigger.value + ')' if trigger else 'not reschedule (nothing changed)'}",
        f"plugins: {', '.join(plugins.names) or 'none'}"
        + (f" (unknown, ignored: {', '.join(plugins.unknown)})" if plugins.unknown else ""),
    ]
    if any(record.candidates is not None for record in records):
        lines += ROOM_LEGEND
    for number, record in enumerate(records, start=1):
        term = record.binding.status.scheduler_observing_affinity_name
        title = f"attempt {number}" + (f" with clusterAffinities term {term!r}" if term else "")
        lines += ["", f"{title}:"]
        for entry in attempt_verdicts(record, snapshot, plugins, groups):
            lines += _cluster_lines(entry, record)
        if record.trace:
            lines.append("  selection:")
            lines += [f"    {line}" for line in record.trace]
        if division := division_lines(record.binding, record.selected):
            lines.append("  division:")
            lines += [f"    {line}" for line in division]
        outcome = record.outcome
        shown = str(outcome) if isinstance(outcome, SchedulingError) else clusters_text(outcome or [])
        lines.append(f"  outcome: {shown}")
    verdict = condition_for(decision.error)
    lines += ["", f"result: Scheduled={verdict.status} reason={verdict.reason}", f"  message: {verdict.message}"]
    if decision.clusters is None:
        lines.append("  spec.clusters: left unchanged (nothing is written)")
    else:
        lines.append(f"  spec.clusters: {clusters_text(decision.clusters)}")
    if decision.affinity_name is not None:
        lines.append(f"  status.schedulerObservingAffinityName: {decision.affinity_name}")
    lines += [f"  warning event: {w}" for w in decision.warnings]
    lines += _preemption_lines(decision)
    return "\n".join(lines)


def _preemption_lines(decision: Decision) -> list[str]:
    """Why the binding preempts (the capacity failure), on which cluster, and whom (each victim's priority and
    replicas there)."""
    error = decision.error
    if not isinstance(error, PreemptingError):
        return []
    plan = error.plan
    lines = [f"  preempting on {plan.cluster}, because: {error.cause}"]
    lines += [f"    evicts {v.key} (priority {v.priority}, {v.replicas} replicas there)" for v in plan.victims]
    if not plan.victims:
        lines.append("    evicts no one more: its claim holds the capacity its earlier victims are freeing")
    return lines


def _preemption_document(decision: Decision) -> dict[str, Any] | None:
    error = decision.error
    if not isinstance(error, PreemptingError):
        return None
    plan = error.plan
    return {"cluster": plan.cluster, "cause": str(error.cause),
            "victims": [{"binding": v.key, "priority": v.priority, "replicas": v.replicas} for v in plan.victims]}


def render_json(
    binding: Binding, records: Sequence[AttemptRecord], decision: Decision, snapshot: Snapshot, plugins: PluginSet,
    groups: WorkloadGroups | None = None,
) -> str:
    verdict = condition_for(decision.error)
    attempts: list[dict[str, Any]] = []
    for record in records:
        outcome = record.outcome
        attempts.append(
            {
                "affinityName": record.binding.status.scheduler_observing_affinity_name or None,
                "clusters": [
                    {
                        "name": e.name,
                        "deleting": e.cluster.deleting,
                        "filters": [{"plugin": n, "passed": r is None, "reason": r} for n, r in e.filters],
                        "scores": {n: s for n, s in e.scores},
                        "estimates": e.estimates,
                        "allocatable": e.detail.allocatable if e.detail else None,
                        "available": e.detail.available if e.detail else None,
                        "selected": e.selected,
                        "replicas": e.replicas,
                    }
                    for e in attempt_verdicts(record, snapshot, plugins, groups)
                ],
                "selection": record.trace,
                "division": division_lines(record.binding, record.selected),
                "error": str(outcome) if isinstance(outcome, SchedulingError) else None,
                "result": [t.to_dict() for t in outcome] if isinstance(outcome, list) else None,
            }
        )
    document: dict[str, Any] = {
        "kind": binding.scope.value,
        "namespace": binding.namespace,
        "name": binding.name,
        "attempts": attempts,
        "scheduled": decision.error is None,
        "reason": verdict.reason,
        "message": verdict.message,
        "clusters": None if decision.clusters is None else [t.to_dict() for t in decision.clusters],
        "warnings": list(decision.warnings),
    }
    preemption = _preemption_document(decision)
    if preemption is not None:
        document["preemption"] = preemption
    return dumps_indented(document)


async def _run(args: argparse.Namespace) -> int:
    inputs = await load_or_exit(args)
    entry = find_binding(inputs, args.binding)
    settings = decision_settings(args, inputs)
    skipped = skip_reasons(inputs, settings, every=args.all_bindings).get(id(entry))
    if skipped is not None or not isinstance(entry, ParsedBinding):
        print(not_decided(entry, skipped, args.output))
        return 0
    binding = entry.binding
    plugins = settings.plugins()
    snapshot = Snapshot(inputs.clusters)
    options = settings.options
    groups = settings.workload_groups(inputs.bindings)
    recorder = AttemptRecorder()
    async with open_estimator(args) as estimator:
        framework = Framework(plugins, estimator=estimator, options=options, hooks=[recorder], workload_groups=groups,
                              preemptor=settings.preemption(inputs.bindings))
        try:
            decision = await framework.decide(binding, snapshot)
        except OverCpuLimit as error:
            print(f"{binding.key}: not decided: {error}", file=sys.stderr)
            return 1
    if args.output == "json":
        print(render_json(binding, recorder.records, decision, snapshot, plugins, groups))
    else:
        print(render_text(binding, recorder.records, decision, snapshot, plugins, options, groups))
    return 0


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "explain",
        help="show every filter verdict, score, estimate and the division for one binding",
        description="Explain how one binding would be scheduled against the clusters in the inputs (files or a "
        "live plane, read-only): every "
        "filter's verdict per cluster (all of them), the scores, each estimator's answer, the selection, "
        "how the replicas were divided, and the result.",
    )
    add_input_arguments(parser)
    parser.add_argument("--binding", required=True, metavar="[NAMESPACE/]NAME", help="the binding to explain")
    parser.add_argument("-o", "--output", choices=("text", "json"), default="text")
    add_estimator_arguments(parser)
    parser.set_defaults(handler=run_command(_run))

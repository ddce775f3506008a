"""`binding-scheduler simulate`: schedule bindings against clusters, from files or a live plane, writing nothing."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from ..algorithm.errors import condition_for
from ..algorithm.plugins import WorkloadGroups
from ..algorithm.preemption import PreemptingError
from ..algorithm.registry import PluginSet
from ..algorithm.schedule import DEFAULT_OPTIONS, ScheduleOptions
from ..algorithm.snapshot import Snapshot
from ..kube.jsonio import dumps_indented
from ..model import Binding, TargetCluster
from ..model.meta import InvalidBinding, ObjectMeta, ParsedBinding, StoredBinding
from ..scheduling.framework.cpu import OverCpuLimit
from ..scheduling.framework.ports import Preemptor, ReplicaEstimator
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
from .settings import DecisionSettings, decision_settings


@dataclass(frozen=True, slots=True)
class SimulationResult:
    meta: ObjectMeta
    """Which binding: kind, namespace and name (also of a binding the model refuses)."""
    scheduled: bool
    reason: str
    message: str
    clusters: tuple[TargetCluster, ...]
    victims: tuple[str, ...] = ()
    """The bindings a preemption would evict (gate PriorityBasedPreemptiveScheduling), by key."""
    previous: tuple[TargetCluster, ...] = ()
    """The binding's `spec.clusters` as it is now (what `--diff` compares against)."""
    skipped: bool = False
    """`run` would leave it alone (Karmada's event filter); `message` says why."""

    @classmethod
    def of(cls, binding: Binding, scheduled: bool, reason: str, message: str,
           clusters: tuple[TargetCluster, ...], victims: tuple[str, ...] = ()) -> SimulationResult:
        return cls(ObjectMeta.of_binding(binding), scheduled, reason, message, clusters, victims, binding.clusters)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": self.meta.kind,
            "namespace": self.meta.namespace,
            "name": self.meta.name,
            "scheduled": self.scheduled,
            "reason": self.reason,
            "message": self.message,
            "clusters": [t.to_dict() for t in self.clusters],
        }
        if self.victims:
            out["victims"] = list(self.victims)
        if self.skipped:
            out["skipped"] = True
        return out


async def simulate(
    bindings: Sequence[Binding],
    snapshot: Snapshot,
    plugins: PluginSet,
    estimator: ReplicaEstimator | None = None,
    options: ScheduleOptions = DEFAULT_OPTIONS,
    workload_groups: WorkloadGroups | None = None,
    preemptor: Preemptor | None = None,
) -> list[SimulationResult]:
    """Schedule every binding as a pass would now; its current `spec.clusters` is the previous result.
    `workload_groups` (gate `WorkloadAffinity`): the groups every binding is decided against. `preemptor`: who a
    binding that fits nowhere would preempt (each binding on its own: no claims carry over)."""
    framework = Framework(plugins, estimator=estimator, options=options, workload_groups=workload_groups,
                          preemptor=preemptor)
    results = []
    for binding in bindings:
        try:
            decision = await framework.decide(binding, snapshot)
        except OverCpuLimit as error:
            results.append(SimulationResult.of(binding, False, "SchedulerError", str(error), binding.clusters))
            continue
        verdict = condition_for(decision.error)
        clusters = decision.clusters if decision.clusters is not None else binding.clusters
        outcome = decision.error
        victims = tuple(v.key for v in outcome.plan.victims) if isinstance(outcome, PreemptingError) else ()
        results.append(SimulationResult.of(binding, decision.error is None, verdict.reason, verdict.message,
                                           clusters, victims))
    return results


def refused(entry: InvalidBinding) -> SimulationResult:
    """A binding the model refuses, as `run` reports it (its Scheduled condition)."""
    return SimulationResult(entry.meta, False, "SchedulerError", f"invalid binding: {entry.error}", ())


def skipped(entry: StoredBinding, reason: str) -> SimulationResult:
    clusters = entry.binding.clusters if isinstance(entry, ParsedBinding) else ()
    return SimulationResult(entry.meta, False, SKIPPED, f"skipped: {reason}", clusters, previous=clusters,
                            skipped=True)


SKIPPED = "Skipped"


async def simulate_inputs(
    inputs: Inputs,
    settings: DecisionSettings,
    estimator: ReplicaEstimator | None = None,
    *,
    every: bool = False,
) -> list[SimulationResult]:
    """Every binding of `inputs` in input order: skipped where `run` would skip it (unless `every`), refused where
    the model refuses it, else decided."""
    reasons = skip_reasons(inputs, settings, every=every)
    bindings = inputs.bindings
    decided = [e for e in inputs.entries if isinstance(e, ParsedBinding) and id(e) not in reasons]
    plugins = settings.plugins()
    results = iter(await simulate([e.binding for e in decided], Snapshot(inputs.clusters), plugins, estimator,
                                  settings.options, settings.workload_groups(bindings), settings.preemption(bindings)))
    ordered = []
    for entry in inputs.entries:
        if id(entry) in reasons:
            ordered.append(skipped(entry, reasons[id(entry)]))
        elif isinstance(entry, InvalidBinding):
            ordered.append(refused(entry))
        else:
            ordered.append(next(results))
    return ordered


def render_table(results: Sequence[SimulationResult]) -> str:
    header = ("KIND", "NAMESPACE", "NAME", "SCHEDULED", "REASON", "CLUSTERS", "MESSAGE")
    rows = [
        (
            r.meta.kind,
            r.meta.namespace or "-",
            r.meta.name,
            "skipped" if r.skipped else "true" if r.scheduled else "false",
            r.reason,
            ",".join(f"{t.name}:{t.replicas}" if t.replicas else t.name for t in r.clusters) or "-",
            f"{r.message} (evicting {', '.join(r.victims)})" if r.victims else r.message,
        )
        for r in results
    ]
    widths = [max(len(row[i]) for row in (header, *rows)) for i in range(len(header) - 1)]
    lines = []
    for row in (header, *rows):
        cells = [cell.ljust(width) for cell, width in zip(row[:-1], widths, strict=True)]
        lines.append("  ".join([*cells, row[-1]]).rstrip())
    return "\n".join(lines)


Change = tuple[str, int | None, int | None]
"""A cluster whose replicas a pass now would change: its name, replicas before (None: not there) and after."""


def changes(result: SimulationResult) -> list[Change]:
    """What the result changes in the binding's `spec.clusters`, cluster by cluster in name order."""
    before = {t.name: t.replicas for t in result.previous}
    after = {t.name: t.replicas for t in result.clusters}
    return [(name, before.get(name), after.get(name)) for name in sorted(before.keys() | after.keys())
            if before.get(name) != after.get(name) or (name in before) != (name in after)]


def render_diff(results: Sequence[SimulationResult], output: str) -> str:
    """`--diff`: binding by binding, what a pass now would change against its current `spec.clusters`."""
    if output != "table":
        document = {"results": [{**r.to_dict(), "previous": [t.to_dict() for t in r.previous],
                                 "changes": [{"cluster": n, "from": a, "to": b} for n, a, b in changes(r)]}
                                for r in results]}
        return _dump(document, output)
    lines = []
    for r in results:
        title = f"{r.meta.kind} {r.meta.key}"
        found = changes(r)
        if r.skipped or not r.scheduled:
            lines.append(f"{title}: no change ({r.message if r.skipped else r.reason + ': ' + r.message})")
        elif not found:
            lines.append(f"{title}: no change")
        else:
            lines.append(f"{title}:")
            lines += [_change_line(change) for change in found]
    return "\n".join(lines)


def _change_line(change: Change) -> str:
    name, before, after = change
    if before is None:
        return f"  + {name}: {after}"
    if after is None:
        return f"  - {name}: {before}"
    return f"  ~ {name}: {before} -> {after}"


def render(results: Sequence[SimulationResult], output: str) -> str:
    if output == "table":
        return render_table(results)
    return _dump({"results": [r.to_dict() for r in results]}, output)


def _dump(document: dict[str, Any], output: str) -> str:
    return dumps_indented(document) if output == "json" else yaml.safe_dump(document, sort_keys=False).rstrip()


async def _run(args: argparse.Namespace) -> int:
    inputs = await load_or_exit(args)
    settings = decision_settings(args, inputs)
    async with open_estimator(args) as estimator:
        results = await simulate_inputs(inputs, settings, estimator, every=args.all_bindings)
    print(render_diff(results, args.output) if args.diff else render(results, args.output))
    print(summary(results), file=sys.stderr)
    unscheduled = any(not r.scheduled and not r.skipped for r in results)
    return UNSCHEDULED if unscheduled and args.fail_on_unscheduled else 0


def summary(results: Sequence[SimulationResult]) -> str:
    count = len(results)
    scheduled = sum(r.scheduled for r in results)
    passed = sum(r.skipped for r in results)
    text = f"{count} binding{'' if count == 1 else 's'}: {scheduled} scheduled, {count - scheduled - passed} not"
    return text + (f", {passed} skipped (--all decides them too)" if passed else "")


UNSCHEDULED = 3
"""`--fail-on-unscheduled`'s exit status when a binding is not scheduled (1 and 2 mean a failure and bad input)."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "simulate",
        help="schedule bindings against clusters, from files or a live plane (read-only)",
        description="Schedule every ResourceBinding and ClusterResourceBinding in the inputs against the "
        "Clusters in the inputs, as the scheduler would now, and print the results in input order. A binding "
        "`run` would leave alone is reported `skipped: <reason>` (--all decides it too); one the model refuses "
        "gets the SchedulerError `run` gives it (exit 2 only with --strict). Nothing is written.",
    )
    add_input_arguments(parser)
    parser.add_argument("-o", "--output", choices=("json", "yaml", "table"), default="table")
    parser.add_argument("--diff", action="store_true",
                        help="print, binding by binding, what a pass now would change in its current spec.clusters")
    parser.add_argument("--fail-on-unscheduled", action="store_true",
                        help=f"exit {UNSCHEDULED} when any binding is not scheduled (for scripts and CI)")
    add_estimator_arguments(parser)
    parser.set_defaults(handler=run_command(_run))



"""`binding-scheduler simulate`: schedule bindings from files against clusters from files, offline."""

from __future__ import annotations

import argparse
import json
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
from ..model import Binding, TargetCluster
from ..scheduling.cpu import OverCpuLimit
from ..scheduling.framework import Framework
from ..scheduling.framework_ports import Preemptor, ReplicaEstimator
from .common import (
    add_estimator_arguments,
    add_input_arguments,
    load_or_exit,
    open_estimator,
    plugins_or_exit,
    preemption,
    run_command,
    schedule_options,
    workload_affinity,
    workload_groups,
)


@dataclass(frozen=True, slots=True)
class SimulationResult:
    binding: Binding
    scheduled: bool
    reason: str
    message: str
    clusters: tuple[TargetCluster, ...]
    victims: tuple[str, ...] = ()
    """The bindings a preemption would evict (gate PriorityBasedPreemptiveScheduling), by key."""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": self.binding.scope.value,
            "namespace": self.binding.namespace,
            "name": self.binding.name,
            "scheduled": self.scheduled,
            "reason": self.reason,
            "message": self.message,
            "clusters": [t.to_dict() for t in self.clusters],
        }
        if self.victims:
            out["victims"] = list(self.victims)
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
            results.append(SimulationResult(binding, False, "SchedulerError", str(error), binding.clusters))
            continue
        verdict = condition_for(decision.error)
        clusters = decision.clusters if decision.clusters is not None else binding.clusters
        outcome = decision.error
        victims = tuple(v.key for v in outcome.plan.victims) if isinstance(outcome, PreemptingError) else ()
        results.append(SimulationResult(binding, decision.error is None, verdict.reason, verdict.message, clusters,
                                        victims))
    return results


def render_table(results: Sequence[SimulationResult]) -> str:
    header = ("KIND", "NAMESPACE", "NAME", "SCHEDULED", "REASON", "CLUSTERS", "MESSAGE")
    rows = [
        (
            r.binding.scope.value,
            r.binding.namespace or "-",
            r.binding.name,
            "true" if r.scheduled else "false",
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


def render(results: Sequence[SimulationResult], output: str) -> str:
    document = {"results": [r.to_dict() for r in results]}
    if output == "json":
        return json.dumps(document, indent=2)
    if output == "yaml":
        return yaml.safe_dump(document, sort_keys=False).rstrip()
    return render_table(results)


async def _run(args: argparse.Namespace) -> int:
    inputs = load_or_exit(args.files, strict=args.strict)
    plugins = plugins_or_exit(args.plugins, workload_affinity=workload_affinity(args))
    options = schedule_options(args)
    groups = workload_groups(args, inputs.bindings)
    preemptor = preemption(args, inputs.bindings)
    async with open_estimator(args) as estimator:
        results = await simulate(inputs.bindings, Snapshot(inputs.clusters), plugins, estimator, options, groups,
                                 preemptor)
    print(render(results, args.output))
    unscheduled = [r for r in results if not r.scheduled]
    plural = "" if len(results) == 1 else "s"
    print(f"{len(results)} binding{plural}: {len(results) - len(unscheduled)} scheduled, {len(unscheduled)} not",
          file=sys.stderr)
    return UNSCHEDULED if unscheduled and args.fail_on_unscheduled else 0


UNSCHEDULED = 3
"""`--fail-on-unscheduled`'s exit status when a binding is not scheduled (1 and 2 mean a failure and bad input)."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "simulate",
        help="schedule bindings from files against clusters from files, offline",
        description="Schedule every ResourceBinding and ClusterResourceBinding in the inputs against the "
        "Clusters in the inputs, as the scheduler would now, and print the results in input order.",
    )
    add_input_arguments(parser)
    parser.add_argument("-o", "--output", choices=("json", "yaml", "table"), default="table")
    parser.add_argument("--fail-on-unscheduled", action="store_true",
                        help=f"exit {UNSCHEDULED} when any binding is not scheduled (for scripts and CI)")
    add_estimator_arguments(parser)
    parser.set_defaults(handler=run_command(_run))



"""Arguments and helpers shared by `simulate` and `explain`."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

from ..algorithm.general_estimator import AssumedWorkload
from ..algorithm.plugins import PluginError, WorkloadGroups
from ..algorithm.registry import PluginSet
from ..algorithm.schedule import ScheduleOptions
from ..model import Binding, Cluster, Component, ObjectReference, ReplicaRequirements
from ..model.config import PreemptionConfig
from ..scheduling.framework_ports import EstimateAnswerLike, ReplicaEstimator
from ..scheduling.plugins import load_plugins, plugin_warnings
from ..scheduling.preemption import Preemption, PreemptionClaims
from ..scheduling.workload_groups import WorkloadGroupIndex
from . import argtypes
from .inputs import Inputs, load_inputs
from .karmada_flags import FALSE_WORDS, TRUE_WORDS


def add_input_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-f", "--filename", dest="files", action="append", required=True, metavar="PATH",
        help="a YAML/JSON file or a folder of them (repeatable); single or multi-document, or kind: List",
    )
    parser.add_argument(
        "--strict", action="store_true",
        help="an unknown field in an input is an error (exit 2), not a warning (kubectl's --validate=strict)",
    )
    parser.add_argument(
        "--plugins", default="*", metavar="SPEC",
        help="Karmada's --plugins syntax: '*' all, 'name' one, '-name' without one (default '*')",
    )
    parser.add_argument(
        "--enable-empty-workload-propagation", action="store_true",
        help="also list selected clusters that received no replicas, with 0",
    )
    parser.add_argument(
        "--feature-gates", default="", metavar="GATE=BOOL,...",
        help=f"Karmada alpha gates to turn on ({', '.join(FEATURE_GATES)}), e.g. MultiplePodTemplatesScheduling=true",
    )


FEATURE_GATES = (
    "MultiplePodTemplatesScheduling", "WorkloadAffinity", "PriorityBasedScheduling",
    "PriorityBasedPreemptiveScheduling",
)


def feature_gates(args: argparse.Namespace) -> dict[str, bool]:
    """`--feature-gates` as given, each value a Go bool as `run --feature-gates` reads it (true, True, TRUE, t, T,
    1 and their false words); an unknown gate or any other value exits 2."""
    gates: dict[str, bool] = {}
    for item in filter(None, (part.strip() for part in args.feature_gates.split(","))):
        name, _, value = item.partition("=")
        if name not in FEATURE_GATES or value not in TRUE_WORDS | FALSE_WORDS:
            expected = ", ".join(f"{gate}=true|false" for gate in FEATURE_GATES)
            print(f"error: --feature-gates {item!r}: expected one of {expected}", file=sys.stderr)
            raise SystemExit(2)
        gates[name] = value in TRUE_WORDS
    return gates


def workload_affinity(args: argparse.Namespace) -> bool:
    """Gate `WorkloadAffinity` (its filters are registered, and read the groups of the input bindings)."""
    return feature_gates(args).get("WorkloadAffinity", False)


def preemption(args: argparse.Namespace, bindings: Sequence[Binding]) -> Preemption | None:
    """With gates PriorityBasedScheduling and PriorityBasedPreemptiveScheduling, preemption among the input
    bindings as they are stored (no claims: each binding is decided on its own); None without them."""
    gates = feature_gates(args)
    if not (gates.get("PriorityBasedScheduling") and gates.get("PriorityBasedPreemptiveScheduling")):
        return None
    return Preemption(lambda: bindings, PreemptionClaims(), max_victims=PreemptionConfig().max_victims)


def workload_groups(args: argparse.Namespace, bindings: Sequence[Binding]) -> WorkloadGroups | None:
    """With gate `WorkloadAffinity`, the workload groups of the input bindings as they are stored (what Karmada's
    binding informer would hold); None without it."""
    return WorkloadGroupIndex.of_bindings(bindings) if workload_affinity(args) else None


def schedule_options(args: argparse.Namespace) -> ScheduleOptions:
    """The options the flags ask for; an unknown gate or a value other than true/false exits 2."""
    gates = feature_gates(args)
    return ScheduleOptions(
        enable_empty_workload_propagation=args.enable_empty_workload_propagation,
        multiple_pod_templates=gates.get("MultiplePodTemplatesScheduling", False),
    )


def add_estimator_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--estimator", action="append", default=[], metavar="CLUSTER=HOST:PORT",
        help="ask this accurate estimator (Karmada's gRPC service) for CLUSTER (repeatable)",
    )
    parser.add_argument(
        "--estimator-timeout", type=argtypes.duration, default=3.0, metavar="DURATION",
        help="one deadline for all estimator calls of an attempt, a Go duration (default 3s)",
    )


def run_command(
    command: Callable[[argparse.Namespace], Coroutine[Any, Any, int]],
) -> Callable[[argparse.Namespace], int]:
    """An async command as an argparse handler: its exit status, including the SystemExit of bad input."""

    def handle(args: argparse.Namespace) -> int:
        try:
            return asyncio.run(command(args))
        except SystemExit as exit_:
            return int(exit_.code or 0)

    return handle


def fail(lines: list[str], code: int = 2) -> SystemExit:
    """Each problem on a line of its own on stderr (stdout carries only results: `-o json` stays parseable)."""
    for line in lines:
        print(line, file=sys.stderr)
    return SystemExit(code)


def load_or_exit(files: list[str], *, strict: bool = False) -> Inputs:
    """Parse every input; on any problem print one `FILE: KIND NAME: path: problem` line each and exit 2. An
    unknown field is a `warning:` line (with `strict`, a problem)."""
    inputs = load_inputs(files, strict=strict)
    for line in inputs.warnings:
        print(f"warning: {line}", file=sys.stderr)
    if inputs.errors:
        raise fail(inputs.errors)
    if not inputs.bindings:
        raise fail([f"{', '.join(files)}: no ResourceBinding or ClusterResourceBinding found"])
    for skipped in inputs.skipped:
        print(f"note: ignoring {skipped} (not a Cluster or binding)", file=sys.stderr)
    return inputs


def plugins_or_exit(spec: str, *, workload_affinity: bool = False) -> PluginSet:
    try:
        plugins = load_plugins(spec, workload_affinity=workload_affinity)
    except PluginError as error:
        print(f"error: {error}", file=sys.stderr)
        raise SystemExit(2) from error
    for line in plugin_warnings("--plugins", plugins):
        print(f"warning: {line}", file=sys.stderr)
    return plugins


def estimator_endpoints(values: list[str]) -> dict[str, str]:
    endpoints: dict[str, str] = {}
    for value in values:
        cluster, _, address = value.partition("=")
        host, _, port = address.rpartition(":")
        if not cluster or not host or not port.isdigit():
            print(f"error: --estimator {value!r}: expected CLUSTER=HOST:PORT", file=sys.stderr)
            raise SystemExit(2)
        endpoints[cluster] = address
    return endpoints


@asynccontextmanager
async def open_estimator(args: argparse.Namespace) -> AsyncIterator[ReplicaEstimator | None]:
    """The accurate estimator the flags ask for (None without `--estimator`), closed on exit."""
    endpoints = estimator_endpoints(args.estimator)
    if not endpoints:
        yield None
        return
    timeout: float = args.estimator_timeout
    from ..estimation import AccurateEstimator, EstimatorSettings

    estimator = AccurateEstimator(EstimatorSettings(timeout=timeout, endpoints=endpoints))
    try:
        yield OnlyListed(estimator, frozenset(endpoints))
    finally:
        await estimator.close()


class OnlyListed:
    """Offline, only the clusters given with `--estimator` have an accurate estimator: the others are not
    looked up (no service discovery, no DNS), so they keep the general estimate without a failure."""

    def __init__(self, estimator: ReplicaEstimator, listed: frozenset[str]) -> None:
        self.estimator = estimator
        self.listed = listed

    async def max_available_replicas(
        self,
        clusters: Sequence[Cluster],
        requirements: ReplicaRequirements | None,
        *,
        resource: ObjectReference | None = None,
        assumed: Mapping[str, Sequence[AssumedWorkload]] | None = None,
    ) -> EstimateAnswerLike:
        asked = [c for c in clusters if c.name in self.listed]
        return await self.estimator.max_available_replicas(asked, requirements, resource=resource, assumed=assumed)

    async def max_available_component_sets(
        self,
        clusters: Sequence[Cluster],
        components: Sequence[Component],
        namespace: str,
        *,
        resource: ObjectReference | None = None,
        assumed: Mapping[str, Sequence[AssumedWorkload]] | None = None,
    ) -> EstimateAnswerLike:
        asked = [c for c in clusters if c.name in self.listed]
        return await self.estimator.max_available_component_sets(
            asked, components, namespace, resource=resource, assumed=assumed
        )



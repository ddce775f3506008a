"""Arguments and helpers shared by `simulate`, `explain` and `placements`."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

from ..algorithm.general_estimator import AssumedWorkload
from ..algorithm.requeue import event_filter_refusal
from ..model import Cluster, Component, ObjectReference, ReplicaRequirements
from ..scheduling.framework.ports import EstimateAnswerLike, ReplicaEstimator
from . import argtypes
from .inputs import Inputs, load_inputs
from .live import live_or_exit
from .settings import DecisionSettings, add_settings_arguments


def add_input_arguments(parser: argparse.ArgumentParser) -> None:
    """Where the objects come from (files, standard input or a live plane), and the settings to decide with."""
    add_source_arguments(parser, invalid="without it such a binding gets its SchedulerError in the results")
    parser.add_argument(
        "--all", dest="all_bindings", action="store_true",
        help="decide every binding, also those the scheduler would skip (another spec.schedulerName, scheduling "
        "suspended, none of the propagation policy labels Karmada's event filter requires)",
    )
    add_settings_arguments(parser)


def add_source_arguments(parser: argparse.ArgumentParser, *, invalid: str) -> None:
    """Where the objects come from: files, standard input or a live plane; `invalid` says what becomes of a binding
    the model refuses without `--strict`."""
    parser.add_argument(
        "-f", "--filename", dest="files", action="append", default=[], metavar="PATH",
        help="a YAML/JSON file or a folder of them (repeatable), '-' for standard input; single or multi-document, "
        "or kind: List (a `kubectl get -o yaml` export)",
    )
    parser.add_argument(
        "--kubeconfig", metavar="PATH",
        help="read the Clusters and bindings from the API server of this kubeconfig (karmada-apiserver's), "
        "read-only: nothing is written and no Lease is taken",
    )
    parser.add_argument("--context", metavar="NAME", help="the kubeconfig context to use (default: its current one)")
    parser.add_argument(
        "--strict", action="store_true",
        help="an unknown field in an input is an error, not a warning (kubectl's --validate=strict), and so is a "
        f"binding the model refuses (exit 2); {invalid}",
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


async def load_or_exit(args: argparse.Namespace, *, need_bindings: bool = True) -> Inputs:
    """Every input `-f` or `--kubeconfig` names; on a problem print one `SOURCE: KIND NAME: path: problem` line
    each and exit 2. An unknown field is a `warning:` line (with `--strict`, a problem, as is a binding the model
    refuses). Without a binding the inputs are bad input too, unless not `need_bindings`."""
    files: list[str] = args.files
    if files and args.kubeconfig:
        raise fail(["error: -f and --kubeconfig name two sources of inputs: give one"])
    if not files and not args.kubeconfig:
        raise fail(["error: no inputs: give -f PATH (a file, a folder, or '-' for standard input) or --kubeconfig "
                    "PATH (a live plane)"])
    if files:
        inputs = load_inputs(files, strict=args.strict)
    else:
        inputs = await live_or_exit(args.kubeconfig, args.context, strict=args.strict)
    for line in inputs.warnings:
        print(f"warning: {line}", file=sys.stderr)
    errors = inputs.errors + (inputs.invalid_lines() if args.strict else [])
    if errors:
        raise fail(errors)
    if need_bindings and not inputs.entries:
        where = ", ".join(files) if files else args.kubeconfig
        raise fail([f"{where}: no ResourceBinding or ClusterResourceBinding found"])
    for skipped in inputs.skipped:
        print(f"note: ignoring {skipped} (not a Cluster, binding or SchedulerConfiguration)", file=sys.stderr)
    return inputs


def skip_reasons(inputs: Inputs, settings: DecisionSettings, *, every: bool = False) -> dict[int, str]:
    """Why `run` would leave each binding alone (by the entry's `id`): Karmada's binding event filter with the
    settings' scheduler name. None with `every` (`--all`)."""
    if every:
        return {}
    reasons = {}
    for entry in inputs.entries:
        reason = event_filter_refusal(entry.body, settings.scheduler_name)
        if reason is not None:
            reasons[id(entry)] = reason
    return reasons


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



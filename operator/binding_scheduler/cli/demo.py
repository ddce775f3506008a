"""`binding-scheduler demo`: the whole product on its embedded default.

An embedded API server (devcluster) is filled with the example fleet and bindings bundled with the package
(`binding-scheduler examples DIR` writes them out; `--examples DIR` runs on other ones), accurate
estimators (our stub of Karmada's estimator service) answer for a few clusters, and the real operator
schedules everything. The results are printed, with why each binding not scheduled was not. Then the rolling
restart of karmada-io/karmada #7819 is acted (`demo_restart`): a pass waits on an estimator that holds its answers,
the operator is stopped the way SIGTERM stops it, and a second instance takes over; its evidence is the stub's
record and the API server's journal. The shutdown report is printed once, in plain words.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
import tempfile
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from ..model import parse_cluster
from ..model.conditions import SCHEDULED
from . import argtypes
from .demo_restart import (
    FIRST,
    PLURALS,
    SECOND,
    Hold,
    Instance,
    Restart,
    first_lines,
    in_plain_words,
    pick,
    placement,
    second_lines,
)
from .examples import bundled_examples
from .inputs import documents, input_files
from .logs import EVERYTHING_VERBOSITY, configure_logging
from .optional import MISSING, devcluster_missing

if TYPE_CHECKING:  # devcluster is an optional part (cli/optional.py): imported when the demo runs
    from ..devcluster import DevCluster
    from ..estimation.stub import EstimatorStub


def load(api: DevCluster, sources: Iterable[Traversable]) -> list[Mapping[str, Any]]:
    """Create every Cluster and binding in the `sources` files as their controllers would leave them."""
    created: list[Mapping[str, Any]] = []
    for source in sources:
        for doc in documents(source):
            if not isinstance(doc, dict) or doc.get("kind") not in PLURALS:
                continue
            metadata = doc.get("metadata") or {}
            if metadata.get("namespace"):
                api.store.ensure_namespace(metadata["namespace"])
            plural = PLURALS[doc["kind"]]
            api.store.create(plural, {k: v for k, v in doc.items() if k != "status"})
            if doc.get("status"):
                api.store.patch(
                    plural,
                    metadata["name"],
                    {"status": doc["status"]},
                    namespace=metadata.get("namespace"),
                    subresource="status",
                )
            created.append(doc)
    return created


STUB_GRACE = 0.5
"""Seconds a stub estimator gives its calls when the demo ends (none should be left: the held one was cancelled)."""


@contextmanager
def estimators(clusters: Sequence[Mapping[str, Any]]) -> Iterator[dict[str, EstimatorStub]]:
    """Stub estimators answering from the clusters' resource summaries, in their own loop."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True, name="demo-estimators")
    thread.start()
    from ..estimation.stub import EstimatorStub  # gRPC: imported when the demo runs

    stubs = [EstimatorStub(str(doc["metadata"]["name"]), summary=parse_cluster(doc)) for doc in clusters]
    try:
        for stub in stubs:
            asyncio.run_coroutine_threadsafe(stub.start(), loop).result(10)
        yield {stub.cluster_name: stub for stub in stubs}
    finally:
        for stub in stubs:
            asyncio.run_coroutine_threadsafe(stub.stop(grace=STUB_GRACE), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


def config_file(folder: Path, endpoints: Mapping[str, str], workers: int) -> Path:
    path = folder / "scheduler-configuration.yaml"
    spec = {
        "workers": workers,
        "estimator": {"enabled": True, "timeout": "2s", "endpoints": dict(endpoints)},
        "metrics": {"port": 0, "healthPort": 0},
        "leaderElection": {"leaseNamespace": "karmada-system"},
    }
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "config.binding-scheduler.io/v1alpha1",
                "kind": "SchedulerConfiguration",
                "metadata": {"name": "demo"},
                "spec": spec,
            }
        )
    )
    return path


def settled(api: DevCluster, bindings: Sequence[Mapping[str, Any]]) -> bool:
    for doc in bindings:
        body = api.store.find(PLURALS[doc["kind"]], doc["metadata"]["name"], doc["metadata"].get("namespace"))
        conditions = ((body or {}).get("status") or {}).get("conditions") or []
        if not any(c.get("type") == SCHEDULED for c in conditions):
            return False
    return True


def results_table(api: DevCluster, bindings: Sequence[Mapping[str, Any]]) -> str:
    """A row per binding: its Scheduled condition and where it landed; under each binding not scheduled, why (the
    condition's message, as Karmada words it)."""
    rows: list[tuple[tuple[str, str, str, str], str]] = [(("BINDING", "SCHEDULED", "REASON", "CLUSTERS"), "")]
    for doc in bindings:
        metadata = doc["metadata"]
        body = api.store.find(PLURALS[doc["kind"]], metadata["name"], metadata.get("namespace")) or {}
        conditions = (body.get("status") or {}).get("conditions") or []
        condition: Mapping[str, Any] = next((c for c in conditions if c["type"] == SCHEDULED), {})
        key = f"{metadata['namespace']}/{metadata['name']}" if metadata.get("namespace") else metadata["name"]
        why = str(condition.get("message") or "") if condition.get("status") == "False" else ""
        rows.append(((key, condition.get("status", "-"), condition.get("reason", "-"), placement(body)), why))
    widths = [max(len(r[i]) for r, _ in rows) for i in range(3)]
    lines = []
    for row, why in rows:
        lines.append("  ".join([*(c.ljust(w) for c, w in zip(row[:3], widths, strict=True)), row[3]]))
        if why:
            lines.append(f"{WHY}{why}")
    return "\n".join(lines)


WHY = "    why: "
"""How a line giving a binding's reason for not being scheduled begins, under its row."""
RESTART = (
    "A rolling restart while a pass waits on a slow estimator (karmada-io/karmada #7819: in Karmada that pass goes "
    "on,\nand its stale decision can land after the new instance's):"
)


@dataclass(slots=True)
class DemoRun:
    """What the demo did: the API server (its store and journal stay readable after it stopped), the first
    instance, and the rolling restart when it ran."""

    api: DevCluster
    bindings: list[Mapping[str, Any]]
    first: Instance
    restart: Restart | None
    code: int


def run_demo(args: argparse.Namespace) -> int:
    return play(args).code


def play(args: argparse.Namespace) -> DemoRun:
    """The demo, printing as it goes."""
    from ..devcluster import DevCluster

    if args.examples is None:
        sources: list[Traversable] = bundled_examples()
        origin = "the bundled examples"
    else:
        sources, origin = list(input_files([str(args.examples)])), str(args.examples)
    with operator_log(args.verbose), tempfile.TemporaryDirectory() as tmp, DevCluster.in_thread() as api:
        api.store.ensure_namespace("karmada-system")
        created = load(api, sources)
        clusters = [d for d in created if d["kind"] == "Cluster"]
        bindings = [d for d in created if d["kind"] != "Cluster"]
        print(f"devcluster: serving {api.url} (kubeconfig {api.kubeconfig_path})")
        print(f"loaded {len(clusters)} clusters and {len(bindings)} bindings from {origin}")
        with estimators(clusters) as stubs:
            print(f"accurate estimators (gRPC) for: {', '.join(sorted(stubs))}")
            config = config_file(Path(tmp), {name: stub.address for name, stub in stubs.items()}, args.workers)
            first = Instance(FIRST, api.kubeconfig_path, config)
            chosen: list[Restart] = []

            def lead(instance: Instance) -> None:
                """Schedule everything, print the table, then (unless kept running) act the rolling restart."""
                instance.wait(lambda: settled(api, bindings), SETTLE_WITHIN)
                print()
                print(results_table(api, bindings), flush=True)
                if args.keep_running:
                    print("every binding has a Scheduled condition; serving until Ctrl-C", file=sys.stderr)
                    return
                instance.wait(instance.idle, IDLE_WITHIN)  # the passes that wrote the table have ended
                plan = pick(api, bindings, stubs)
                if plan is None:
                    instance.stop()
                    return
                print()
                print(RESTART, flush=True)
                chosen.append(Restart(plan, Hold(stubs[plan.cluster]), instance))
                chosen[0].hold_and_stop(api, instance)

            code = first.run(lead)
            restart = chosen[0] if chosen else None
            if restart is None:
                report = first.report
                if report is not None:
                    print()
                    print(in_plain_words(first.identity, report, len(first.late_writes(api.journal))))
                return DemoRun(api, bindings, first, None, code)
            restart.hold.wait_settled()
            print("\n".join(first_lines(restart, api)), flush=True)
            restart.hold.release()
            if code == 0:
                restart.second = Instance(SECOND, api.kubeconfig_path, config)
                code = restart.second.run(lambda instance: restart.place(api, instance))
                print("\n".join(second_lines(restart, api)))
            return DemoRun(api, bindings, first, restart, code)


SETTLE_WITHIN = 60.0
"""Seconds the first instance is given to give every binding a Scheduled condition."""
IDLE_WITHIN = 5.0
"""Seconds it is then given to end the passes still in flight (their Events, a retry) before the restart."""


@contextmanager
def operator_log(verbose: bool) -> Iterator[None]:
    """The demo's own lines tell what happened; the operator's log says it again (a line per decision, one for
    the shutdown report), so below ERROR it is shown with `--verbose` only."""
    ours = logging.getLogger("binding_scheduler")
    level = ours.level
    if not verbose:
        ours.setLevel(logging.ERROR)
    try:
        yield
    finally:
        ours.setLevel(level)


def handle(args: argparse.Namespace) -> int:
    if devcluster_missing("the demo"):
        return MISSING
    configure_logging(EVERYTHING_VERBOSITY if args.verbose else 0)
    return run_demo(args)


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "demo",
        help="run the scheduler on an embedded API server with the examples",
        description="Start an embedded API server with the bundled example fleet and bindings, stub accurate "
        "estimators, and the real operator; print the results, then stop it while a pass waits on a slow "
        "estimator, print its shutdown report, and let a second instance take over.",
    )
    parser.add_argument(
        "--examples",
        type=argtypes.existing_folder,
        default=None,
        metavar="DIR",
        help="folder of Clusters and bindings (default: the bundled examples, as `binding-scheduler examples` "
        "writes them)",
    )
    parser.add_argument("--workers", type=argtypes.positive, default=4, help="concurrent scheduling passes (default 4)")
    parser.add_argument("--keep-running", action="store_true",
                        help="keep serving until Ctrl-C after the results (no restart)")
    parser.add_argument("-v", "--verbose", action="store_true", help="the operator's log too, with debug lines")
    parser.set_defaults(handler=handle)

"""`binding-scheduler demo`: the whole product on its embedded default.

An embedded API server (devcluster) is filled with the example fleet and bindings bundled with the package
(`binding-scheduler examples DIR` writes them out; `--examples DIR` runs on other ones), accurate
estimators (our stub of Karmada's estimator service) answer for a few clusters, and the real operator
schedules everything. The results are printed, then the operator is stopped the way SIGTERM stops it and its
shutdown report is printed with what the API server saw.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

import yaml

from ..devcluster import DevCluster
from ..estimation.stub import EstimatorStub
from ..model import parse_cluster
from ..operator.app import OperatorApp
from ..operator.options import LaunchOptions
from ..operator.runner import run_operator
from . import argtypes
from .examples import bundled_examples
from .inputs import documents, input_files
from .logs import EVERYTHING_VERBOSITY, configure_logging

PLURALS = {
    "Cluster": "clusters",
    "ResourceBinding": "resourcebindings",
    "ClusterResourceBinding": "clusterresourcebindings",
}


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


@contextmanager
def estimators(clusters: Sequence[Mapping[str, Any]]) -> Iterator[dict[str, str]]:
    """Stub estimators answering from the clusters' resource summaries, in their own loop."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True, name="demo-estimators")
    thread.start()
    stubs = [EstimatorStub(str(doc["metadata"]["name"]), summary=parse_cluster(doc)) for doc in clusters]
    try:
        for stub in stubs:
            asyncio.run_coroutine_threadsafe(stub.start(), loop).result(10)
        yield {stub.cluster_name: stub.address for stub in stubs}
    finally:
        for stub in stubs:
            asyncio.run_coroutine_threadsafe(stub.stop(), loop).result(10)
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
        if not any(c.get("type") == "Scheduled" for c in conditions):
            return False
    return True


def results_table(api: DevCluster, bindings: Sequence[Mapping[str, Any]]) -> str:
    rows = [("BINDING", "SCHEDULED", "REASON", "CLUSTERS")]
    for doc in bindings:
        metadata = doc["metadata"]
        body = api.store.find(PLURALS[doc["kind"]], metadata["name"], metadata.get("namespace")) or {}
        conditions = (body.get("status") or {}).get("conditions") or []
        condition: Mapping[str, Any] = next((c for c in conditions if c["type"] == "Scheduled"), {})
        clusters = (body.get("spec") or {}).get("clusters") or []
        placed = ",".join(f"{c['name']}:{c['replicas']}" if c.get("replicas") else c["name"] for c in clusters)
        key = f"{metadata['namespace']}/{metadata['name']}" if metadata.get("namespace") else metadata["name"]
        rows.append((key, condition.get("status", "-"), condition.get("reason", "-"), placed or "-"))
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    return "\n".join("  ".join([*(c.ljust(w) for c, w in zip(r[:3], widths, strict=True)), r[3]]) for r in rows)


def run_demo(args: argparse.Namespace) -> int:
    if args.examples is None:
        sources: list[Traversable] = bundled_examples()
        origin = "the bundled examples"
    else:
        sources, origin = list(input_files([str(args.examples)])), str(args.examples)
    with tempfile.TemporaryDirectory() as tmp, DevCluster.in_thread() as api:
        api.store.ensure_namespace("karmada-system")
        created = load(api, sources)
        clusters = [d for d in created if d["kind"] == "Cluster"]
        bindings = [d for d in created if d["kind"] != "Cluster"]
        print(f"devcluster: serving {api.url} (kubeconfig {api.kubeconfig_path})")
        print(f"loaded {len(clusters)} clusters and {len(bindings)} bindings from {origin}")
        with estimators(clusters) as endpoints:
            print(f"accurate estimators (gRPC) for: {', '.join(sorted(endpoints))}")
            config = config_file(Path(tmp), endpoints, args.workers)
            app = OperatorApp(
                LaunchOptions(
                    kubeconfig=str(api.kubeconfig_path),
                    namespace="karmada-system",
                    config_file=str(config),
                )
            )
            code = asyncio.run(_operate(app, api, bindings, args.keep_running))
        print()
        print(results_table(api, bindings))
        report = app.service.report if app.service is not None else None
        if report is not None:
            print()
            print(report.line())
            late = [
                e
                for e in api.journal.writes()
                if app.service and app.service.finished_at and e.time > app.service.finished_at
            ]
            print(f"the API server saw {len(api.journal.writes())} writes, {len(late)} of them after the shutdown")
    return code


async def _operate(app: OperatorApp, api: DevCluster, bindings: Sequence[Mapping[str, Any]], keep: bool) -> int:
    stop, ready = asyncio.Event(), asyncio.Event()
    loop = asyncio.get_running_loop()

    def watch() -> None:
        deadline = time.monotonic() + 60
        while not settled(api, bindings) and time.monotonic() < deadline:
            time.sleep(0.05)
        if not keep:
            loop.call_soon_threadsafe(app.request_stop)
            loop.call_soon_threadsafe(stop.set)
        else:
            print("every binding has a Scheduled condition; serving until Ctrl-C", file=sys.stderr)

    threading.Thread(target=watch, daemon=True, name="demo-watch").start()
    return await run_operator(app, ready=ready, stop=stop)


def handle(args: argparse.Namespace) -> int:
    configure_logging(EVERYTHING_VERBOSITY if args.verbose else 0)
    return run_demo(args)


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "demo",
        help="run the scheduler on an embedded API server with the examples",
        description="Start an embedded API server with the bundled example fleet and bindings, stub accurate "
        "estimators, and the real operator; print the results, then stop it and print its shutdown report.",
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
    parser.add_argument("--keep-running", action="store_true", help="keep serving until Ctrl-C")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    parser.set_defaults(handler=handle)

"""`binding-scheduler estimator-stub`: serve Karmada's estimator service for one cluster (tests and demo)."""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from ..model import Cluster, ValidationError, parse_cluster
from . import argtypes
from .inputs import documents

if TYPE_CHECKING:  # gRPC: imported when the stub runs
    from ..estimation.stub import EstimatorStub


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "estimator-stub",
        help="serve Karmada's scheduler-estimator gRPC service for one cluster, with fixed or computed answers",
        description=(
            "Serve github.com.karmada_io.karmada.pkg.estimator.service.Estimator for one cluster. Answers come "
            "from --replicas/--sets, or from the resource summary of the Cluster in --cluster-file. Runs until "
            "SIGTERM or SIGINT; the first line on stdout is 'estimator-stub: cluster NAME serving on HOST:PORT'."
        ),
    )
    parser.add_argument("--cluster", required=True, metavar="NAME", help="the cluster this estimator answers for")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default: %(default)s)")
    parser.add_argument("--port", type=argtypes.port, default=10352,
                        help="port; 0 picks a free one (default: %(default)s)")
    parser.add_argument("--replicas", type=argtypes.non_negative, help="fixed answer to MaxAvailableReplicas")
    parser.add_argument("--sets", type=argtypes.non_negative,
                        help="fixed answer to MaxAvailableComponentSets (default: --replicas)")
    parser.add_argument("--cluster-file", type=Path, help="a Cluster (YAML or JSON) whose resource summary answers")
    parser.add_argument(
        "--mode", choices=["ok", "latency", "hang", "error", "garbage"], default="ok",
        help="ok: answer; latency: answer after --latency; hang: never answer; error: fail with UNKNOWN; "
        "garbage: answer undecodable bytes (default: %(default)s)",
    )
    parser.add_argument("--latency", type=argtypes.non_negative_seconds, default=0.0, metavar="SECONDS",
                        help="delay before each answer")
    parser.add_argument("--error-message", default="estimator stub: injected failure", help="text of --mode error")
    parser.add_argument("--tls-cert", type=Path, help="serve TLS with this certificate (PEM)")
    parser.add_argument("--tls-key", type=Path, help="the key of --tls-cert (PEM)")
    parser.add_argument("--client-ca", type=Path, help="require client certificates signed by this CA (mTLS)")
    parser.set_defaults(handler=run)


def _load_cluster(path: Path, name: str) -> Cluster:
    """The Cluster `name` in `path`: one document, several, or a `kind: List` (`kubectl get clusters -o yaml`)."""
    try:
        found = [d for d in documents(path) if isinstance(d, dict) and d.get("kind") == "Cluster"]
    except yaml.YAMLError as error:
        problem = " ".join(str(error).split())
        raise ValueError(f"--cluster-file {path}: not valid YAML or JSON: {problem}") from None
    names = [str((d.get("metadata") or {}).get("name")) for d in found]
    if name not in names:
        held = ", ".join(repr(n) for n in names) or "no Cluster"
        raise ValueError(f"--cluster-file holds {held}, not cluster {name!r}")
    return parse_cluster(found[names.index(name)])


def build_stub(args: argparse.Namespace) -> EstimatorStub:
    """The stub the arguments describe; raises ValueError, OSError or ValidationError when they are wrong."""
    from ..estimation.stub import EstimatorStub, NoAnswers, StubMode, StubTls

    summary = _load_cluster(args.cluster_file, args.cluster) if args.cluster_file else None
    if args.mode == "latency" and args.latency <= 0:
        raise ValueError("--mode latency needs --latency SECONDS > 0")
    if bool(args.tls_cert) != bool(args.tls_key):
        raise ValueError("--tls-cert and --tls-key go together")
    if args.client_ca and not args.tls_cert:
        raise ValueError("--client-ca needs --tls-cert and --tls-key")
    tls = None
    if args.tls_cert:
        tls = StubTls(
            private_key=args.tls_key.read_bytes(),
            certificate_chain=args.tls_cert.read_bytes(),
            client_ca=args.client_ca.read_bytes() if args.client_ca else None,
        )
    try:
        return EstimatorStub(
            args.cluster,
            replicas=args.replicas,
            sets=args.sets,
            summary=summary,
            mode=StubMode.OK if args.mode == "latency" else StubMode(args.mode),
            latency=args.latency,
            error_message=args.error_message,
            host=args.host,
            port=args.port,
            tls=tls,
        )
    except NoAnswers:
        raise ValueError(f"--mode {args.mode} answers, so it needs --replicas (and optionally --sets) or "
                         "--cluster-file; --mode hang, error or garbage needs neither") from None


async def serve(stub: EstimatorStub) -> int:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    try:
        await stub.start()
        print(f"estimator-stub: cluster {stub.cluster_name} serving on {stub.address}", flush=True)
        await stop.wait()
    finally:
        await stub.stop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(signum)
    print(f"estimator-stub: cluster {stub.cluster_name} stopped after {len(stub.calls)} calls", flush=True)
    return 0


def run(args: argparse.Namespace) -> int:
    try:
        stub = build_stub(args)
    except (ValueError, OSError, ValidationError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    try:
        return asyncio.run(serve(stub))
    except OSError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1

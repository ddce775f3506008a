"""`binding-scheduler devcluster`: serve the embedded Kubernetes API emulator until SIGTERM/SIGINT."""

from __future__ import annotations

import argparse
import asyncio
import gc
import signal
import sys
from pathlib import Path
from typing import Any

from . import argtypes
from .optional import MISSING, devcluster_missing


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "devcluster",
        help="serve an embedded Kubernetes API emulator (Karmada CRDs included)",
        description="Serve an embedded Kubernetes API emulator until SIGTERM/SIGINT. The first stdout line is "
                    "'devcluster: serving http://HOST:PORT'.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=argtypes.port, default=0, help="port to listen on (default 0: any free port)")
    parser.add_argument("--kubeconfig-out", type=Path, default=None, metavar="FILE",
                        help="write a kubeconfig pointing at the emulator to FILE")
    parser.add_argument("--crds", type=Path, default=None, metavar="DIR",
                        help="folder of CustomResourceDefinition YAML files (default: the Karmada CRDs)")
    parser.add_argument("--history", type=argtypes.positive, default=10000,
                        help="events retained for watch resumption (default 10000)")
    parser.set_defaults(handler=run)


async def serve(args: argparse.Namespace) -> int:
    from binding_scheduler.devcluster import GC_THRESHOLDS, DevCluster

    gc.set_threshold(*GC_THRESHOLDS)

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    cluster = DevCluster(args.crds, host=args.host, port=args.port, history=args.history,
                         kubeconfig=args.kubeconfig_out, journal_limit=10000)
    await cluster.start()
    print(f"devcluster: serving {cluster.url}", flush=True)
    print(f"devcluster: kubeconfig {cluster.kubeconfig_path}", flush=True)
    try:
        await stop.wait()
    finally:
        await cluster.stop()
    print("devcluster: stopped", flush=True)
    return 0


def run(args: argparse.Namespace) -> int:
    if devcluster_missing("the devcluster command"):
        return MISSING
    if args.crds is not None and not args.crds.is_dir():
        print(f"devcluster: --crds {args.crds} is not a folder", file=sys.stderr)
        return 2
    try:
        return asyncio.run(serve(args))
    except OSError as exc:
        print(f"devcluster: cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 1


def main() -> int:
    parser = argparse.ArgumentParser(prog="binding-scheduler")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args()
    code: int = args.handler(args)
    return code


if __name__ == "__main__":
    sys.exit(main())

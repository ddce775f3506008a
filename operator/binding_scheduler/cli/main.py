"""`binding-scheduler` command line: one sub-command per module, each with a `register(subparsers)`."""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import signal
import sys
from collections.abc import Sequence

from .parsers import CommandParser

COMMAND_MODULES = (
    "binding_scheduler.cli.simulate",
    "binding_scheduler.cli.explain",
    "binding_scheduler.cli.run",
    "binding_scheduler.cli.config",
    "binding_scheduler.cli.demo",
    "binding_scheduler.cli.examples",
    "binding_scheduler.cli.estimator_stub",
    "binding_scheduler.cli.devcluster",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="binding-scheduler",
        description="A Karmada-compatible multi-cluster scheduler.",
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=CommandParser)
    for module_name in COMMAND_MODULES:
        importlib.import_module(module_name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    if argv is None:
        take_sigterm_at_once()
    parser = build_parser()
    args = parser.parse_args(argv)
    code: int = args.handler(args)
    if getattr(args, "exit_at_once", False) and argv is None:
        exit_at_once(code)
    return code


TERMINATED = 128 + signal.SIGTERM


def take_sigterm_at_once() -> None:
    """A SIGTERM that comes before a command has set up its own handling (`run` puts its handlers in place
    once its event loop runs) ends the process, with the shell's status for it. Without a handler a
    container's PID 1 ignores SIGTERM, and the kubelet would wait out the whole grace period."""

    def terminated(signum: int, frame: object) -> None:
        raise SystemExit(TERMINATED)

    signal.signal(signal.SIGTERM, terminated)


def exit_at_once(code: int) -> None:
    """Leave without interpreter teardown. Used by `run` after its shutdown has closed every connection and
    awaited every task: nothing is left to write, and module finalization (gRPC core threads among it) would
    add a quarter of a second between the shutdown report and the exit on a small machine."""
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    sys.exit(main())

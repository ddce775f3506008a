"""`binding-scheduler` command line: one sub-command per module, each with a `register(subparsers)`."""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import signal
import sys
from collections.abc import Sequence

from .. import COMPATIBILITY, __version__
from .parsers import CommandParser

COMMAND_MODULES = (
    "binding_scheduler.cli.simulate",
    "binding_scheduler.cli.explain",
    "binding_scheduler.cli.placements",
    "binding_scheduler.cli.run",
    "binding_scheduler.cli.config",
    "binding_scheduler.cli.demo",
    "binding_scheduler.cli.examples",
    "binding_scheduler.cli.estimator_stub",
    "binding_scheduler.cli.devcluster",
)



class _Version(argparse.Action):
    """`--version`: the version on its own line (scripts read it), then the compatibility sentence, unwrapped."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        print(f"binding-scheduler {__version__}\n{COMPATIBILITY}")
        parser.exit(0)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="binding-scheduler",
        description="A Karmada-compatible multi-cluster scheduler.",
        epilog="Errors are one line on stderr (exit 2 for bad usage or input, 1 at run time); --debug, anywhere "
        "on the command line, shows the traceback of a failure.",
    )
    parser.add_argument("--version", action=_Version, nargs=0, help="the version, and which Karmada it decides as")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=CommandParser)
    for module_name in COMMAND_MODULES:
        importlib.import_module(module_name).register(subparsers)
    return parser


DEBUG_FLAG = "--debug"
RUNTIME_FAILURE = 1
BROKEN_PIPE = 128 + signal.SIGPIPE


def main(argv: Sequence[str] | None = None) -> int:
    """Exit status: 0 success, 2 bad usage or input (one line each on stderr), 1 a failure at run time (one
    line, `error: ...`; the traceback only with `--debug`, which may stand anywhere on the command line)."""
    if argv is None:
        take_sigterm_at_once()
    given = list(sys.argv[1:] if argv is None else argv)
    debug = DEBUG_FLAG in given
    parser = build_parser()
    args = parse_command_line(parser, [arg for arg in given if arg != DEBUG_FLAG])
    try:
        code: int = args.handler(args)
    except BrokenPipeError:
        _quiet_stdout()  # the reader went away (`simulate ... | head`): nothing more to say to anyone
        return BROKEN_PIPE
    except KeyboardInterrupt:
        return 128 + signal.SIGINT
    except Exception as error:
        if debug:
            raise
        print(f"error: {_describe(error)} (--debug shows where)", file=sys.stderr)
        return RUNTIME_FAILURE
    if getattr(args, "exit_at_once", False) and argv is None:
        exit_at_once(code)
    return code


def parse_command_line(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """argparse's parse, except that an argument the command does not know is reported with the command's
    usage (argparse hands a sub-command's leftovers to the top level, whose usage says nothing useful)."""
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        command = _subcommands(parser).get(getattr(args, "command", None) or "", parser)
        command.error(f"unrecognized arguments: {' '.join(unknown)}")
    return args


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _describe(error: Exception) -> str:
    text = str(error)
    if isinstance(error, OSError) and error.strerror:
        text = f"{error.filename}: {error.strerror}" if error.filename else error.strerror
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def _quiet_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's final flush does not fail a second time."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


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


"""`binding-scheduler run`: the scheduler against a Karmada control plane.

It takes karmada-scheduler's flags too (see karmada_flags), in Go's syntax, so a karmada-scheduler Deployment's
args work unchanged. Those that set configuration fields win over `--config-file` or the watched `--config`
object; the ones given are re-applied to every new version of that object.
"""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Any

from ..algorithm.plugins import PluginError
from ..kube.connection import ConfigError, load_connection
from ..model import ValidationError
from ..model.config import SchedulerConfig
from ..model.overrides import SpecOverrides
from ..operator.config_file import ConfigFileError, load_config_file
from ..operator.options import DEFAULT_NAMESPACE, EVENT_PATHS, LaunchOptions
from ..scheduling.framework.plugins import UnknownPlugins, load_plugins
from . import goflags
from .goflags import Flag, FlagError
from .karmada_flags import IGNORED, MAPPED, KarmadaSettings, karmada_flags, parse_bool, read
from .logs import EVERYTHING_VERBOSITY, LOG_FORMATS, configure_logging
from .parsers import CommandParser

logger = logging.getLogger(__name__)

OWN_FLAGS: dict[str, Flag] = {
    **{name: Flag(name) for name in ("context", "namespace", "config", "config-file", "identity", "event-path")},
    "verbose": Flag("verbose", boolean=True),
    "log-format": Flag("log-format"),
}
HELP = Flag("help", boolean=True, shorthand="h")
USAGE = "%(prog)s [-h] [FLAG...]  (Go syntax: --flag=value, --flag value, --bool, --bool=false)"


def read_command_line(
    parser: CommandParser, argv: list[str], own_flags: dict[str, Flag]
) -> tuple[dict[str, str], KarmadaSettings]:
    """The command's own flags (the last value of each) and Karmada's settings. `-h` prints the help and exits;
    a problem exits 2 with the command's usage."""
    try:
        given = goflags.parse(argv, {**karmada_flags(), **own_flags, HELP.name: HELP})
        settings = read(given)
        if any(flag.name == HELP.name and parse_bool(HELP.name, flag.value) for flag in given):
            parser.print_help()
            parser.exit()
        own = {flag.name: flag.value for flag in given if flag.name in own_flags}
        for name, flag in own_flags.items():
            if flag.boolean and name in own:
                own[name] = "true" if parse_bool(name, own[name]) else ""
    except FlagError as error:
        parser.error(str(error))
    return own, settings


def parse_run_args(parser: CommandParser, argv: list[str]) -> dict[str, Any]:
    own, settings = read_command_line(parser, argv, OWN_FLAGS)
    if own.get("config") and own.get("config-file"):
        parser.error("--config and --config-file exclude each other: watch an object, or read a file")
    event_path = own.get("event-path") or "auto"
    if event_path not in EVENT_PATHS:
        parser.error(f"--event-path: {event_path!r} is not one of {', '.join(EVENT_PATHS)}")
    return {
        "kubeconfig": settings.kubeconfig,
        "master": settings.master,
        "context": own.get("context") or None,
        "namespace": own.get("namespace") or None,
        "config": own.get("config") or None,
        "config_file": own.get("config-file") or None,
        "identity": own.get("identity") or None,
        "event_path": event_path,
        "verbosity": _verbosity(settings, bool(own.get("verbose"))),
        "log_format": _log_format(parser, own.get("log-format"), settings),
        "karmada": settings,
    }


def _verbosity(settings: KarmadaSettings, verbose: bool) -> int:
    if verbose or settings.bare_v:
        return EVERYTHING_VERBOSITY
    return settings.verbosity or 0


def _log_format(parser: CommandParser, own: str | None, settings: KarmadaSettings) -> str:
    chosen = own or settings.log_format or "text"
    if chosen not in LOG_FORMATS:
        parser.error(f"--log-format: {chosen!r} is not one of {', '.join(LOG_FORMATS)}")
    return chosen


def handle(args: argparse.Namespace) -> int:
    configure_logging(args.verbosity, args.log_format)
    settings: KarmadaSettings = args.karmada
    for line in settings.warnings:
        logger.warning("%s", line)
    overrides = settings.overrides
    try:
        config = None
        if args.config_file:
            config = load_config_file(args.config_file, overrides)
        elif not args.config:
            config = overrides.parse()
    except ConfigFileError as error:
        for line in error.lines:  # every wrong field, one line each, before anything starts
            print(f"error: {line}", file=sys.stderr)
        return 2
    except ValidationError as error:
        for one in error.errors:
            print(f"error: {one}", file=sys.stderr)
        return 2
    if config is not None and (problem := unknown_plugins(config, overrides)) is not None:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    if config is not None and (problem := unreadable_files(config, overrides)) is not None:
        print(f"error: {problem}", file=sys.stderr)
        return 1
    try:
        load_connection(args.kubeconfig, args.context, master=args.master)
    except ConfigError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if overrides.paths:
        logger.info("command-line flags set %s", ", ".join(overrides.paths))
    options = LaunchOptions(
        kubeconfig=args.kubeconfig,
        master=args.master,
        context=args.context,
        namespace=args.namespace,
        config_name=args.config,
        config_file=args.config_file,
        identity=args.identity,
        overrides=overrides,
        event_path=args.event_path,
    )
    from ..operator.runner import main as run_main  # Kopf and the service: imported when `run` runs

    return run_main(options)


def unknown_plugins(config: SchedulerConfig, overrides: SpecOverrides) -> ValidationError | None:
    """A plugin name no plugin has (unless allowed), named by the flag that gave it or its field; checked before
    anything starts, as an unknown feature gate is. A plugin that fails to load is the service's to report."""
    try:
        load_plugins(config.plugins, workload_affinity=config.feature_gates.workload_affinity,
                     allow_unknown=config.allow_unknown_plugins)
    except UnknownPlugins as error:
        return overrides.named(ValidationError(error.field, error.message))
    except PluginError:
        return None
    return None


def unreadable_files(config: SchedulerConfig, overrides: SpecOverrides) -> ValidationError | None:
    """The first file the configuration names that cannot be read (the estimator's TLS files), named by the
    flag that gave it or its field; checked at once, before anything starts. A watched --config object's files
    are checked when it is read (the operator's start says so in one line)."""
    if not config.estimator.enabled:
        return None
    from ..estimation.credentials import TlsFileError, load_tls  # gRPC: imported when an estimator is configured
    from ..scheduling.lifecycle.config_views import estimator_settings

    try:
        load_tls(estimator_settings(config))
    except TlsFileError as error:
        return overrides.named(ValidationError(error.field, f"{error.path}: {error.reason}"))
    return None


def add_karmada_help(parser: argparse.ArgumentParser) -> None:
    """Karmada's flags in the help (display only: the Go-syntax parser reads them)."""
    group = parser.add_argument_group(
        "karmada-scheduler's flags",
        "Go syntax: --flag=value or --flag value; a boolean as --flag or --flag=false. They win over the "
        "configuration (docs/configuration.md, \"Karmada's flags\").",
    )
    group.add_argument("--kubeconfig", metavar="FILE",
                       help="kubeconfig file (default: $KUBECONFIG, ~/.kube/config, then in-cluster)")
    group.add_argument("--master", metavar="URL", help="API server URL, overriding the kubeconfig's server")
    for name, (kind, path) in MAPPED.items():
        fields = ", ".join(f"spec.{p}" for p in path.split())
        if kind == "bool":
            group.add_argument(f"--{name}", metavar="BOOL", nargs="?", help=fields)
        else:
            group.add_argument(f"--{name}", metavar=kind.upper(), help=fields)
    group.add_argument("-v", "--v", metavar="N", nargs="?",
                       help="klog verbosity: 4 or more is debug logging, 6 or more Kopf's too; -v alone is as 6")
    ignored = ", ".join(f"--{name}" for name in IGNORED)
    parser.epilog = f"Accepted and ignored, with a warning each: {ignored}."


def register(subparsers: Any) -> None:
    parser: CommandParser = subparsers.add_parser(
        "run",
        help="run the scheduler against a Karmada control plane",
        usage=USAGE,
        description="Schedule the ResourceBindings and ClusterResourceBindings of a Karmada control plane. "
        "Stops on SIGTERM/SIGINT within shutdown.drainTimeout; exits 1 if the lease is lost.",
    )
    parser.add_argument("--context", metavar="NAME", help="kubeconfig context")
    parser.add_argument("--namespace", metavar="NS",
                        help=f"the scheduler's namespace, where --config is read (default {DEFAULT_NAMESPACE})")
    parser.add_argument("--config", metavar="NAME", help="watch this SchedulerConfiguration in --namespace")
    parser.add_argument("--config-file", metavar="FILE", help="read a SchedulerConfiguration from a file")
    parser.add_argument("--identity", metavar="ID", help="lease holder identity (default <hostname>_<uuid>)")
    parser.add_argument("--event-path", metavar="auto|kopf",
                        help="auto (default): the fast event path on a Kopf release it was verified against, else "
                        "Kopf's own handlers; kopf: Kopf's own handlers always (slower per event)")
    parser.add_argument("--verbose", action="store_true", help="debug logging, Kopf's too (as --v=6)")
    parser.add_argument("--log-format", metavar="text|json",
                        help="text lines (default) or one JSON object per line (Karmada's --logging-format too)")
    add_karmada_help(parser)
    parser.set_defaults(handler=handle, exit_at_once=True)
    parser.own_syntax = parse_run_args

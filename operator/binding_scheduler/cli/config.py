"""`binding-scheduler config from-flags ARGS...`: the SchedulerConfiguration that karmada-scheduler's flags mean
(`config validate -f FILE`, which checks SchedulerConfiguration files, is in config_validate).

The printed object holds only the fields the flags set, so the rest keep their defaults; `parse_config` reads
it back to exactly what `run` would use with the same flags. Flags that are no configuration field
(`--kubeconfig`, `--master`, `--v`) are named in a comment: they stay on `run`'s command line.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import yaml

from ..algorithm.plugins import PluginError
from ..model import ValidationError
from ..model.config import API_VERSION, KIND
from ..operator.options import DEFAULT_NAMESPACE
from ..scheduling.framework.plugins import UnknownPlugins, load_plugins, plugin_warnings
from . import config_validate
from .goflags import Flag
from .karmada_flags import KarmadaSettings
from .parsers import CommandParser
from .run import USAGE, add_karmada_help, read_command_line

DEFAULT_NAME = "binding-scheduler"
OWN_FLAGS = {"name": Flag("name"), "namespace": Flag("namespace")}


def configuration(settings: KarmadaSettings, name: str | None, namespace: str | None) -> dict[str, Any]:
    spec = dict(settings.overrides.spec)
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": {
            "name": name or spec.get("schedulerName") or DEFAULT_NAME,
            "namespace": namespace or DEFAULT_NAMESPACE,
        },
        "spec": spec,
    }


def render(settings: KarmadaSettings, name: str | None = None, namespace: str | None = None) -> str:
    text = yaml.safe_dump(configuration(settings, name, namespace), sort_keys=False)
    if settings.command_line_only:
        flags = " ".join(settings.command_line_only)
        text = f"# not part of the object: these stay command-line flags of `binding-scheduler run`: {flags}\n" + text
    return text


def parse_from_flags_args(parser: CommandParser, argv: list[str]) -> dict[str, Any]:
    own, settings = read_command_line(parser, argv, OWN_FLAGS)
    return {"karmada": settings, "name": own.get("name") or None, "namespace": own.get("namespace") or None}


def from_flags(args: argparse.Namespace) -> int:
    settings: KarmadaSettings = args.karmada
    for line in settings.warnings:
        print(f"warning: {line}", file=sys.stderr)
    try:
        config = settings.overrides.parse()
    except ValidationError as error:
        for one in error.errors:
            print(f"error: {one}", file=sys.stderr)
        return 2
    try:
        plugins = load_plugins(config.plugins, workload_affinity=config.feature_gates.workload_affinity,
                               allow_unknown=config.allow_unknown_plugins)
    except UnknownPlugins as error:
        print(f"error: {settings.overrides.named(ValidationError(error.field, error.message))}", file=sys.stderr)
        return 2
    except PluginError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    for line in plugin_warnings("--plugins", plugins):
        print(f"warning: {line}", file=sys.stderr)
    sys.stdout.write(render(settings, args.name, args.namespace))
    return 0


def register(subparsers: Any) -> None:
    group = subparsers.add_parser("config", help="SchedulerConfiguration tools",
                                  description="Tools for the SchedulerConfiguration resource.")
    commands = group.add_subparsers(dest="config_command", required=True, metavar="COMMAND")
    parser: CommandParser = commands.add_parser(
        "from-flags",
        help="print the SchedulerConfiguration that karmada-scheduler's flags mean",
        usage=USAGE,
        description="Print, as YAML, the SchedulerConfiguration holding the fields that karmada-scheduler's "
        "flags set (the same values `binding-scheduler run` takes from them).",
    )
    parser.add_argument("--name", metavar="NAME",
                        help=f"metadata.name (default: the --scheduler-name, else {DEFAULT_NAME})")
    parser.add_argument("--namespace", metavar="NS", help=f"metadata.namespace (default {DEFAULT_NAMESPACE})")
    add_karmada_help(parser)
    parser.set_defaults(handler=from_flags)
    parser.own_syntax = parse_from_flags_args
    config_validate.register(commands)

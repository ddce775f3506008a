"""`binding-scheduler config validate -f FILE`: every error of every SchedulerConfiguration in a file, at once.

Offline: nothing but the file is read (and the installed plugins' entry points, as `run` loads them). One line
per finding, `FILE: SchedulerConfiguration NAME: field.path: problem`; the valid objects are listed on stdout
(`FILE: SchedulerConfiguration NAME: valid`), everything else goes to stderr. Exit status 2 when anything is
wrong, else 0. Documents of another kind are skipped with a line saying so; a file without any
SchedulerConfiguration is an error.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..algorithm.plugins import PluginError
from ..model import ValidationError
from ..model.config import KIND, SchedulerConfig, read_config
from ..operator.config_file import (
    STDIN,
    STDIN_NAME,
    ConfigFileError,
    describe,
    is_other_kind,
    read_documents,
    touches_plugins,
)
from ..scheduling.framework.plugins import load_plugins, plugin_warnings

"""The fields the plugins are chosen by: they are checked only when these are right."""


def validate_file(path: str) -> bool:
    """Print what `path` holds, in the order of its documents; True when everything in it is valid."""
    name = STDIN_NAME if path == STDIN else path
    try:
        documents = read_documents(path, stdin=True)
    except ConfigFileError as error:
        _say(*error.lines)
        return False
    valid, ours = True, 0
    for number, document in enumerate(documents, start=1):
        what = describe(document, number)
        if is_other_kind(document):
            _say(f"{name}: {what}: skipped, not a {KIND}")
            continue
        ours += 1
        errors, warnings = check(document)
        _say(*(f"{name}: {what}: {error}" for error in errors))
        if errors:
            valid = False
        else:
            print(f"{name}: {what}: valid")
        _say(*(f"{name}: {what}: warning: {line}" for line in warnings))
    if not ours:
        count = len(documents)
        _say(f"{name}: no {KIND} found ({count} document{'' if count == 1 else 's'})")
    return valid and ours > 0


def _say(*lines: str) -> None:
    """Lines for stderr; stdout first, so that both read in the documents' order on a terminal."""
    sys.stdout.flush()
    for line in lines:
        print(line, file=sys.stderr)


def check(document: Any) -> tuple[list[ValidationError], list[str]]:
    """Every error of one object, its plugins' included, and the warnings `run` would log about them."""
    config, errors = read_config(document)
    if touches_plugins(errors):
        return errors, []
    plugin_error, warnings = _plugins(config)
    return ([*errors, plugin_error] if plugin_error else errors), warnings


def _plugins(config: SchedulerConfig) -> tuple[ValidationError | None, list[str]]:
    try:
        plugins = load_plugins(config.plugins, workload_affinity=config.feature_gates.workload_affinity,
                               allow_unknown=config.allow_unknown_plugins)
    except PluginError as error:
        return ValidationError("spec.plugins", str(error)), []
    return None, plugin_warnings("spec.plugins", plugins)


def validate(args: argparse.Namespace) -> int:
    results = [validate_file(path) for path in args.filename]
    return 0 if all(results) else 2


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "validate",
        help="check SchedulerConfiguration files offline, reporting every error",
        description="Check every SchedulerConfiguration in the files (YAML or JSON, several documents each; '-' is "
        "standard input) as `run` would read it, its plugins and feature gates included, and report every "
        "error at once, one line each: FILE: SchedulerConfiguration NAME: field.path: problem. Documents of "
        "another kind are skipped. Exit status 2 if anything is wrong.",
    )
    parser.add_argument("-f", "--filename", metavar="FILE", action="append", required=True,
                        help="a file to check ('-': standard input); may be repeated")
    parser.set_defaults(handler=validate)

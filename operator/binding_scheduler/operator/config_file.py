"""`--config-file FILE`: a SchedulerConfiguration read from a YAML or JSON file, for local runs.

Every problem is one line: `FILE: problem` for the file itself, `FILE: SchedulerConfiguration NAME: field.path:
problem` for each wrong field of an object in it (all of them at once). `config validate` reads files the same
way, every document of them.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from ..algorithm.plugins import PluginError
from ..model import ValidationError
from ..model.config import API_VERSION, KIND, SchedulerConfig
from ..model.config.parse import read_config
from ..model.errors import combined
from ..model.overrides import NO_OVERRIDES, SpecOverrides
from ..scheduling.framework.plugins import UnknownPlugins, load_plugins

API_GROUP = API_VERSION.partition("/")[0]
STDIN = "-"
STDIN_NAME = "<stdin>"
"""How `-` (standard input, for `config validate`) is named in the lines."""


class ConfigFileError(Exception):
    """The file cannot be read or does not hold one valid SchedulerConfiguration. `problems` has one entry per
    problem (the first is `problem`), `lines` each as `FILE: problem`; str() is every line, joined by `; `."""

    def __init__(self, path: str, problem: str, *more: str) -> None:
        self.path = path
        self.problem = problem
        self.problems = (problem, *more)
        super().__init__("; ".join(self.lines))

    @property
    def lines(self) -> list[str]:
        return [f"{self.path}: {problem}" for problem in self.problems]


def read_documents(path: str, *, stdin: bool = False) -> list[Any]:
    """Every document of `path` (YAML, or JSON which is YAML too), empty ones left out; with `stdin`, a path of
    `-` is standard input (named `<stdin>` in the errors)."""
    from_stdin = stdin and path == STDIN
    name = STDIN_NAME if from_stdin else path
    try:
        text = sys.stdin.read() if from_stdin else Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigFileError(name, error.strerror or str(error)) from error
    except UnicodeDecodeError as error:
        raise ConfigFileError(name, f"not UTF-8 text: {error.reason}") from error
    try:
        return [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError as error:
        problem = str(error).replace("\n", " ")
        raise ConfigFileError(name, f"not valid YAML or JSON: {problem}") from error


def describe(document: Any, number: int) -> str:
    """The object as the lines name it: `SchedulerConfiguration NAME` (its kind, else SchedulerConfiguration; its
    metadata.name, else `#N`, its place among the file's documents), or `document N` when it is no object."""
    if not isinstance(document, Mapping):
        return f"document {number}"
    kind, meta = document.get("kind"), document.get("metadata")
    name = meta.get("name") if isinstance(meta, Mapping) else None
    kind_text = kind if isinstance(kind, str) and kind else KIND
    return f"{kind_text} {name}" if isinstance(name, str) and name else f"{kind_text} #{number}"


def is_other_kind(document: Any) -> bool:
    """An object that says it is of another kind, of another API group. A kind that is missing or no string, or
    another kind in our group (a misspelt kind), is read as ours, so that it is reported."""
    if not isinstance(document, Mapping):
        return False
    kind, api_version = document.get("kind"), document.get("apiVersion")
    ours = isinstance(api_version, str) and api_version.partition("/")[0] == API_GROUP
    return isinstance(kind, str) and bool(kind) and kind != KIND and not ours


def problems(error: ValidationError, what: str) -> list[str]:
    """Each of `error`'s errors as a line's problem: `SchedulerConfiguration NAME: field.path: problem`."""
    return [f"{what}: {one}" for one in error.errors]


def load_config_file(path: str, overrides: SpecOverrides = NO_OVERRIDES) -> SchedulerConfig:
    """The one SchedulerConfiguration in `path` (YAML, or JSON which is YAML too), with `overrides` (the
    command line's) winning; an error at an overridden field names the flag instead of the field. Every wrong
    field is in the ConfigFileError raised. Objects of other kinds beside it (its Namespace, as the examples
    carry it for `kubectl apply -f`) are passed over."""
    documents = read_documents(path)
    ours = [(number, d) for number, d in enumerate(documents, start=1) if not is_other_kind(d)]
    if not ours and len(documents) == 1:
        ours = [(1, documents[0])]  # the one object there is: its apiVersion and kind are what is wrong
    if len(ours) != 1:
        among = "" if len(ours) == len(documents) else f" among {len(documents)}"
        raise ConfigFileError(path, f"expected one SchedulerConfiguration, found {len(ours)}{among} documents")
    ((number, document),) = ours
    merged = overrides.merged(document)
    config, errors = read_config(merged)
    if not touches_plugins(errors):
        errors += _plugin_errors(config)  # every error at once: an unknown plugin name too
    if errors:
        error = overrides.named(combined(errors))
        raise ConfigFileError(path, *problems(error, describe(document, number))) from error
    return config


PLUGIN_FIELDS = ("spec.plugins", "spec.allowUnknownPlugins", "spec.featureGates")
"""The fields that choose the plugins: while one of them is wrong, which plugins it means is not known."""


def touches_plugins(errors: list[ValidationError]) -> bool:
    """Is one of `errors` at a field that chooses the plugins (then they are not loaded to check their names)?"""
    return any(error.path == field or error.path.startswith((field + ".", field + "["))
               for error in errors for field in PLUGIN_FIELDS)


def _plugin_errors(config: SchedulerConfig) -> list[ValidationError]:
    """A `spec.plugins` name no plugin has (unless allowed), as `run` would refuse it at start."""
    try:
        load_plugins(config.plugins, workload_affinity=config.feature_gates.workload_affinity,
                     allow_unknown=config.allow_unknown_plugins)
    except UnknownPlugins as error:
        return [ValidationError(error.field, error.message)]
    except PluginError:  # a plugin that fails to load is the service's to report
        return []
    return []

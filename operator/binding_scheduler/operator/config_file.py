"""`--config-file FILE`: a SchedulerConfiguration read from a YAML or JSON file, for local runs."""

from __future__ import annotations

from pathlib import Path

import yaml

from ..model import ValidationError
from ..model.config import SchedulerConfig
from ..model.overrides import NO_OVERRIDES, SpecOverrides


class ConfigFileError(Exception):
    """The file cannot be read or does not hold one valid SchedulerConfiguration; the message names the file."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem


def load_config_file(path: str, overrides: SpecOverrides = NO_OVERRIDES) -> SchedulerConfig:
    """The one SchedulerConfiguration in `path` (YAML, or JSON which is YAML too), with `overrides` (the
    command line's) winning; an error at an overridden field names the flag instead of the field."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigFileError(path, error.strerror or str(error)) from error
    except UnicodeDecodeError as error:
        raise ConfigFileError(path, f"not UTF-8 text: {error.reason}") from error
    try:
        documents = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError as error:
        problem = str(error).replace("\n", " ")
        raise ConfigFileError(path, f"not valid YAML or JSON: {problem}") from error
    if len(documents) != 1:
        raise ConfigFileError(path, f"expected one SchedulerConfiguration, found {len(documents)} documents")
    try:
        return overrides.parse(documents[0])
    except ValidationError as error:
        raise ConfigFileError(path, str(error)) from error

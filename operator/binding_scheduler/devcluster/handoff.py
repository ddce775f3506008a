"""The core's one way to its kubectl package, which is optional: the package when it is installed (the `kubectl`
extra of binding-scheduler-devcluster installs it, as binding-scheduler-devcluster-kubectl), else `plain`, which
does without it by the same names. The type checker sees the package; a test holds `plain` to its names and
signatures."""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import TYPE_CHECKING

__all__ = ["INSTALLED", "kubectl"]

PACKAGE = f"{__package__}.kubectl"


def _kubectl_or_plain() -> ModuleType:
    try:
        return importlib.import_module(PACKAGE)
    except ModuleNotFoundError as error:
        if error.name != PACKAGE:
            raise
    return importlib.import_module(f"{__package__}.plain")


if TYPE_CHECKING:
    from . import kubectl
else:
    kubectl = _kubectl_or_plain()

INSTALLED = kubectl.__name__ == PACKAGE
"""Whether the kubectl package is installed (else `kubectl` is `plain`)."""

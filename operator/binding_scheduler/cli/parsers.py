"""The sub-commands' argument parser: argparse's, except that a command may read its arguments itself.

`run` and `config from-flags` take karmada-scheduler's flags in Go's syntax (see goflags), which argparse
cannot parse (a boolean takes a value only with `=`). Such a command sets `own_syntax`: argparse still applies
the defaults and prints the command's usage, help and errors, and an unknown flag is reported with the
command's usage, not the top-level one (argparse hands a sub-command's unknown arguments to the top level).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import Any

OwnSyntax = Callable[["CommandParser", list[str]], dict[str, Any]]


class CommandParser(argparse.ArgumentParser):
    own_syntax: OwnSyntax | None = None
    """Reads the command's arguments into namespace values; reports a problem with `parser.error()`."""

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: Any = None
    ) -> tuple[Any, list[str]]:
        if self.own_syntax is None:
            return super().parse_known_args(args, namespace)
        namespace, _ = super().parse_known_args([], namespace)  # the defaults and set_defaults() values
        for key, value in self.own_syntax(self, list(args or [])).items():
            setattr(namespace, key, value)
        return namespace, []

"""Go's command-line flag syntax as Kubernetes components parse it (spf13/pflag under cobra).

`--name=value` and `--name value`; a boolean takes a value only with `=` (`--leader-elect`,
`--leader-elect=false`: in `--leader-elect false` the `false` is an argument); `_` and `-` are the same in a name
(component-base's WordSepNormalizeFunc); a one-letter shorthand as `-v`, `-v=4`, `-v4` or `-v 4`; `--` ends the
flags; empty arguments are skipped, as Karmada's commands skip them. argparse cannot do the boolean rule, hence
this parser; it only splits, each flag's value is the caller's to read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass


class FlagError(Exception):
    """The command line cannot be used; the message names the flag (or argument) and what is wrong."""


@dataclass(frozen=True, slots=True)
class Flag:
    name: str
    boolean: bool = False
    shorthand: str = ""
    optional_number: bool = False
    """A value is optional (`-v` alone is ours: debug logging) and, when not attached with `=`, the next argument
    is the value only if it is a number (`-v 4` is klog's verbosity 4)."""


@dataclass(frozen=True, slots=True)
class Given:
    """One flag on the command line: its name (normalized) and its value as written; "" for a bare optional."""

    name: str
    value: str


def parse(argv: Sequence[str], flags: Mapping[str, Flag]) -> list[Given]:
    """Every flag in `argv`, in order. Raises FlagError for an unknown flag, a missing value or an argument."""
    shorthands = {f.shorthand: f for f in flags.values() if f.shorthand}
    given: list[Given] = []
    rest = [arg for arg in argv if arg]
    previous = ""
    while rest:
        arg = rest.pop(0)
        if arg == "--":
            if rest:
                raise FlagError(f"takes no arguments, got {rest[0]!r}")
            break
        if arg.startswith("--"):
            given.append(_long(arg, rest, flags))
        elif arg.startswith("-") and len(arg) > 1:
            given.append(_short(arg, rest, shorthands, flags))
        else:
            long_name = previous[2:].partition("=")[0] if previous.startswith("--") else ""
            flag = flags.get(normalize(long_name)) if long_name else shorthands.get(previous[1:2])
            if flag is not None and flag.optional_number:
                raise FlagError(f"{previous}: {arg!r} is not a number (the value is optional; given, it is a number: "
                                f"{previous}=4)")
            hint = f" (a boolean takes its value after '=': {previous}={arg})" if flag and flag.boolean else ""
            raise FlagError(f"takes no arguments, got {arg!r}{hint}")
        previous = arg
    return given


def normalize(name: str) -> str:
    return name.replace("_", "-")


def _long(arg: str, rest: list[str], flags: Mapping[str, Flag]) -> Given:
    name, equals, value = arg[2:].partition("=")
    if not name or name.startswith("-"):
        raise FlagError(f"bad flag syntax: {arg}")
    flag = flags.get(normalize(name))
    if flag is None:
        raise FlagError(f"unknown flag: --{name}")
    if equals:
        return Given(flag.name, value)
    return _without_value(flag, f"--{name}", rest)


def _short(arg: str, rest: list[str], shorthands: Mapping[str, Flag], flags: Mapping[str, Flag]) -> Given:
    flag = shorthands.get(arg[1])
    if flag is None:
        hint = f" (did you mean -{arg}?)" if normalize(arg[1:].partition("=")[0]) in flags else ""
        raise FlagError(f"unknown shorthand flag: {arg[1]!r} in {arg}{hint}")
    attached = arg[2:]
    if attached:
        return Given(flag.name, attached[1:] if attached.startswith("=") else attached)
    return _without_value(flag, arg, rest)


def _without_value(flag: Flag, written: str, rest: list[str]) -> Given:
    if flag.boolean:
        return Given(flag.name, "true")
    if flag.optional_number:
        if rest and rest[0].isascii() and rest[0].isdigit():
            return Given(flag.name, rest.pop(0))
        return Given(flag.name, "")
    if not rest:
        raise FlagError(f"flag needs an argument: {written}")
    return Given(flag.name, rest.pop(0))  # as pflag: the next argument, even one that starts with a dash

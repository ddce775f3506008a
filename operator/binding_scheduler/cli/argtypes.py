"""argparse types that refuse a bad value with a message naming the value (argparse adds the flag)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..model import ValidationError
from ..model.duration import parse_duration

MAX_PORT = 65535


def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None


def port(text: str) -> int:
    """A TCP port, 0 (any free port) to 65535."""
    value = _integer(text)
    if not 0 <= value <= MAX_PORT:
        raise argparse.ArgumentTypeError(f"{value} is not a port (0 to {MAX_PORT}; 0 picks a free one)")
    return value


def non_negative(text: str) -> int:
    value = _integer(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} is negative")
    return value


def positive(text: str) -> int:
    value = _integer(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not at least 1")
    return value


def non_negative_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text} is not a number of seconds from 0")
    return value


def duration(text: str) -> float:
    """A Go duration (`3s`, `500ms`, `1m30s`) as seconds, read as `run`'s Karmada flags read one."""
    try:
        return parse_duration(text, "")
    except ValidationError as error:
        raise argparse.ArgumentTypeError(error.problem) from None


def existing_folder(text: str) -> Path:
    path = Path(text)
    if not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text}: {'not a folder' if path.exists() else 'no such folder'}")
    return path


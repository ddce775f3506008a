"""`binding-scheduler examples [DIR]`: write the examples bundled with the package into a folder.

The example fleet, bindings and scheduler configuration are package data (`binding_scheduler/examples/`; the
repository's `examples/` holds a link to each), read through importlib.resources so they are found however
the package is installed. `demo` runs on them by default; this command lets an installed package's user reach them
too, for `simulate -f DIR`, `explain -f DIR` or `kubectl apply -f DIR`.
"""

from __future__ import annotations

import argparse
import sys
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from .inputs import SUFFIXES


def bundled_examples() -> list[Traversable]:
    """The bundled example files, sorted by name (as `input_files` orders a folder)."""
    folder = files("binding_scheduler") / "examples"
    return sorted(
        (item for item in folder.iterdir() if item.is_file() and item.name.endswith(SUFFIXES)),
        key=lambda item: item.name,
    )


def write_examples(folder: Path, *, force: bool = False) -> list[Path]:
    """Copy the bundled examples into `folder` (created if missing); refuses to overwrite unless `force`."""
    sources = bundled_examples()
    targets = [folder / source.name for source in sources]
    existing = [target for target in targets if target.exists()]
    if existing and not force:
        raise FileExistsError(f"not overwriting {', '.join(map(str, existing))} (--force does)")
    folder.mkdir(parents=True, exist_ok=True)
    for source, target in zip(sources, targets, strict=True):
        target.write_bytes(source.read_bytes())
    return targets


def handle(args: argparse.Namespace) -> int:
    try:
        written = write_examples(Path(args.dir), force=args.force)
    except OSError as error:
        print(f"examples: {error}", file=sys.stderr)
        return 1
    for path in written:
        print(path)
    return 0


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "examples",
        help="write the bundled example fleet, bindings and configuration into a folder",
        description="Write the examples bundled with the package (a fleet of Clusters, bindings exercising every "
        "strategy, a scheduler configuration) into DIR, for `simulate -f DIR` or `kubectl apply -f DIR`.",
    )
    parser.add_argument("dir", nargs="?", default="examples", metavar="DIR", help="target folder (default: examples)")
    parser.add_argument("--force", action="store_true", help="overwrite files that already exist")
    parser.set_defaults(handler=handle)

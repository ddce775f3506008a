"""`binding-scheduler examples [DIR]`: write the examples bundled with the package into a folder.

The example fleet, bindings and scheduler configuration are package data (`binding_scheduler/examples/`; the
repository's `examples/` holds a link to each), read through importlib.resources so they are found however
the package is installed. `demo` runs on them by default; this command lets an installed package's user reach them
too, for `simulate -f DIR` or `explain -f DIR`, and `--apply` puts them on an API server with their namespaces and
the Clusters' status (see `example_apply`), which a plain `kubectl apply -f DIR` would drop.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from ..kube import ConfigError, KubeError
from .example_apply import ApplyError, apply_examples
from .inputs import SUFFIXES, documents


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


def bundled_documents() -> list[dict[str, Any]]:
    """Every object of the bundled examples, in file order (clusters before bindings)."""
    return [document for item in bundled_examples() for document in documents(item)]


def handle(args: argparse.Namespace) -> int:
    if args.dir is not None or not args.apply:
        try:
            written = write_examples(Path(args.dir or "examples"), force=args.force)
        except FileExistsError as error:  # the caller's choice to make: bad input, as the help says (status 2)
            print(f"examples: {error}", file=sys.stderr)
            return 2
        except OSError as error:
            print(f"examples: {error}", file=sys.stderr)
            return 1
        for path in written:
            print(path)
    if args.apply:
        try:
            asyncio.run(apply_examples(bundled_documents(), print, kubeconfig=args.kubeconfig, context=args.context))
        except (ConfigError, ApplyError, KubeError) as error:
            print(f"examples: {error}", file=sys.stderr)
            return 1
    return 0


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "examples",
        help="write the bundled example fleet, bindings and configuration into a folder",
        description="Write the examples bundled with the package (a fleet of Clusters, bindings exercising every "
        "strategy, a scheduler configuration) into DIR, for `simulate -f DIR`; with --apply, put them on the API "
        "server instead (or too, when DIR is given): their namespaces, each object server-side, and each "
        "Cluster's status through its status subresource, as its agent would report it (`kubectl apply -f DIR` "
        "drops that status, and every binding would then be NoClusterFit).",
    )
    parser.add_argument("dir", nargs="?", default=None, metavar="DIR",
                        help="target folder (default: examples, or none with --apply)")
    parser.add_argument("--force", action="store_true", help="overwrite files that already exist")
    parser.add_argument("--apply", action="store_true",
                        help="apply the examples to the API server (Karmada's CRDs must be installed)")
    parser.add_argument("--kubeconfig", metavar="FILE",
                        help="with --apply: kubeconfig file (default: $KUBECONFIG, ~/.kube/config, then in-cluster)")
    parser.add_argument("--context", metavar="NAME", help="with --apply: kubeconfig context")
    parser.set_defaults(handler=handle)

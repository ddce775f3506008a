"""Reading Clusters and bindings from YAML/JSON files or folders, kubectl style."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

import yaml

from ..model import Binding, Cluster, ValidationError, parse_binding, parse_cluster
from .fields import READ_AS, unknown_fields, wrong_api_version

SUFFIXES = (".yaml", ".yml", ".json")
BINDING_KINDS = ("ResourceBinding", "ClusterResourceBinding")


@dataclass(slots=True)
class Inputs:
    clusters: list[Cluster] = field(default_factory=list)
    bindings: list[Binding] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def input_files(paths: Sequence[str]) -> Iterator[Path]:
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in SUFFIXES)
        else:
            yield path


class _Loader(yaml.SafeLoader):
    """YAML as kubectl reads it: a timestamp-looking scalar stays the string it is written as.

    PyYAML's safe loader turns an unquoted `2024-01-01T00:00:00Z` into a datetime, which the model (fed JSON
    by the API server) rightly refuses; kubectl's YAML-to-JSON conversion keeps it as text.
    """


_Loader.yaml_implicit_resolvers = {
    first: [(tag, pattern) for tag, pattern in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def documents(path: Traversable) -> Iterator[Any]:
    """Every object in a file (a path, or package data): multi-document YAML, JSON, and `kind: List` items."""
    with path.open(encoding="utf-8") as handle:
        for document in yaml.load_all(handle, Loader=_Loader):
            if document is None:
                continue
            kind = document.get("kind") if isinstance(document, dict) else None
            if isinstance(kind, str) and kind.endswith("List") and isinstance(document.get("items"), list):
                yield from document["items"] or ()
            else:
                yield document


def _describe(document: Any) -> tuple[str, str]:
    if not isinstance(document, dict):
        return "-", "-"
    meta = document.get("metadata")
    name = meta.get("name") if isinstance(meta, dict) else None
    return str(document.get("kind") or "-"), str(name or "-")


def load_inputs(paths: Sequence[str], *, strict: bool = False) -> Inputs:
    """Every Cluster and binding in `paths`. A field its kind's schema lacks is a warning (an error when
    `strict`), as kubectl's field validation reports it; an apiVersion the model does not read is an error."""
    inputs = Inputs()
    cluster_files: dict[str, Path] = {}
    for path in input_files(paths):
        try:
            docs = list(documents(path))
        except OSError as error:
            inputs.errors.append(f"{path}: {error.strerror or error}")
            continue
        except yaml.YAMLError as error:
            problem = str(error).replace("\n", " ")
            inputs.errors.append(f"{path}: not valid YAML or JSON: {problem}")
            continue
        except UnicodeDecodeError as error:
            inputs.errors.append(f"{path}: not UTF-8 text: {error.reason}")
            continue
        for document in docs:
            kind, name = _describe(document)
            if isinstance(document, dict) and kind in READ_AS:
                if (wrong := wrong_api_version(document)) is not None:
                    inputs.errors.append(f"{path}: {kind} {name}: apiVersion: {wrong}")
                    continue
                unknown = [f'{path}: {kind} {name}: unknown field "{f}"' for f in unknown_fields(document)]
                (inputs.errors if strict else inputs.warnings).extend(unknown)
            try:
                if kind == "Cluster":
                    cluster = parse_cluster(document)
                    if cluster.name in cluster_files:
                        # Cluster names are unique in an API server; two would both be scheduled to.
                        first = cluster_files[cluster.name]
                        raise ValidationError("metadata.name", f"{cluster.name!r} is already a Cluster in {first}")
                    cluster_files[cluster.name] = path
                    inputs.clusters.append(cluster)
                elif kind in BINDING_KINDS:
                    inputs.bindings.append(parse_binding(document))
                elif not isinstance(document, dict):
                    raise ValidationError("<document>", "expected an object")
                else:
                    inputs.skipped.append(f"{path}: {kind} {name}")
            except ValidationError as error:
                inputs.errors.append(f"{path}: {kind} {name}: {error}")
    return inputs

"""Reading Clusters, bindings and SchedulerConfigurations from YAML/JSON files, folders or standard input
(`-`), kubectl style; `cli/live.py` feeds a live API server's objects through the same reader."""

from __future__ import annotations

import io
import json
import re
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

import yaml

from ..kube import jsonio
from ..model import Binding, Cluster, ValidationError, parse_binding, parse_cluster
from ..model.config import KIND as CONFIG_KIND
from ..model.meta import InvalidBinding, ObjectMeta, ParsedBinding, StoredBinding
from .fields import READ_AS, unknown_fields, wrong_api_version

SUFFIXES = (".yaml", ".yml", ".json")
BINDING_KINDS = ("ResourceBinding", "ClusterResourceBinding")
STDIN = "-"


@dataclass(frozen=True, slots=True)
class SourcedConfig:
    """A SchedulerConfiguration document found among the inputs, and where."""

    source: str
    document: Mapping[str, Any]


@dataclass(slots=True)
class Inputs:
    clusters: list[Cluster] = field(default_factory=list)
    entries: list[StoredBinding] = field(default_factory=list)
    """Every binding in input order: parsed (`ParsedBinding`) or refused by the model (`InvalidBinding`), each
    with the body it was read from."""
    sources: dict[int, str] = field(default_factory=dict)
    """Where each entry was read (by the entry's `id`): a file, `-`, or a server's URL."""
    configs: list[SourcedConfig] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def bindings(self) -> list[Binding]:
        return [e.binding for e in self.entries if isinstance(e, ParsedBinding)]

    @property
    def invalid(self) -> list[InvalidBinding]:
        return [e for e in self.entries if isinstance(e, InvalidBinding)]

    def invalid_lines(self) -> list[str]:
        """`SOURCE: KIND NAMESPACE/NAME: invalid binding: field: problem`, one per binding the model refused."""
        return [f"{self.sources[id(e)]}: {e.meta.kind} {e.meta.key or '-'}: invalid binding: {e.error}"
                for e in self.invalid]


def input_files(paths: Sequence[str]) -> Iterator[Path]:
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in SUFFIXES)
        else:
            yield path


_KUBECTL_RESOLVERS = {
    first: [(tag, pattern) for tag, pattern in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
"""YAML as kubectl reads it: a timestamp-looking scalar stays the string it is written as. PyYAML's safe loader
turns an unquoted `2024-01-01T00:00:00Z` into a datetime, which the model (fed JSON by the API server) rightly
refuses; kubectl's YAML-to-JSON conversion keeps it as text."""


class _PureLoader(yaml.SafeLoader):
    """PyYAML's pure-Python safe loader, with kubectl's scalars."""

    yaml_implicit_resolvers = _KUBECTL_RESOLVERS


_Loader: type[yaml.SafeLoader] | type[Any] = _PureLoader
if getattr(yaml, "__with_libyaml__", False):

    class _CLoader(yaml.CSafeLoader):
        """libyaml's parser (several times faster) under the same safe constructor and kubectl's scalars."""

        yaml_implicit_resolvers = _KUBECTL_RESOLVERS

    _Loader = _CLoader

_LONG_INTEGER = re.compile(r"\d{19}")
"""An integer literal of 19 digits or more: orjson reads one beyond 64 bits as a float, the standard library as
the integer it is."""


def _json_document(text: str) -> Any:
    """`text` as one JSON document (orjson, as the API path reads JSON); ValueError when it is not JSON."""
    return json.loads(text) if _LONG_INTEGER.search(text) else jsonio.loads(text)


def _objects(stream: Iterable[Any]) -> Iterator[Any]:
    for document in stream:
        if document is None:
            continue
        kind = document.get("kind") if isinstance(document, dict) else None
        if isinstance(kind, str) and kind.endswith("List") and isinstance(document.get("items"), list):
            yield from document["items"] or ()
        else:
            yield document


def documents(path: Traversable) -> Iterator[Any]:
    """Every object in a file (a path, or package data): multi-document YAML, JSON, and `kind: List` items."""
    with path.open(encoding="utf-8") as handle:
        if path.name.endswith(".json"):
            yield from text_documents(handle.read())
        else:
            yield from _objects(yaml.load_all(handle, Loader=_Loader))


def text_documents(text: str) -> Iterator[Any]:
    """Every object in `text`, as `documents` reads a file: JSON through the JSON parser when it is JSON, else (and
    for JSON that does not parse, so the error says where) YAML."""
    if text.lstrip()[:1] in ("{", "["):
        try:
            return _objects([_json_document(text)])
        except ValueError:
            pass
    return _objects(yaml.load_all(io.StringIO(text), Loader=_Loader))


def _describe(document: Any) -> tuple[str, str]:
    if not isinstance(document, dict):
        return "-", "-"
    meta = document.get("metadata")
    name = meta.get("name") if isinstance(meta, dict) else None
    return str(document.get("kind") or "-"), str(name or "-")


class InputReader:
    """Adds objects to `Inputs`, one source at a time. A field its kind's schema lacks is a warning (an error
    when `strict`), as kubectl's field validation reports it; an apiVersion the model does not read is an error;
    a binding the model refuses is kept as an `InvalidBinding` (its callers decide whether that is fatal)."""

    def __init__(self, *, strict: bool = False) -> None:
        self.inputs = Inputs()
        self.strict = strict
        self._cluster_sources: dict[str, str] = {}

    def read_paths(self, paths: Sequence[str]) -> Inputs:
        for raw in paths:
            if raw == STDIN:
                self.read_text(STDIN, sys.stdin.read())
            else:
                for path in input_files([raw]):
                    self.read_file(path)
        return self.inputs

    def read_file(self, path: Path) -> None:
        try:
            docs = list(documents(path))
        except OSError as error:
            self.inputs.errors.append(f"{path}: {error.strerror or error}")
            return
        except UnicodeDecodeError as error:
            self.inputs.errors.append(f"{path}: not UTF-8 text: {error.reason}")
            return
        except yaml.YAMLError as error:
            self._not_yaml(str(path), error)
            return
        self.add(str(path), docs)

    def read_text(self, source: str, text: str) -> None:
        try:
            docs = list(text_documents(text))
        except yaml.YAMLError as error:
            self._not_yaml(source, error)
            return
        self.add(source, docs)

    def _not_yaml(self, source: str, error: yaml.YAMLError) -> None:
        problem = str(error).replace("\n", " ")
        self.inputs.errors.append(f"{source}: not valid YAML or JSON: {problem}")

    def add(self, source: str, docs: Iterable[Any]) -> None:
        for document in docs:
            try:
                self._add_one(source, document)
            except ValidationError as error:
                kind, name = _describe(document)
                self.inputs.errors.append(f"{source}: {kind} {name}: {error}")

    def _add_one(self, source: str, document: Any) -> None:
        inputs = self.inputs
        kind, name = _describe(document)
        if not isinstance(document, dict):
            raise ValidationError("<document>", "expected an object")
        if kind in READ_AS:
            if (wrong := wrong_api_version(document)) is not None:
                raise ValidationError("apiVersion", wrong)
            unknown = [f'{source}: {kind} {name}: unknown field "{f}"' for f in unknown_fields(document)]
            (inputs.errors if self.strict else inputs.warnings).extend(unknown)
        if kind == "Cluster":
            cluster = parse_cluster(document)
            if cluster.name in self._cluster_sources:
                # Cluster names are unique in an API server; two would both be scheduled to.
                first = self._cluster_sources[cluster.name]
                raise ValidationError("metadata.name", f"{cluster.name!r} is already a Cluster in {first}")
            self._cluster_sources[cluster.name] = source
            inputs.clusters.append(cluster)
        elif kind in BINDING_KINDS:
            entry = _stored_binding(document)
            inputs.sources[id(entry)] = source
            inputs.entries.append(entry)
        elif kind == CONFIG_KIND:
            inputs.configs.append(SourcedConfig(source, document))
        elif kind != "Namespace":  # what the objects live in, as a kubectl export or the examples carry it
            inputs.skipped.append(f"{source}: {kind} {name}")


def _stored_binding(document: Mapping[str, Any]) -> StoredBinding:
    meta = ObjectMeta.of(document)
    try:
        return ParsedBinding(document, meta, parse_binding(document))
    except ValidationError as error:
        return InvalidBinding(document, meta, error)


def load_inputs(paths: Sequence[str], *, strict: bool = False) -> Inputs:
    """Every Cluster, binding and SchedulerConfiguration in `paths` (`-` is standard input)."""
    return InputReader(strict=strict).read_paths(paths)

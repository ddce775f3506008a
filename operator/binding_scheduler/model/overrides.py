"""Settings that win over a SchedulerConfiguration's spec: Karmada's command-line flags given to `run`.

They are a partial spec, deep-merged onto the object's spec before `parse_config`, so validation keeps its field
paths; an error at a path an override set is then named after the override (`--kube-api-qps: 0 is not ...`),
since that is what the user wrote. Pure: no I/O.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from .config import API_VERSION, KIND, SchedulerConfig, parse_config
from .errors import ValidationError, combined
from .fields import EMPTY_MAP

DEFAULT_OBJECT: Mapping[str, Any] = MappingProxyType({"apiVersion": API_VERSION, "kind": KIND})
"""A SchedulerConfiguration with no spec: the defaults (what `run` uses without --config or --config-file)."""


@dataclass(frozen=True, slots=True)
class SpecOverrides:
    spec: Mapping[str, Any] = field(default=EMPTY_MAP)
    """A partial spec in the object's JSON form (`{"kubeAPI": {"qps": 100}}`). Read-only."""
    sources: Mapping[str, str] = field(default=EMPTY_MAP)
    """Who set each leaf, by path (`spec.kubeAPI.qps` -> `--kube-api-qps`)."""

    def set(self, path: str, value: Any, source: str) -> SpecOverrides:
        """A copy with `value` at `path` (relative to spec, dotted: `kubeAPI.qps`), set by `source`."""
        keys = path.split(".")
        spec = copy.deepcopy(dict(self.spec))
        node = spec
        for key in keys[:-1]:
            node = node.setdefault(key, {})
        node[keys[-1]] = value
        return SpecOverrides(spec, {**self.sources, f"spec.{path}": source})

    @property
    def paths(self) -> list[str]:
        """The spec paths set, in the order they were set."""
        return list(self.sources)

    def merged(self, body: Any) -> Any:
        """`body` (a whole object) with the overrides merged onto its spec; `body` itself is not changed. Not
        an object at all, it is returned as it is, for `parse_config` to say so."""
        if not self.spec or not isinstance(body, Mapping):
            return body
        return {**body, "spec": deep_merge(body.get("spec"), self.spec)}

    def parse(self, body: Any = DEFAULT_OBJECT) -> SchedulerConfig:
        """`parse_config` of the merged object; an error at a path we set names its source instead."""
        try:
            return parse_config(self.merged(body))
        except ValidationError as error:
            raise self.named(error) from None

    def named(self, error: ValidationError) -> ValidationError:
        """`error` with each of its errors at a path we set named after its source (every one of several)."""
        each = error.errors
        named = [one if (source := self.source_of(one.path)) is None else ValidationError(source, one.problem)
                 for one in each]
        return error if all(a is b for a, b in zip(named, each, strict=True)) else combined(named)

    def source_of(self, path: str) -> str | None:
        for leaf, source in self.sources.items():
            if path == leaf or path.startswith((leaf + ".", leaf + "[")):
                return source
        return None


NO_OVERRIDES = SpecOverrides()


def deep_merge(base: Any, overlay: Mapping[str, Any]) -> Any:
    """`overlay` merged onto `base`: mappings key by key, anything else replaced (lists too). A `base` that is
    set but not a mapping is kept as it is, so that its own error is still reported."""
    if base is None:
        return copy.deepcopy(dict(overlay))
    if not isinstance(base, Mapping):
        return base
    merged = dict(base)
    for key, value in overlay.items():
        if isinstance(value, Mapping):
            merged[key] = deep_merge(base.get(key), value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged

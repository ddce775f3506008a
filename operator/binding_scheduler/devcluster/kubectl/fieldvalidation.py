"""`?fieldValidation=Strict|Warn|Ignore` on create, update and patch, as kube-apiserver applies it: unknown fields
(those pruning drops) and duplicate JSON fields are a `400 BadRequest` (a `422` for a patch) under `Strict`, a
`Warning: 299 - "unknown field \\"spec.x\\""` header each under `Warn` (the default), and nothing under `Ignore`.
kubectl create and apply send `Strict`."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from binding_scheduler.crds.structural import unknown_fields

from ..errors import ApiError, bad_request, invalid_options
from ..resources import ResourceType
from .builtin_schemas import builtin_schema

MODES = ("", "Ignore", "Strict", "Warn")


class _Duplicates(dict[str, Any]):
    """A JSON object that had a key more than once (the names, in order)."""

    repeated: list[str]


# Every object key without escapes in a JSON text (and a few string values that look like one: only ever
# more, so a body whose matches are all different has no duplicate key).
_KEYS = re.compile(rb'"([^"\\]*)"\s*:')
# A `\u` escape (it may spell a quote, which orjson writes back escaped), or a quote a blank follows (a key may
# be apart from its colon); a few harmless others match too.
_UNCOUNTABLE = (b"\\u", b'" ', b'"\n', b'"\t', b'"\r')


def _has_no_duplicate_key(raw: bytes, parsed: Any) -> bool:
    """True when the JSON text surely has no key twice in one object, told in C. Each `":` of the text closes a
    key or lies in a string (an escaped quote, or the opening one). Without `_UNCOUNTABLE` every key is followed
    by its colon, and orjson writes every string back as the same bytes (an escaped slash aside, which holds no
    quote), so the parse (where a duplicate collapses) written back compact has one `":` fewer for each duplicate
    key, and as many otherwise: as many `":` means no duplicate. False when that cannot be told: the pairs hook
    below then looks object by object (a Python call each, ~1 ms for a binding's 800 `spec.clusters` entries,
    whose keys repeat from entry to entry). `parsed`: the text's parse, when the caller has it (None: parsed here).
    """
    if any(needle in raw for needle in _UNCOUNTABLE):
        return False
    try:
        written = orjson.dumps(orjson.loads(raw) if parsed is None else parsed)
    except (orjson.JSONDecodeError, TypeError):  # not JSON; an integer beyond 64 bits
        return False
    return raw.count(b'":') == written.count(b'":')


def duplicate_fields(raw: bytes, parsed: Any = None) -> list[str]:
    """The paths of the fields a JSON body has more than once (kube keeps the last of them); none for a body
    that is not JSON (a YAML one). `parsed`: the body as the request's decoding gave it, if any (a JSON body's
    parse saves one here). Most bodies are told in C (`_has_no_duplicate_key`); of the others, one whose keys are
    all different costs one scan."""
    if _has_no_duplicate_key(raw, parsed):
        return []
    keys = _KEYS.findall(raw)
    if len(keys) == len(set(keys)):
        return []
    seen_any = False

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        nonlocal seen_any
        result = dict(items)
        if len(result) == len(items):
            return result
        seen_any = True
        marked = _Duplicates(result)
        seen: set[str] = set()
        marked.repeated = []
        for key, _ in items:
            if key in seen:
                marked.repeated.append(key)
            seen.add(key)
        return marked

    try:
        value = json.loads(raw, object_pairs_hook=pairs)
    except (ValueError, RecursionError):
        return []
    found: list[str] = []
    if seen_any:
        _collect(value, "", found)
    return found


def _collect(value: Any, path: str, found: list[str]) -> None:
    if isinstance(value, dict):
        if isinstance(value, _Duplicates):
            found.extend(f"{path}.{key}" if path else key for key in value.repeated)
        for key, item in value.items():
            _collect(item, f"{path}.{key}" if path else key, found)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _collect(item, f"{path}[{index}]", found)


def unknown(rt: ResourceType, obj: Mapping[str, Any]) -> list[str]:
    """The fields of `obj` kube-apiserver would report as unknown for its kind."""
    if rt.schema is not None:
        return rt.schema.unknown_fields(obj)
    return unknown_fields(obj, builtin_schema(rt.group, rt.version, rt.kind))


def go_quote(text: str) -> str:
    """Go's %q of a string (close enough for JSON text: quotes and backslashes escaped)."""
    return json.dumps(text, ensure_ascii=False)


def go_json(value: Any) -> str:
    """Go's json.Marshal of a map: sorted keys, compact, HTML characters escaped."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


@dataclass
class FieldValidation:
    """One write's directive, its duplicate fields, and the warnings it collected."""

    mode: str = "Warn"
    duplicates: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, value: str | None, options_kind: str, duplicates: list[str]) -> FieldValidation:
        if value is not None and value not in MODES:
            supported = ", ".join(json.dumps(mode) for mode in MODES)
            raise invalid_options(options_kind, [{
                "reason": "FieldValueNotSupported", "field": "fieldValidation",
                "message": f"Unsupported value: {json.dumps(value)}: supported values: {supported}"}])
        return cls(value or "Warn", duplicates)

    def check(self, rt: ResourceType, obj: Mapping[str, Any], *, patched: Mapping[str, Any] | None = None) -> None:
        """Report what is unknown in `obj` (the body, or a merge patch) per the directive. For a patch,
        `patched` is the patched object the Strict error quotes."""
        if self.mode == "Ignore":
            return
        problems = [f'duplicate field "{path}"' for path in self.duplicates]
        problems += [f'unknown field "{path}"' for path in unknown(rt, obj)]
        if not problems:
            return
        if self.mode == "Strict":
            why = "strict decoding error: " + ", ".join(problems)
            if patched is None:
                raise bad_request(f'{rt.kind} in version "{rt.version}" cannot be handled as a {rt.kind}: {why}')
            message = f"Invalid value: {go_quote(go_json(patched))}: {why}"
            raise ApiError(422, f' "" is invalid: patch: {message}', "Invalid", {"causes": [
                {"reason": "FieldValueInvalid", "message": message, "field": "patch"}]})
        self.warnings.extend(problems)

    def headers(self) -> list[tuple[str, str]]:
        return [("Warning", f"299 - {go_quote(problem)}") for problem in self.warnings]

"""Typed reading of plain JSON-like dicts, every failure naming the field path and the value."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from .errors import ValidationError, show

INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1


class Fields:
    """A view of one JSON object at a known path."""

    __slots__ = ("data", "path")

    def __init__(self, data: Any, path: str) -> None:
        if not isinstance(data, Mapping):
            raise ValidationError(path or "<root>", f"expected an object, got {show(data)}")
        self.data: Mapping[str, Any] = data
        self.path = path

    def at(self, key: str) -> str:
        return f"{self.path}.{key}" if self.path else key

    def has(self, key: str) -> bool:
        return self.data.get(key) is not None

    def raw(self, key: str) -> Any:
        return self.data.get(key)

    def obj(self, key: str) -> Fields | None:
        value = self.data.get(key)
        if value is None:
            return None
        return Fields(value, self.at(key))

    def required_obj(self, key: str) -> Fields:
        found = self.obj(key)
        if found is None:
            raise ValidationError(self.at(key), "is required")
        return found

    def objects(self, key: str) -> list[Fields]:
        return [Fields(item, f"{self.at(key)}[{i}]") for i, item in enumerate(self.list(key))]

    def list(self, key: str) -> Sequence[Any]:
        value = self.data.get(key)
        if value is None:
            return ()
        if not isinstance(value, list | tuple):
            raise ValidationError(self.at(key), f"expected a list, got {show(value)}")
        return value

    def strings(self, key: str) -> tuple[str, ...]:
        items = self.list(key)
        for i, item in enumerate(items):
            if not isinstance(item, str):
                raise ValidationError(f"{self.at(key)}[{i}]", f"expected a string, got {show(item)}")
        return tuple(items)

    def text(self, key: str, default: str = "") -> str:
        value = self.data.get(key)
        if value is None:
            return default
        if not isinstance(value, str):
            raise ValidationError(self.at(key), f"expected a string, got {show(value)}")
        return value

    def required_str(self, key: str) -> str:
        value = self.text(key)
        if not value:
            raise ValidationError(self.at(key), "is required")
        return value

    def enum(self, key: str, allowed: Sequence[str], default: str = "") -> str:
        value = self.text(key, default)
        if value and value not in allowed:
            raise ValidationError(self.at(key), f"{show(value)} is not one of {', '.join(allowed)}")
        return value

    def integer(self, key: str, default: int = 0, *, minimum: int | None = None, maximum: int = INT64_MAX) -> int:
        value = self.data.get(key)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int):
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            else:
                raise ValidationError(self.at(key), f"expected an integer, got {show(value)}")
        if minimum is not None and value < minimum:
            raise ValidationError(self.at(key), f"{show(value)} is less than {minimum}")
        if value > maximum:
            raise ValidationError(self.at(key), f"{show(value)} is greater than {maximum}")
        return value

    def flag(self, key: str, default: bool = False) -> bool:
        value = self.data.get(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise ValidationError(self.at(key), f"expected true or false, got {show(value)}")
        return value

    def time(self, key: str) -> datetime | None:
        value = self.data.get(key)
        if value is None or value == "":
            return None
        if not isinstance(value, str):
            raise ValidationError(self.at(key), f"expected an RFC 3339 time, got {show(value)}")
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
        except ValueError:
            raise ValidationError(self.at(key), f"{show(value)} is not an RFC 3339 time") from None
        if parsed.tzinfo is None:
            raise ValidationError(self.at(key), f"{show(value)} has no time zone")
        return parsed

    def string_map(self, key: str) -> Mapping[str, str]:
        value = self.data.get(key)
        if value is None:
            return EMPTY_MAP
        if not isinstance(value, Mapping):
            raise ValidationError(self.at(key), f"expected an object, got {show(value)}")
        for k, v in value.items():
            if not isinstance(k, str):
                raise ValidationError(self.at(key), f"expected string keys, got {show(k)}")
            if not isinstance(v, str):
                raise ValidationError(f"{self.at(key)}.{k}", f"expected a string, got {show(v)}")
        return FrozenMap(value)


class FrozenMap(dict[str, Any]):
    """An immutable, hashable dict, so model objects stay hashable and safe to share.

    A dict subclass (not a Mapping wrapper) so lookups and iteration run at C speed on the hot path.
    """

    __slots__ = ("_hash",)

    def __init__(self, data: Mapping[str, Any] | None = None) -> None:
        super().__init__(data or {})
        self._hash: int | None = None

    def __hash__(self) -> int:  # type: ignore[override]
        if self._hash is None:
            try:
                self._hash = hash(frozenset(self.items()))
            except TypeError:  # nested JSON values (placement.workloadAffinity): hash the canonical text
                self._hash = hash(json.dumps(self, sort_keys=True, default=repr))
        return self._hash

    def _immutable(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("FrozenMap is immutable")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = _immutable
    __ior__ = _immutable

    def __reduce__(self) -> tuple[type[FrozenMap], tuple[dict[str, Any]]]:
        """Pickled as its items (a dict subclass is otherwise rebuilt item by item, which it refuses)."""
        return FrozenMap, (dict(self),)

    def __repr__(self) -> str:
        return f"FrozenMap({dict.__repr__(self)})"


EMPTY_MAP: Mapping[str, str] = FrozenMap()

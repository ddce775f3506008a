"""A read-only mapping whose dict is built on first read: for answers most decisions never look at."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TypeVar

K = TypeVar("K")
V = TypeVar("V")


class LazyMapping(Mapping[K, V]):
    """Subclasses say how to build the dict (`_build`); it is built once, when first read."""

    __slots__ = ("_built",)

    def __init__(self) -> None:
        self._built: dict[K, V] | None = None

    def _build(self) -> dict[K, V]:
        raise NotImplementedError

    def _dict(self) -> dict[K, V]:
        if self._built is None:
            self._built = self._build()
        return self._built

    def __getitem__(self, key: K) -> V:
        return self._dict()[key]

    def __iter__(self) -> Iterator[K]:
        return iter(self._dict())

    def __len__(self) -> int:
        return len(self._dict())

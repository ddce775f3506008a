"""Kopf's progress and diff-base storages, replaced by ones that keep nothing.

Kopf runs, for every watch event of every object, `diffbase_storage.fetch` and `.build` (a deep copy of the
whole body, stripped of system fields) and `progress_storage.clear` on both essences (more copies), to tell
its change handlers (`on.create`/`on.update`/...) what changed and to remember their progress in the object.
The scheduler has none of those handlers (only `on.event` and `index`, which get the raw event) and Kopf
must write nothing, so all of that is pure cost: a profile at 100 clusters had these copies at ~11 % of the
scheduler's CPU. These storages answer "nothing stored" at no cost.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import kopf


class NoDiffBaseStorage(kopf.DiffBaseStorage):
    """No essence is built or kept: without change handlers Kopf never needs one."""

    def build(self, *, body: Any, extra_fields: Iterable[Any] | None = None) -> Any:
        return None

    def fetch(self, *, body: Any) -> Any:
        return None

    def store(self, *, body: Any, patch: Any, essence: Any) -> None:
        return None


class NoProgressStorage(kopf.ProgressStorage):
    """No handler progress is kept: `on.event` and `index` handlers are not retried through the object."""

    def fetch(self, *, key: Any, body: Any) -> Any:
        return None

    def store(self, *, key: Any, record: Any, body: Any, patch: Any) -> None:
        return None

    def purge(self, *, key: Any, body: Any, patch: Any) -> None:
        return None

    def touch(self, *, body: Any, patch: Any, value: Any) -> None:
        return None

    def clear(self, *, essence: Any) -> Any:
        return essence

"""What the scheduler knows of the API objects: the latest binding bodies and the clusters (from Kopf's events).

"Needs scheduling" is always derived from these objects, never from memory of earlier passes, so a pass that
was cancelled, fenced or lost with its process leaves nothing behind that the next one would need.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ..algorithm.snapshot import Snapshot
from ..model import Binding, Cluster, ValidationError, parse_binding


def binding_key(body: Mapping[str, Any]) -> str:
    metadata = body.get("metadata") or {}
    namespace, name = metadata.get("namespace") or "", metadata.get("name") or ""
    return f"{namespace}/{name}" if namespace else name


class BindingStore:
    """The latest body of every ResourceBinding and ClusterResourceBinding seen, with a parse cache."""

    def __init__(self) -> None:
        self._bodies: dict[str, Mapping[str, Any]] = {}
        self._parsed: dict[str, tuple[str, Binding | ValidationError]] = {}
        self._own_generations: dict[str, int] = {}

    def upsert(self, body: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """Store `body`; return the body it replaces (None when new)."""
        key = binding_key(body)
        previous = self._bodies.get(key)
        self._bodies[key] = body
        return previous

    def wrote(self, key: str, generation: int) -> None:
        """Our own spec write moved the binding to `generation`."""
        self._own_generations[key] = generation

    def is_own_write(self, body: Mapping[str, Any]) -> bool:
        """Is `body`'s generation the one our last spec write produced? The spec has then not changed since our
        write (every spec change bumps the generation), the pass that wrote it records that generation in its
        status write, and no new pass is needed. Compared by generation, not resourceVersion, because Kopf
        batches a burst of events into the latest one (our status write usually follows in the same burst).
        Only intake uses this: forgetting it costs one needless pass, never a missed one."""
        generation = (body.get("metadata") or {}).get("generation")
        return isinstance(generation, int) and self._own_generations.get(binding_key(body)) == generation

    def remove(self, key: str) -> Mapping[str, Any] | None:
        self._own_generations.pop(key, None)
        self._parsed.pop(key, None)
        return self._bodies.pop(key, None)

    def body(self, key: str) -> Mapping[str, Any] | None:
        return self._bodies.get(key)

    def parsed(self, key: str) -> Binding | ValidationError | None:
        """The parsed binding, or the validation error its body raises; None when unknown."""
        body = self._bodies.get(key)
        if body is None:
            return None
        version = str((body.get("metadata") or {}).get("resourceVersion") or "")
        cached = self._parsed.get(key)
        if cached is not None and cached[0] == version and version:
            return cached[1]
        try:
            result: Binding | ValidationError = parse_binding(body)
        except ValidationError as error:
            result = error
        self._parsed[key] = (version, result)
        return result

    def keys(self) -> Iterator[str]:
        return iter(list(self._bodies))

    def __len__(self) -> int:
        return len(self._bodies)


class ClusterStore:
    """Every Cluster, parsed; the snapshot is rebuilt only after a change."""

    def __init__(self) -> None:
        self._clusters: dict[str, Cluster] = {}
        self._invalid: dict[str, ValidationError] = {}
        self._snapshot: Snapshot | None = None

    def upsert(self, cluster: Cluster) -> Cluster | None:
        previous = self._clusters.get(cluster.name)
        self._clusters[cluster.name] = cluster
        self._invalid.pop(cluster.name, None)
        if previous != cluster:
            self._snapshot = None
        return previous

    def reject(self, name: str, error: ValidationError) -> Cluster | None:
        """A cluster whose body is invalid leaves the snapshot (it cannot be scheduled to) until fixed."""
        self._invalid[name] = error
        return self.remove(name)

    def remove(self, name: str) -> Cluster | None:
        previous = self._clusters.pop(name, None)
        if previous is not None:
            self._snapshot = None
        return previous

    def forget(self, name: str) -> Cluster | None:
        """The cluster is gone: out of the snapshot and of the invalid ones."""
        self._invalid.pop(name, None)
        return self.remove(name)

    def names(self) -> list[str]:
        """Every cluster known, valid or not."""
        return sorted(set(self._clusters) | set(self._invalid))

    def get(self, name: str) -> Cluster | None:
        return self._clusters.get(name)

    @property
    def invalid(self) -> Mapping[str, ValidationError]:
        return self._invalid

    def snapshot(self) -> Snapshot:
        if self._snapshot is None:
            self._snapshot = Snapshot(sorted(self._clusters.values(), key=lambda c: c.name))
        return self._snapshot

"""What the scheduler knows of the API objects: the latest binding bodies and the clusters (from Kopf's events).

"Needs scheduling" is always derived from these objects, never from memory of earlier passes, so a pass that
was cancelled, fenced or lost with its process leaves nothing behind that the next one would need.
"""

from __future__ import annotations

import bisect
import dataclasses
import operator
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from typing import Any, TypeVar

from ...algorithm.general_estimator import EstimatorCache
from ...algorithm.snapshot import HARD_TAINT_EFFECTS, Snapshot
from ...model import (
    Binding,
    Cluster,
    InvalidBinding,
    ObjectMeta,
    ParsedBinding,
    TargetCluster,
    ValidationError,
    parse_binding,
    parse_target_clusters,
)
from ...model.body import BindingBody, compacted, equal_but_clusters, raw_spec, raw_targets, raw_version
from ...model.fields import INT32_MAX


def binding_key(body: Mapping[str, Any]) -> str:
    return ObjectMeta.of(body).key


_Items = TypeVar("_Items", list[Any], tuple[TargetCluster, ...])

_NO_REPLICAS = -1
PLACEMENTS_KEPT = 4096  # ClusterStore.places_only_known's answers, at most
"""The pool key's replicas for an entry written without `replicas`
(`{"name": n}` is not `{"name": n, "replicas": 0}`)."""


class TargetPool:
    """One shared object per distinct `spec.clusters` entry, for every binding that holds it.

    A Duplicated binding over 800 clusters is 800 entries: as parsed JSON, 800 small dicts (~200 KiB), and as a
    parsed `Binding`, 800 `TargetCluster`s (~58 KiB). Bindings of a fleet hold the same few entries (a cluster
    and a replica count) over and over, so each binding keeps a list of references to pooled ones instead
    (8 bytes an entry). The pooled objects are never changed: bodies are read-only here, and `TargetCluster` is
    a tuple. The pool is emptied when it reaches `limit` entries (bindings keep the objects they hold; later ones
    share new ones), so it stays bounded however replica counts churn.

    Whole lists of entries, and whole tuples of `TargetCluster`s, of `SHARED_FROM` or more are shared too: bindings
    of one placement usually hold the same result (every Duplicated binding of a policy, and divided ones of equal
    replicas), and the list's own references are 8 bytes an entry again (50,000 bindings over 1,000 clusters held
    ~10,000 lists of 720 entries, of ~200 distinct contents). At most `shared_limit` entries are held by shared
    lists and tuples; past that those are forgotten (bindings keep theirs) and sharing starts again."""

    SHARED_FROM = 16

    def __init__(self, limit: int = 131_072, shared_limit: int = 262_144) -> None:
        self.limit = limit
        self.shared_limit = shared_limit
        self._entries: dict[tuple[str, int], Mapping[str, Any]] = {}
        self._targets: dict[TargetCluster, TargetCluster] = {}
        self._parsed: dict[int, tuple[Mapping[str, Any], TargetCluster]] = {}
        """By id of a pooled entry: the entry (kept to tell a reused id) and its pooled `TargetCluster`."""
        self._lists: dict[int, list[Mapping[str, Any]]] = {}
        self._tuples: dict[int, tuple[TargetCluster, ...]] = {}
        """Shared lists and tuples by the hash of their items' ids (a hit is checked item by item)."""
        self._shared_size = 0

    def __len__(self) -> int:
        return len(self._entries) + len(self._targets)

    @property
    def shared_size(self) -> int:
        """How many entries the shared lists and tuples hold."""
        return self._shared_size

    def entries(self, clusters: Any) -> Any:
        """`spec.clusters` with each plain `{"name", "replicas"}` entry replaced by its pooled equal; anything
        else (components, unknown fields, invalid values: the parse reports those) is kept as it is."""
        if not isinstance(clusters, list):
            return clusters
        if len(self) >= self.limit:
            self._clear()
        pool = self._entries
        shared: list[Any] = []
        plain = True
        for entry in clusters:
            key = _plain_entry_key(entry)
            if key is None:
                shared.append(entry)
                plain = False
                continue
            pooled = pool.get(key)
            if pooled is None:
                pooled = pool[key] = entry
                self._remember_parse(entry, key)
            shared.append(pooled)
        return self._one(self._lists, shared) if plain else shared

    def parsed_entries(self, clusters: Any) -> tuple[TargetCluster, ...]:
        """What a stored `spec.clusters` parses to: each pooled entry's `TargetCluster` is known, the rest are
        parsed (`ValidationError` when invalid)."""
        known = self._parsed
        targets: list[TargetCluster] = []
        for entry in clusters if isinstance(clusters, list) else ():
            hit = known.get(id(entry))
            if hit is None or hit[0] is not entry:
                return self._shared(parse_target_clusters({"clusters": clusters}))
            targets.append(hit[1])
        return self._one(self._tuples, tuple(targets)) if targets else self._shared(
            parse_target_clusters({"clusters": clusters}))

    def _remember_parse(self, entry: Mapping[str, Any], key: tuple[str, int]) -> None:
        name, replicas = key
        if name and replicas <= INT32_MAX:
            target = TargetCluster(name, max(replicas, 0))
            self._parsed[id(entry)] = (entry, self._targets.setdefault(target, target))

    def targets(self, binding: Binding) -> Binding:
        """`binding` with its `clusters` made of pooled `TargetCluster`s."""
        if not binding.clusters:
            return binding
        if len(self) >= self.limit:
            self._clear()
        return dataclasses.replace(binding, clusters=self._shared(binding.clusters))

    def _shared(self, targets: tuple[TargetCluster, ...]) -> tuple[TargetCluster, ...]:
        pool = self._targets
        return self._one(self._tuples, tuple(pool.setdefault(target, target) for target in targets))

    def _one(self, shared: dict[int, _Items], items: _Items) -> _Items:
        """The shared sequence of the same objects as `items` (which becomes it when there is none yet)."""
        if not self.SHARED_FROM <= len(items) <= self.shared_limit:
            return items
        key = hash(tuple(map(id, items)))
        held = shared.get(key)
        if held is not None and len(held) == len(items) and all(map(operator.is_, held, items)):
            return held
        if held is None:
            if self._shared_size + len(items) > self.shared_limit:
                self._forget_shared()
            shared[key] = items
            self._shared_size += len(items)
        return items

    def _forget_shared(self) -> None:
        self._lists.clear()
        self._tuples.clear()
        self._shared_size = 0

    def _clear(self) -> None:
        self._entries.clear()
        self._targets.clear()
        self._parsed.clear()
        self._forget_shared()


_CachedParse = tuple[str, Binding | ValidationError, object]


def _hit(cached: _CachedParse | None, version: object) -> Binding | ValidationError | None:
    """What a parse cache entry holds if it is the parse of the binding at `version` (a non-empty resourceVersion)."""
    return cached[1] if cached is not None and version and cached[0] == version else None


def _plain_entry_key(entry: Any) -> tuple[str, int] | None:
    if not isinstance(entry, dict):
        return None
    name = entry.get("name")
    if type(name) is not str:
        return None
    if len(entry) == 1:
        return (name, _NO_REPLICAS)
    replicas = entry.get("replicas")
    if len(entry) == 2 and type(replicas) is int and replicas >= 0:
        return (name, replicas)
    return None


class BindingStore:
    """The latest body of every ResourceBinding and ClusterResourceBinding seen, with a parse cache.

    Bodies are kept without `metadata.managedFields` and with their `spec.clusters` entries shared through a
    `TargetPool`: at 50,000 bindings over 1,000 clusters, the placed clusters' entries are most of the memory."""

    def __init__(self, pool: TargetPool | None = None) -> None:
        self._bodies: dict[str, Mapping[str, Any]] = {}
        self._parsed: dict[str, tuple[str, Binding | ValidationError, object]] = {}
        """By key: the resourceVersion parsed, the result, and the `spec` object it was parsed from."""
        self._own_generations: dict[str, int] = {}
        self._pool = pool if pool is not None else TargetPool()

    def upsert(self, body: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """Store `body` (without `metadata.managedFields`, which nothing here reads and which a real API server
        sends with every object: often more than the rest of a binding); return the body it replaces (None
        when new)."""
        key = binding_key(body)
        previous = self._bodies.get(key)
        body = compacted(body, previous, self._pool.entries)
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
        meta = ObjectMeta.of(body)
        return meta.generation > 0 and self._own_generations.get(meta.key) == meta.generation

    def remove(self, key: str) -> Mapping[str, Any] | None:
        self._own_generations.pop(key, None)
        self._parsed.pop(key, None)
        return self._bodies.pop(key, None)

    def body(self, key: str) -> Mapping[str, Any] | None:
        return self._bodies.get(key)

    def entry(self, key: str) -> ParsedBinding | InvalidBinding | None:
        """The stored binding as one object (its body, metadata view and parse); None when unknown."""
        body = self._bodies.get(key)
        if body is None:
            return None
        meta = ObjectMeta.of(body)
        parsed = self._parse_cached(key, body, meta.resource_version)
        if isinstance(parsed, ValidationError):
            return InvalidBinding(body, meta, parsed)
        return ParsedBinding(body, meta, parsed)

    def parsed(self, key: str) -> Binding | ValidationError | None:
        """The parsed binding, or the validation error its body raises; None when unknown."""
        body = self._bodies.get(key)
        if body is None:
            return None
        return self._parse_cached(key, body, ObjectMeta.of(body).resource_version)

    def parsed_bindings(self) -> Iterator[Binding]:
        """Every stored binding that parses. Where the parse cache holds the stored version it is read with one
        dict lookup of the version instead of a metadata view (`parsed`): a preemption's scan of 50,000
        bindings took half a second of the event loop that way, most of it building those views."""
        for key, body in list(self._bodies.items()):
            cached = self._parsed.get(key)
            result = _hit(cached, raw_version(body))
            if result is None:
                result = self.parsed(key)
            if isinstance(result, Binding):
                yield result

    def _parse_cached(self, key: str, body: Mapping[str, Any], version: str) -> Binding | ValidationError:
        cached = self._parsed.get(key)
        if (hit := _hit(cached, version)) is not None:
            return hit
        spec = raw_spec(body)
        result: Binding | ValidationError
        try:
            result = self._parse(body, spec, *(cached[1:] if cached is not None else (None, None)))
        except ValidationError as error:
            result = error
        self._parsed[key] = (version, result, spec)
        return result

    def _parse(self, body: Mapping[str, Any], spec: Any, earlier: Binding | ValidationError | None,
               earlier_spec: object) -> Binding:
        """Parse `body`, reusing what a parse of an earlier body of the binding (from `earlier_spec`) still
        holds."""
        if isinstance(earlier, Binding):
            if earlier_spec is spec:  # a status or metadata change: the spec object was kept (see model.body.compacted)
                return parse_binding(body, same_spec=earlier)
            if equal_but_clusters(spec, earlier_spec):  # a scheduler's spec write
                clusters = self._pool.parsed_entries(raw_targets(spec))
                return parse_binding(body, same_spec=earlier, clusters=clusters)
        return self._pool.targets(parse_binding(body))

    def keys(self) -> Iterator[str]:
        return iter(list(self._bodies))

    def __len__(self) -> int:
        return len(self._bodies)


class ClusterStore:
    """Every Cluster, parsed, with the snapshot's binding-independent indexes kept up to date per change.

    The snapshot is rebuilt only after a change, and then from these indexes: `Snapshot(clusters)` derives
    them by walking every cluster (7-11 ms at 1,000 clusters on the project's busy machine),
    while a cluster's status is updated every few seconds in a large fleet. Here a change costs the update of
    its own entries, and a rebuild copies sets (0.5 ms instead of 9 at 1,000 clusters). The result is the same
    snapshot, field by field; if `Snapshot` grows a field this store does not know, it falls back to building
    it the plain way."""

    def __init__(self) -> None:
        self._clusters: dict[str, Cluster] = {}
        self._invalid: dict[str, ValidationError] = {}
        self._snapshot: Snapshot | None = None
        self._names: list[str] = []  # the valid clusters' names, sorted
        self._api: dict[tuple[str, str], set[str]] = {}
        self._api_frozen: dict[tuple[str, str], frozenset[str]] = {}  # of the keys unchanged since
        self._hard_tainted: set[str] = set()
        self._without: dict[str, set[str]] = {"provider": set(), "region": set(), "zone": set()}
        self._deleting: set[str] = set()
        self._estimator = EstimatorCache()  # handed from snapshot to snapshot: unchanged clusters keep their profile
        self._membership = 0  # bumped when a name joins or leaves `_clusters`
        self._placements: dict[int, tuple[object, int, bool]] = {}  # knows_all's answers, by the list read

    def upsert(self, cluster: Cluster) -> Cluster | None:
        previous = self._clusters.get(cluster.name)
        self._invalid.pop(cluster.name, None)
        if previous is not None and previous == cluster:
            self._clusters[cluster.name] = cluster
            return previous
        if previous is None:
            bisect.insort(self._names, cluster.name)
            self._membership += 1
        else:
            self._unindex(previous)
            self._estimator.forget(cluster.name)
        self._clusters[cluster.name] = cluster
        self._index(cluster)
        self._snapshot = None
        return previous

    def reject(self, name: str, error: ValidationError) -> Cluster | None:
        """A cluster whose body is invalid leaves the snapshot (it cannot be scheduled to) until fixed."""
        self._invalid[name] = error
        return self.remove(name)

    def remove(self, name: str) -> Cluster | None:
        previous = self._clusters.pop(name, None)
        if previous is not None:
            self._membership += 1
            del self._names[bisect.bisect_left(self._names, name)]
            self._unindex(previous)
            self._estimator.forget(name)
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

    def places_only_known(self, body: Mapping[str, Any]) -> bool:
        """Whether every cluster a stored binding body places it on is a valid cluster here. The answer is kept
        for the body's `spec.clusters` list until a cluster joins or leaves: the store shares one list between
        the bindings placed alike (`TargetPool`), and every watch event of a Duplicated binding over 800
        clusters asks it again (3 % of a binding's CPU at 1,000 clusters, by benchmarks.profile)."""
        targets = raw_targets(raw_spec(body))
        shared = isinstance(targets, list) and len(targets) >= TargetPool.SHARED_FROM
        kept = self._placements.get(id(targets)) if shared else None
        if kept is not None and kept[0] is targets and kept[1] == self._membership:
            return kept[2]
        answer = all(name in self._clusters for name in BindingBody(body).target_names)
        if shared:
            if len(self._placements) >= PLACEMENTS_KEPT:
                self._placements.clear()
            self._placements[id(targets)] = (targets, self._membership, answer)
        return answer

    @property
    def invalid(self) -> Mapping[str, ValidationError]:
        return self._invalid

    def snapshot(self) -> Snapshot:
        if self._snapshot is None:
            self._snapshot = self._build()
        return self._snapshot

    # -- the indexes (what Snapshot.__init__ derives, kept per cluster) ------------------------------------

    def _facts(self, cluster: Cluster) -> tuple[list[tuple[str, str]], bool, list[str], bool]:
        apis = [(e.group_version, kind) for e in cluster.api_enablements for kind in e.kinds]
        tainted = any(t.effect in HARD_TAINT_EFFECTS for t in cluster.taints)
        lacking = [field for field, present in
                   (("provider", cluster.provider), ("region", cluster.region), ("zone", cluster.zones))
                   if not present]
        return apis, tainted, lacking, bool(cluster.deleting)

    def _index(self, cluster: Cluster) -> None:
        name = cluster.name
        apis, tainted, lacking, deleting = self._facts(cluster)
        for key in apis:
            self._api.setdefault(key, set()).add(name)
            self._api_frozen.pop(key, None)
        if tainted:
            self._hard_tainted.add(name)
        for field in lacking:
            self._without[field].add(name)
        if deleting:
            self._deleting.add(name)

    def _unindex(self, cluster: Cluster) -> None:
        name = cluster.name
        apis, _, _, _ = self._facts(cluster)
        for key in apis:
            names = self._api.get(key)
            if names is not None:
                names.discard(name)
                if not names:
                    del self._api[key]
            self._api_frozen.pop(key, None)
        self._hard_tainted.discard(name)
        for names in self._without.values():
            names.discard(name)
        self._deleting.discard(name)

    def _build(self) -> Snapshot:
        clusters = tuple(self._clusters[name] for name in self._names)
        if not _SNAPSHOT_FIELDS_KNOWN:
            return Snapshot(clusters, self._estimator)
        snapshot = Snapshot.__new__(Snapshot)
        snapshot.clusters = clusters
        snapshot.by_name = dict(zip(self._names, clusters, strict=True))
        deleting = self._deleting
        snapshot.live = tuple(c for c in clusters if c.name not in deleting) if deleting else clusters
        frozen = self._api_frozen
        for key, names in self._api.items():
            if key not in frozen:
                frozen[key] = frozenset(names)
        snapshot.api_index = dict(frozen)
        snapshot.hard_tainted = frozenset(self._hard_tainted)
        snapshot.without = {field: frozenset(names) for field, names in self._without.items()}
        snapshot.estimator = self._estimator
        snapshot._memo = OrderedDict()
        snapshot._columns = None
        return snapshot


_SNAPSHOT_FIELDS = {"clusters", "by_name", "live", "api_index", "hard_tainted", "without", "estimator", "_memo",
                    "_columns"}
_SNAPSHOT_FIELDS_KNOWN = set(vars(Snapshot(()))) == _SNAPSHOT_FIELDS
"""The fields ClusterStore sets itself are exactly those Snapshot.__init__ sets (else: built the plain way)."""

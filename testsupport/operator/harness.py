"""Run the real operator (Kopf + our service) against devcluster, each in its own thread and event loop.

Kopf cancels every task created in its loop after it started, so the operator never shares a loop with the
test or with the emulator.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol, TypeVar

import yaml

from binding_scheduler.devcluster import DevCluster
from binding_scheduler.devcluster.faults import Fault
from binding_scheduler.devcluster.journal import JournalEntry
from binding_scheduler.model import Cluster, parse_cluster
from binding_scheduler.model.errors import ValidationError
from binding_scheduler.model.overrides import NO_OVERRIDES, SpecOverrides
from binding_scheduler.operator.app import OperatorApp
from binding_scheduler.operator.options import LaunchOptions
from binding_scheduler.operator.runner import run_operator
from binding_scheduler.scheduling.state.stores import binding_key

T = TypeVar("T")

PLURALS = {
    "Cluster": "clusters",
    "ResourceBinding": "resourcebindings",
    "ClusterResourceBinding": "clusterresourcebindings",
    "SchedulerConfiguration": "schedulerconfigurations",
    "Namespace": "namespaces",
    "Service": "services",
}
FAST_LEASE = {"leaseNamespace": "karmada-system", "leaseDuration": "3s", "renewDeadline": "2s", "retryPeriod": "500ms"}


def config_spec(**spec: Any) -> dict[str, Any]:
    """A SchedulerConfiguration spec for tests: no metrics/health servers (on loopback when a test turns them on),
    a fast lease, plus `spec`."""
    base: dict[str, Any] = {
        "metrics": {"port": 0, "healthPort": 0, "host": "127.0.0.1", "healthHost": "127.0.0.1"},
        "leaderElection": dict(FAST_LEASE),
    }
    for key, value in spec.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            base[key] = {**base[key], **value}
        else:
            base[key] = value
    return base


def write_config(path: Path, spec: Mapping[str, Any]) -> Path:
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "config.binding-scheduler.io/v1alpha1",
                "kind": "SchedulerConfiguration",
                "metadata": {"name": "test"},
                "spec": dict(spec),
            }
        )
    )
    return path


def apply(api: DevCluster, *documents: Mapping[str, Any]) -> None:
    """Create objects the way their controllers would leave them: body, then `status` through /status."""
    for doc in documents:
        plural = PLURALS[str(doc["kind"])]
        metadata = doc.get("metadata") or {}
        api.store.create(plural, {k: v for k, v in doc.items() if k != "status"})
        if doc.get("status"):
            api.store.patch(
                plural, metadata["name"], {"status": doc["status"]}, namespace=metadata.get("namespace"),
                subresource="status",
            )


def namespaces(api: DevCluster, *names: str) -> None:
    for name in names:
        api.store.ensure_namespace(name)


def wait_until(condition: Callable[[], T | None], timeout: float = 20.0, what: str = "condition") -> T:
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value is not None and value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.02)


class HasKubeconfig(Protocol):
    """What an operator needs of its API server: a kubeconfig (devcluster's, or a real control plane's)."""

    @property
    def kubeconfig_path(self) -> Path: ...


EVENT_PATH = "auto"
"""The event path of the operators the tests start (`LaunchOptions.event_path`): the default one; the named suite
tests/operator/test_kopf_event_path.py sets "kopf" to run a few behaviour tests on Kopf's own handlers."""


class OperatorThread:
    """One operator instance in its own thread and loop."""

    def __init__(
        self,
        api: HasKubeconfig,
        config_file: Path | None = None,
        *,
        identity: str | None = None,
        plugins: Sequence[object] = (),
        namespace: str = "karmada-system",
        config_name: str | None = None,
        overrides: SpecOverrides = NO_OVERRIDES,
        event_path: str | None = None,
    ) -> None:
        options = LaunchOptions(
            event_path=event_path or EVENT_PATH,
            kubeconfig=str(api.kubeconfig_path),
            namespace=namespace,
            config_file=str(config_file) if config_file is not None else None,
            config_name=config_name,
            identity=identity,
            overrides=overrides,
        )
        self.app = OperatorApp(options, plugins=plugins)
        self.exit_code: int | None = None
        self.stopped_at: float | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._main, name=f"operator-{identity}", daemon=True)

    def _main(self) -> None:
        async def main() -> None:
            self._loop = asyncio.get_running_loop()
            self._stop = asyncio.Event()
            ready = asyncio.Event()
            watcher = asyncio.create_task(ready.wait())
            watcher.add_done_callback(lambda _: self._ready.set())
            self.exit_code = await run_operator(self.app, ready=ready, stop=self._stop)
            self.stopped_at = time.monotonic()

        asyncio.run(main())
        self._ready.set()

    def start(self, *, wait_leading: bool = True, timeout: float = 20.0) -> OperatorThread:
        self._thread.start()
        if wait_leading:
            wait_until(lambda: self.app.service is not None and self.app.service.ready, timeout, "the operator to lead")
        return self

    def call(self, fn: Callable[[], T]) -> T:
        """Run `fn` in the operator's loop and return its result."""
        assert self._loop is not None
        return asyncio.run_coroutine_threadsafe(_call(fn), self._loop).result(10)

    def stop(self, timeout: float = 30.0) -> int | None:
        """Like SIGTERM: the stop reaches the passes at once, then Kopf stops and the cleanup shuts down."""
        if self._loop is not None and self._stop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self.app.request_stop)
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(timeout)
        assert not self._thread.is_alive(), "the operator did not stop"
        return self.exit_code

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()


async def _call(fn: Callable[[], T]) -> T:
    return fn()


@contextmanager
def running_operator(
    api: HasKubeconfig,
    config_file: Path | None = None,
    *,
    wait_leading: bool = True,
    timeout: float = 20.0,
    expect_exit: int | None = 0,
    **options: Any,
) -> Iterator[OperatorThread]:
    """An operator started (`OperatorThread(api, config_file, **options).start(...)`) for the `with` block; on the
    way out it is stopped as SIGTERM stops it and its exit code must be `expect_exit` (0 unless told; None: any).
    When the block raised, that error is what the test reports: the operator is stopped, its code not judged."""
    operator = OperatorThread(api, config_file, **options)
    try:
        operator.start(wait_leading=wait_leading, timeout=timeout)
        yield operator
    except BaseException:
        operator.stop()
        raise
    code = operator.stop()
    assert expect_exit is None or code == expect_exit, f"the operator exited with {code}, not {expect_exit}"


def binding_doc(
    name: str,
    *,
    namespace: str = "default",
    replicas: int = 1,
    placement: Mapping[str, Any] | None = None,
    clusters: Iterable[Mapping[str, Any]] = (),
    labels: Mapping[str, str] | None = None,
    scheduler_name: str | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "resource": {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": namespace, "name": name,
                     "uid": f"uid-{name}"},
        "replicas": replicas,
        "placement": dict(placement) if placement is not None else {
            "replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted"}
        },
    }
    if clusters:
        spec["clusters"] = [dict(c) for c in clusters]
    if scheduler_name is not None:
        spec["schedulerName"] = scheduler_name
    return {
        "apiVersion": "work.karmada.io/v1alpha2",
        "kind": "ResourceBinding",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": dict(labels) if labels is not None else {"propagationpolicy.karmada.io/permanent-id": "p1"},
        },
        "spec": spec,
    }


def cluster_doc(name: str, *, pods: int = 100, labels: Mapping[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "cluster.karmada.io/v1alpha1",
        "kind": "Cluster",
        "metadata": {"name": name, "labels": dict(labels or {})},
        "spec": {"syncMode": "Push", **spec},
        "status": {
            "apiEnablements": [
                {"groupVersion": "apps/v1", "resources": [{"name": "deployments", "kind": "Deployment"}]},
                {"groupVersion": "rbac.authorization.k8s.io/v1",
                 "resources": [{"name": "clusterroles", "kind": "ClusterRole"}]},
            ],
            "resourceSummary": {"allocatable": {"pods": str(pods)}},
        },
    }


def get(api: DevCluster, plural: str, name: str, namespace: str | None = None) -> dict[str, Any] | None:
    found = api.store.find(plural, name, namespace)
    return dict(found) if found is not None else None


def scheduled(api: DevCluster, name: str, namespace: str = "default") -> dict[str, Any] | None:
    """The binding once it carries a Scheduled condition, else None."""
    body = get(api, "resourcebindings", name, namespace)
    if body is None:
        return None
    conditions = (body.get("status") or {}).get("conditions") or []
    return body if any(c.get("type") == "Scheduled" for c in conditions) else None


# -- writes by the test while the operator runs (over HTTP: the store is not thread-safe with watches open) ------

_TEST_WRITES: dict[int, list[tuple[str, str, Any]]] = {}


def request(
    api: DevCluster,
    method: str,
    path: str,
    body: Mapping[str, Any] | None = None,
    *,
    content_type: str = "application/merge-patch+json",
) -> tuple[int, dict[str, Any]]:
    """One synchronous HTTP request to the emulator, as a user or another controller would send it; the
    request is remembered so that `our_writes` can leave it out."""
    data = json.dumps(body).encode() if body is not None else None
    if method.upper() != "GET":
        _TEST_WRITES.setdefault(id(api), []).append((method.upper(), path, body))
    req = urllib.request.Request(api.url + path, data=data, method=method.upper())
    if data is not None:
        req.add_header("Content-Type", "application/json" if method.upper() in ("POST", "PUT") else content_type)
    try:
        with urllib.request.urlopen(req, timeout=10) as answer:
            return answer.status, json.loads(answer.read() or b"{}")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


def patch(api: DevCluster, path: str, body: Mapping[str, Any]) -> dict[str, Any]:
    status, answer = request(api, "PATCH", path, body)
    assert status == 200, (status, answer)
    return answer


def rb_path(name: str, namespace: str = "default", subresource: str | None = None) -> str:
    path = f"/apis/work.karmada.io/v1alpha2/namespaces/{namespace}/resourcebindings/{name}"
    return f"{path}/{subresource}" if subresource else path


def crb_path(name: str, subresource: str | None = None) -> str:
    path = f"/apis/work.karmada.io/v1alpha2/clusterresourcebindings/{name}"
    return f"{path}/{subresource}" if subresource else path


def cluster_path(name: str) -> str:
    return f"/apis/cluster.karmada.io/v1alpha1/clusters/{name}"


def config_path(name: str, namespace: str = "karmada-system", subresource: str | None = None) -> str:
    path = f"/apis/config.binding-scheduler.io/v1alpha1/namespaces/{namespace}/schedulerconfigurations/{name}"
    return f"{path}/{subresource}" if subresource else path


def is_test_write(api: DevCluster, entry: JournalEntry) -> bool:
    return (entry.method, entry.path, entry.body) in _TEST_WRITES.get(id(api), [])


def our_writes(api: DevCluster, path: str | None = None) -> list[JournalEntry]:
    """Every write in the journal that the test did not send itself (optionally: whose path matches)."""
    pattern = re.compile(path) if path is not None else None
    return [
        e for e in api.journal.writes()
        if not is_test_write(api, e) and (pattern is None or pattern.search(e.path))
    ]


def binding_writes(api: DevCluster, name: str, namespace: str = "default") -> list[JournalEntry]:
    """The operator's writes to one ResourceBinding (spec and status), in order."""
    return our_writes(api, rf"/namespaces/{namespace}/resourcebindings/{name}(/status)?$")


def events(api: DevCluster, namespace: str = "default", *, name: str | None = None) -> list[dict[str, Any]]:
    """core/v1 Events in `namespace` (optionally about the object `name`), oldest first."""
    items = [dict(e) for e in api.store.list("events", namespace=namespace)]
    if name is not None:
        items = [e for e in items if e["involvedObject"].get("name") == name]
    return sorted(items, key=lambda e: int(e["metadata"]["resourceVersion"]))


def condition(body: Mapping[str, Any], type_: str = "Scheduled") -> dict[str, Any] | None:
    for item in (body.get("status") or {}).get("conditions") or []:
        if item.get("type") == type_:
            return dict(item)
    return None


def at_rest(api: DevCluster, operator: OperatorThread, timeout: float = 20.0) -> None:
    """Wait until the operator has nothing left to do, judged by its own state instead of a quiet period: its
    cache holds every binding at the version the API server holds, and every cluster as the server holds it (so
    every write of ours, and anyone else's, has reached intake, and whatever it requeues is queued), no key waits
    in the active or backoff queue or after a 409, no pass runs and no Event waits to be posted. Keys parked as
    unschedulable are at rest."""
    service = operator.app.service
    assert service is not None

    def server_versions() -> dict[str, str]:
        return {
            binding_key(obj): str(obj["metadata"]["resourceVersion"])
            for plural in ("resourcebindings", "clusterresourcebindings")
            for obj in api.store.list(plural)
        }

    def server_clusters() -> dict[str, Cluster | None]:
        """Each cluster as the operator's store holds it once it has seen the server's version (None: invalid)."""
        parsed: dict[str, Cluster | None] = {}
        for obj in api.store.list("clusters"):
            try:
                parsed[str(obj["metadata"]["name"])] = parse_cluster(obj)
            except ValidationError:
                parsed[str(obj["metadata"]["name"])] = None
        return parsed

    def idle(server: dict[str, str], clusters: dict[str, Cluster | None]) -> bool:
        cached = {key: str(((service.context.bindings.body(key) or {}).get("metadata") or {}).get("resourceVersion"))
                  for key in server}
        store = service.context.clusters
        known = {name: store.get(name) for name in store.names()}
        depth = service.queue.depth()
        return (
            cached == server and known == clusters and depth.active == 0 and depth.backoff == 0
            and not service.queue._conflicted and not service.queue._processing and not service.scheduler.in_flight
            and service.background_events.pending == 0
        )

    wait_until(lambda: operator.call(lambda: idle(server_versions(), server_clusters())), timeout,
               "the operator to be at rest")


CRB_POLICY_LABEL = "clusterpropagationpolicy.karmada.io/permanent-id"


def crb_doc(
    name: str,
    *,
    replicas: int = 0,
    placement: Mapping[str, Any] | None = None,
    labels: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "resource": {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "name": name,
                     "uid": f"uid-{name}"},
        "placement": dict(placement) if placement is not None else {},
    }
    if replicas:
        spec["replicas"] = replicas
    return {
        "apiVersion": "work.karmada.io/v1alpha2",
        "kind": "ClusterResourceBinding",
        "metadata": {
            "name": name,
            "labels": dict(labels) if labels is not None else {CRB_POLICY_LABEL: "c1"},
        },
        "spec": spec,
    }


def crb_scheduled(api: DevCluster, name: str) -> dict[str, Any] | None:
    body = get(api, "clusterresourcebindings", name)
    return body if body is not None and condition(body) is not None else None


def metric(operator: OperatorThread, name: str, **labels: str) -> float:
    """A sample of the operator's own metrics registry (0 when the series does not exist yet)."""
    service = operator.app.service
    assert service is not None
    value = service.metrics.registry.get_sample_value(name, labels)
    return value if value is not None else 0.0


DUPLICATED = {"replicaScheduling": {"replicaSchedulingType": "Duplicated"}}


WATCH_QUERY = r"watch=(true|1)"


def hold_watches(api: DevCluster, *paths: str) -> Fault:
    """Cut every open watch and hold the new ones (until the returned fault is released or removed); returns
    once a new watch ending with each of `paths` is held, so no change made from now on reaches a watcher."""
    cut_at = time.monotonic()
    down = api.faults.add(method="GET", query=WATCH_QUERY, hang=True)
    cut = api.faults.add(method="GET", query=WATCH_QUERY, end_watch=True)

    def held(path: str) -> bool:
        return any(e.is_watch and e.time > cut_at and e.path.endswith(path) and e.status == 0 for e in api.journal)

    try:
        wait_until(lambda: all(held(p) for p in paths), what=f"the watches of {', '.join(paths)} to be held")
    finally:
        api.faults.discard(cut)
    return down

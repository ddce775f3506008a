"""Run the real operator (Kopf + our service) against devcluster, each in its own thread and event loop.

Kopf cancels every task created in its loop after it started, so the operator never shares a loop with the
test or with the emulator.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import yaml

from binding_scheduler.devcluster import DevCluster
from binding_scheduler.operator.app import OperatorApp
from binding_scheduler.operator.options import LaunchOptions
from binding_scheduler.operator.runner import run_operator
from binding_scheduler.scheduling.passes import Decider

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
    """A SchedulerConfiguration spec for tests: no metrics/health servers, a fast lease, plus `spec`."""
    base: dict[str, Any] = {"metrics": {"port": 0, "healthPort": 0}, "leaderElection": dict(FAST_LEASE)}
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


def wait_until(condition: Callable[[], T], timeout: float = 20.0, what: str = "condition") -> T:
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.02)


class OperatorThread:
    """One operator instance in its own thread and loop."""

    def __init__(
        self,
        api: DevCluster,
        config_file: Path,
        *,
        identity: str | None = None,
        decider: Decider | None = None,
        namespace: str = "karmada-system",
    ) -> None:
        options = LaunchOptions(
            kubeconfig=str(api.kubeconfig_path),
            namespace=namespace,
            config_file=str(config_file),
            identity=identity,
            health_host="127.0.0.1",
        )
        self.app = OperatorApp(options, decider=decider)
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
        future: asyncio.Future[T] = asyncio.run_coroutine_threadsafe(_call(fn), self._loop)  # type: ignore[assignment]
        return future.result(10)

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
                {"groupVersion": "apps/v1", "resources": [{"name": "deployments", "kind": "Deployment"}]}
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

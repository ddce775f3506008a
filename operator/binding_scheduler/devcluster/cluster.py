"""`DevCluster`: the emulator's lifecycle (in-process, or in a background thread for synchronous code)."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import socket
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType

from aiohttp import web

from binding_scheduler.crds import default_crds_dir, load_crds

from .client import DevClient
from .faults import Faults
from .journal import Journal
from .kubeconfig import write_kubeconfig
from .resources import Registry
from .server import ApiServer
from .store import Store

DEFAULT_NAMESPACES = ("default", "kube-system")

GC_THRESHOLDS = (50_000, 20, 10)
"""The cyclic collector's thresholds for a process that serves devcluster alone (the `devcluster` command, the
benchmarks' API server); CPython's default is (700, 10, 10). A write's parse and copies are thousands of
short-lived objects, and the store and its watch history hold every object: with a young generation of 700 the
collector ran 5,000 times and walked the store 13 times in a 6,000-binding run over 1,000 clusters (6.2 s of its
CPU); with these, 57 times and once (2.5 s). Not set by `DevCluster` itself: a process embedding it keeps its own."""


class DevCluster:
    """An embedded Kubernetes API emulator on a real HTTP port.

        async with DevCluster() as api:
            api.url               # "http://127.0.0.1:PORT"
            api.kubeconfig_path   # a kubeconfig file pointing at it (no auth)
            api.client            # DevClient: get/list/create/put/patch/delete/watch -> (status, body)
            api.store             # direct in-process access: get/list/create/patch/update/delete
            api.journal           # every request: .time .method .path .query .status .body
            api.faults            # api.faults.add(method="PATCH", path=r"...", status=503, times=1)

    `history` is how many events are retained for watches that resume from a resourceVersion; a watch
    from an older version gets `410 Gone` (Expired). Namespaces `default` and `kube-system` exist from
    the start, and every CRD in `crds_dir` is served (also listed as a `CustomResourceDefinition`).

    Custom resources are pruned, defaulted and validated by their CRD's schema as kube-apiserver does.
    """

    def __init__(
        self,
        crds_dir: Path | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        history: int = 1000,
        *,
        kubeconfig: Path | None = None,
        journal_limit: int | None = None,
        bookmark_interval: float = 30.0,
    ) -> None:
        self.crds_dir = crds_dir if crds_dir is not None else default_crds_dir()
        self.host, self.port = host, port
        self.registry = Registry.with_builtins()
        self.store = Store(self.registry, history=history)
        self.journal = Journal(limit=journal_limit)
        self.faults = Faults(on_change=self.store.poke_all)
        self.server = ApiServer(self.store, self.journal, self.faults, bookmark_interval=bookmark_interval)
        self._kubeconfig_wanted = kubeconfig
        self._tmpdir: Path | None = None
        self._runner: web.ServerRunner | None = None
        self._client: DevClient | None = None
        self.url = ""
        self.kubeconfig_path = Path()
        for name in DEFAULT_NAMESPACES:
            self.store.ensure_namespace(name)
        for crd in load_crds(self.crds_dir):
            self.store.create("customresourcedefinitions", crd)

    @property
    def client(self) -> DevClient:
        """An async test client bound to this server (closed by `stop()`)."""
        if self._client is None:
            self._client = DevClient(self.url)
        return self._client

    async def start(self) -> DevCluster:
        """Listen, then write the kubeconfig. Returns self."""
        self.server.closing = False
        sock = socket.socket(socket.AF_INET6 if ":" in self.host else socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.host, self.port))
        self.port = sock.getsockname()[1]
        host = f"[{self.host}]" if ":" in self.host else self.host
        self.url = f"http://{host}:{self.port}"
        self.server.server_address = f"{host}:{self.port}"
        self._runner = web.ServerRunner(self.server.make_server(), shutdown_timeout=1.0)
        await self._runner.setup()
        await web.SockSite(self._runner, sock).start()
        if self._kubeconfig_wanted is not None:
            self.kubeconfig_path = write_kubeconfig(self._kubeconfig_wanted, self.url)
        else:
            self._tmpdir = Path(tempfile.mkdtemp(prefix="devcluster-"))
            self.kubeconfig_path = write_kubeconfig(self._tmpdir / "kubeconfig", self.url)
        return self

    async def stop(self) -> None:
        """End watch streams, release hung requests, close the client and the port."""
        self.server.stop_watches()
        self.faults.clear()
        if self._client is not None:
            await self._client.close()
            self._client = None
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self._tmpdir is not None:
            shutil.rmtree(self._tmpdir, ignore_errors=True)
            self._tmpdir = None

    async def __aenter__(self) -> DevCluster:
        return await self.start()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()

    @classmethod
    @contextlib.contextmanager
    def in_thread(cls, *args: object, **kwargs: object) -> Iterator[DevCluster]:
        """For synchronous code: run a `DevCluster(*args, **kwargs)` in its own loop in a background thread.

            with DevCluster.in_thread() as api:
                subprocess.run(["kubectl", "--kubeconfig", str(api.kubeconfig_path), "get", "ns"])

        Reading `api.journal`/`api.store` from the caller's thread is fine; async helpers
        (`api.client`, `journal.wait_for`) belong to the background loop.
        """
        loop = asyncio.new_event_loop()
        ready = threading.Event()
        holder: dict[str, DevCluster | BaseException] = {}
        stop = asyncio.Event()

        async def main() -> None:
            try:
                cluster = cls(*args, **kwargs)  # type: ignore[arg-type]
                await cluster.start()
            except BaseException as exc:  # reported to the caller's thread
                holder["error"] = exc
                ready.set()
                return
            holder["cluster"] = cluster
            ready.set()
            await stop.wait()
            await cluster.stop()

        thread = threading.Thread(target=loop.run_until_complete, args=(main(),), name="devcluster",
                                  daemon=True)
        thread.start()
        ready.wait()
        try:
            error = holder.get("error")
            if isinstance(error, BaseException):
                raise error
            cluster = holder["cluster"]
            assert isinstance(cluster, DevCluster)
            yield cluster
        finally:
            loop.call_soon_threadsafe(stop.set)
            thread.join()
            loop.close()

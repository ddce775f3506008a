"""Kubernetes API clients side by side: what a GET and a fenced merge PATCH cost the client, and what cancelling does.

    .venv/bin/python -m benchmarks.client_libraries [--requests 1000] [--concurrency 16]
        [--clients ours,kubernetes_asyncio,lightkube,kr8s,kubernetes] [--json FILE]

Only `ours` (`kube/client.py`) and `kubernetes` (the official client, a test dependency) are in the project's
`.venv`; the others are measured from a scratch venv holding the project's dependencies and them:

    python3 -m venv /tmp/clients
    /tmp/clients/bin/pip install aiohttp orjson PyYAML grpcio protobuf kopf prometheus-client numpy \
        kubernetes kubernetes_asyncio lightkube kr8s
    PYTHONPATH=operator /tmp/clients/bin/python -m benchmarks.client_libraries

A client whose library is missing is reported as such. devcluster serves plain HTTP in its own process, pinned to
CPU 0 (the clients to the other CPUs). One ResourceBinding whose `spec.clusters` holds 100 clusters (~4 KB of
JSON). Each client runs in a fresh process of its own, so its import is measured from a clean interpreter (after
one throwaway import that compiles its bytecode):

- import: wall time and resident memory added by importing the library (asyncio, json and ssl already imported);
- GET: `--requests` sequential reads of the binding, answer parsed; client CPU (process time, every thread) and
  wall time per request; then the same reads with `--concurrency` in flight (the async clients only);
- PATCH: `--requests` sequential JSON merge patches of `spec.clusters` and the applied-placement annotation, each
  carrying `metadata.resourceVersion` from the previous answer (the precondition every binding write of ours
  carries), as the scheduler's spec write; CPU and wall time per request;
- cancel: a GET to a server that reads the request and never answers; its task is cancelled once the request has
  arrived. Measured: until the awaiting task has ended, and until the server sees the connection closed (the
  request stopped). The synchronous client runs in a thread (`asyncio.to_thread`, the only way an event loop can
  await it): its task ends, the request goes on until its 3-s timeout.

Each library is used through its most direct path to a custom resource: ours `ApiClient.get/patch_merge` (its
rate limiter and write gate included, qps 1e6), kubernetes_asyncio and kubernetes `CustomObjectsApi` (merge patch
by `_content_type`), lightkube a generic resource (`create_namespaced_resource`, `PatchType.MERGE`), kr8s its raw
`Api.call_api` (its object API reads an object by a list with a field selector).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import ssl
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

GROUP, VERSION, PLURAL, NAMESPACE, NAME = "work.karmada.io", "v1alpha2", "resourcebindings", "default", "rb-bench"
PATH = f"/apis/{GROUP}/{VERSION}/namespaces/{NAMESPACE}/{PLURAL}"
MERGE = "application/merge-patch+json"
APPLIED = "policy.karmada.io/applied-placement"
CLUSTERS = 100
CLIENTS = ("ours", "kubernetes_asyncio", "lightkube", "kr8s", "kubernetes")
MODULES = {
    "ours": ("binding_scheduler.kube",),
    "kubernetes_asyncio": ("kubernetes_asyncio.client", "kubernetes_asyncio.config"),
    "lightkube": ("lightkube", "lightkube.generic_resource", "lightkube.types"),
    "kr8s": ("kr8s.asyncio",),
    "kubernetes": ("kubernetes.client", "kubernetes.config"),
}
SYNC_TIMEOUT = 3.0
WARMUP = 50

_ = (json, ssl)  # imported before the measurement on purpose: every client needs them


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def kubeconfig(url: str, folder: Path, name: str) -> Path:
    path = folder / f"{name}.kubeconfig"
    path.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "bench",
        "clusters": [{"name": "bench", "cluster": {"server": url}}],
        "users": [{"name": "bench", "user": {"token": "bench"}}],
        "contexts": [{"name": "bench", "context": {"cluster": "bench", "user": "bench", "namespace": NAMESPACE}}],
    }))
    return path


def patch_body(version: str, turn: int) -> dict[str, Any]:
    clusters = [{"name": f"member-{(turn + i) % 1000:04d}", "replicas": 1 + (turn + i) % 5} for i in range(CLUSTERS)]
    return {"metadata": {"resourceVersion": version, "annotations": {APPLIED: json.dumps({"turn": turn})}},
            "spec": {"clusters": clusters}}


# ---- one adapter per library: open(kubeconfig) -> (get, patch, close); get() and patch() give resourceVersions --

Get = Callable[[], Awaitable[str]]
Patch = Callable[[dict[str, Any]], Awaitable[str]]
Close = Callable[[], Awaitable[None]]


async def open_ours(config: Path) -> tuple[Get, Patch, Close]:
    from binding_scheduler.kube import ApiClient, WriteGate, load_connection

    client = ApiClient(load_connection(str(config)), WriteGate(), qps=1e6, burst=1_000_000)

    async def get() -> str:
        return str((await client.get(f"{PATH}/{NAME}"))["metadata"]["resourceVersion"])

    async def patch(body: dict[str, Any]) -> str:
        return str((await client.patch_merge(f"{PATH}/{NAME}", body))["metadata"]["resourceVersion"])

    return get, patch, client.close


async def open_kubernetes_asyncio(config: Path) -> tuple[Get, Patch, Close]:
    from kubernetes_asyncio import client
    from kubernetes_asyncio import config as loader

    api_client = await loader.new_client_from_config(config_file=str(config))
    custom = client.CustomObjectsApi(api_client)

    async def get() -> str:
        found = await custom.get_namespaced_custom_object(GROUP, VERSION, NAMESPACE, PLURAL, NAME)
        return str(found["metadata"]["resourceVersion"])

    async def patch(body: dict[str, Any]) -> str:
        done = await custom.patch_namespaced_custom_object(GROUP, VERSION, NAMESPACE, PLURAL, NAME, body,
                                                           _content_type=MERGE)
        return str(done["metadata"]["resourceVersion"])

    return get, patch, api_client.close


async def open_lightkube(config: Path) -> tuple[Get, Patch, Close]:
    from lightkube import AsyncClient, KubeConfig
    from lightkube.generic_resource import create_namespaced_resource
    from lightkube.types import PatchType

    binding = create_namespaced_resource(GROUP, VERSION, "ResourceBinding", PLURAL)
    client = AsyncClient(KubeConfig.from_file(str(config)))

    async def get() -> str:
        found = await client.get(binding, NAME, namespace=NAMESPACE)
        return str(found.metadata.resourceVersion)

    async def patch(body: dict[str, Any]) -> str:
        done = await client.patch(binding, NAME, body, namespace=NAMESPACE, patch_type=PatchType.MERGE)
        return str(done.metadata.resourceVersion)

    return get, patch, client.close


async def open_kr8s(config: Path) -> tuple[Get, Patch, Close]:
    import kr8s.asyncio

    api = await kr8s.asyncio.api(kubeconfig=str(config))
    base, url = f"/apis/{GROUP}", f"{PLURAL}/{NAME}"

    async def get() -> str:
        async with api.call_api("GET", version=VERSION, base=base, namespace=NAMESPACE, url=url) as response:
            return str(response.json()["metadata"]["resourceVersion"])

    async def patch(body: dict[str, Any]) -> str:
        async with api.call_api("PATCH", version=VERSION, base=base, namespace=NAMESPACE, url=url,
                                content=json.dumps(body), headers={"Content-Type": MERGE}) as response:
            return str(response.json()["metadata"]["resourceVersion"])

    async def close() -> None:  # kr8s keeps its httpx client for the thread's lifetime; close it here
        session = getattr(api, "_session", None)
        if session is not None:
            await session.aclose()

    return get, patch, close


def open_kubernetes(config: Path) -> tuple[Callable[[], str], Callable[[dict[str, Any]], str], Callable[[], None]]:
    from kubernetes import client
    from kubernetes import config as loader

    api_client = loader.new_client_from_config(config_file=str(config))
    custom = client.CustomObjectsApi(api_client)

    def get() -> str:
        found = custom.get_namespaced_custom_object(GROUP, VERSION, NAMESPACE, PLURAL, NAME,
                                                    _request_timeout=SYNC_TIMEOUT)
        return str(found["metadata"]["resourceVersion"])

    def patch(body: dict[str, Any]) -> str:
        done = custom.patch_namespaced_custom_object(GROUP, VERSION, NAMESPACE, PLURAL, NAME, body,
                                                     _content_type=MERGE, _request_timeout=SYNC_TIMEOUT)
        return str(done["metadata"]["resourceVersion"])

    return get, patch, api_client.close


ASYNC_OPENERS = {"ours": open_ours, "kubernetes_asyncio": open_kubernetes_asyncio, "lightkube": open_lightkube,
                 "kr8s": open_kr8s}


# ---- the measurements, in the child process --------------------------------------------------------------------


def timed(run: Callable[[], None], count: int) -> dict[str, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    run()
    return {"cpu_us": (time.process_time() - cpu) / count * 1e6, "wall_us": (time.perf_counter() - wall) / count * 1e6}


async def timed_async(run: Callable[[], Awaitable[None]], count: int) -> dict[str, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    await run()
    return {"cpu_us": (time.process_time() - cpu) / count * 1e6, "wall_us": (time.perf_counter() - wall) / count * 1e6}


class BlackHole:
    """A server that reads a request for the binding and never answers it (any other request, such as kr8s's
    `/version` on connecting, gets `{}`); notes when that request arrived and when the client hung up."""

    def __init__(self) -> None:
        self.arrived = asyncio.Event()
        self.closed_at: float | None = None
        self.server: asyncio.Server | None = None

    async def start(self) -> str:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        port = self.server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                await reader.readexactly(length)
                if PLURAL.encode() in head.split(b"\r\n", 1)[0]:
                    self.arrived.set()
                    await reader.read()  # never answered: returns when the client closes the connection
                    self.closed_at = time.perf_counter()
                    break
                body = b'{"major": "1", "minor": "35", "gitVersion": "v1.35.4"}'
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                             b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        except (asyncio.IncompleteReadError, ConnectionError):
            if self.arrived.is_set() and self.closed_at is None:
                self.closed_at = time.perf_counter()
        writer.close()

    async def stop(self) -> None:
        if self.server is not None:
            self.server.close()


Opener = Callable[[str], Awaitable[tuple[Callable[[], Awaitable[Any]], Close]]]


async def cancel_probe(open_get: Opener) -> dict[str, float | None]:
    """Cancel a request the server never answers; ms until the task ended and until the connection closed."""
    hole = BlackHole()
    get, close = await open_get(await hole.start())
    task = asyncio.ensure_future(get())
    await asyncio.wait_for(hole.arrived.wait(), 10)
    cancelled = time.perf_counter()
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    except Exception:
        pass
    ended = time.perf_counter()
    for _ in range(200):  # up to 2 s for the connection to close
        if hole.closed_at is not None:
            break
        await asyncio.sleep(0.01)
    closed = None if hole.closed_at is None else (hole.closed_at - cancelled) * 1e3
    await close()
    await hole.stop()
    return {"task_ms": (ended - cancelled) * 1e3, "closed_ms": closed}


async def measure_async(name: str, config: Path, requests: int, concurrency: int, folder: Path) -> dict[str, Any]:
    get, patch, close = await ASYNC_OPENERS[name](config)
    version = await get()
    for turn in range(WARMUP):
        await get()
        version = await patch(patch_body(version, turn))

    async def gets() -> None:
        for _ in range(requests):
            await get()

    async def concurrent_gets() -> None:
        left = [requests]

        async def worker() -> None:
            while left[0] > 0:
                left[0] -= 1
                await get()

        await asyncio.gather(*(worker() for _ in range(concurrency)))

    async def patches() -> None:
        nonlocal version
        for turn in range(requests):
            previous, version = version, await patch(patch_body(version, WARMUP + turn))
            if version == previous:
                raise SystemExit(f"{name}: a patch left the binding unchanged")

    result = {"get": await timed_async(gets, requests),
              "get_concurrent": await timed_async(concurrent_gets, requests),
              "patch": await timed_async(patches, requests)}
    await close()

    async def open_hole(url: str) -> tuple[Get, Close]:
        get_hole, _, close_hole = await ASYNC_OPENERS[name](kubeconfig(url, folder, f"{name}-hole"))
        return get_hole, close_hole

    result["cancel"] = await cancel_probe(open_hole)
    return result


async def measure_sync(config: Path, requests: int, folder: Path) -> dict[str, Any]:
    get, patch, close = open_kubernetes(config)
    version = get()
    for turn in range(WARMUP):
        get()
        version = patch(patch_body(version, turn))

    def gets() -> None:
        for _ in range(requests):
            get()

    def patches() -> None:
        nonlocal version
        for turn in range(requests):
            previous, version = version, patch(patch_body(version, WARMUP + turn))
            if version == previous:
                raise SystemExit("kubernetes: a patch left the binding unchanged")

    result: dict[str, Any] = {"get": timed(gets, requests), "patch": timed(patches, requests)}
    close()

    async def open_hole(url: str) -> tuple[Callable[[], Awaitable[str]], Close]:
        get_hole, _, close_hole = open_kubernetes(kubeconfig(url, folder, "kubernetes-hole"))

        async def close() -> None:
            close_hole()

        return lambda: asyncio.to_thread(get_hole), close

    result["cancel"] = await cancel_probe(open_hole)
    return result


def child(name: str, url: str, requests: int, concurrency: int, import_only: bool) -> None:
    import importlib

    before, started = rss_mib(), time.perf_counter()
    try:
        for module in MODULES[name]:
            importlib.import_module(module)
    except ImportError as exc:
        print(json.dumps({"client": name, "missing": str(exc)}))
        return
    result: dict[str, Any] = {"client": name, "import_ms": (time.perf_counter() - started) * 1e3,
                              "import_mib": rss_mib() - before}
    if import_only:
        print(json.dumps(result))
        return
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        config = kubeconfig(url, folder, name)
        if name == "kubernetes":
            result.update(asyncio.run(measure_sync(config, requests, folder)))
        else:
            result.update(asyncio.run(measure_async(name, config, requests, concurrency, folder)))
    result["rss_mib"] = rss_mib()
    print(json.dumps(result))


# ---- the parent: devcluster, the binding, one child per client, the table ---------------------------------------


def run_child(name: str, url: str, args: argparse.Namespace, import_only: bool) -> dict[str, Any]:
    command = [sys.executable, "-m", "benchmarks.client_libraries", "--child", name, "--url", url,
               "--requests", str(args.requests), "--concurrency", str(args.concurrency)]
    if import_only:
        command.append("--import-only")
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        return {"client": name, "missing": f"exit {done.returncode}: {done.stderr.strip()[-400:]}"}
    return dict(json.loads(lines[-1]))


def create_binding(url: str) -> None:
    import urllib.request

    body = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "ResourceBinding",
            "metadata": {"name": NAME, "namespace": NAMESPACE},
            "spec": {"resource": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, "replicas": 3,
                     "clusters": patch_body("", 0)["spec"]["clusters"]}}
    request = urllib.request.Request(url + PATH, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        response.read()


def fmt(value: float | None, digits: int = 0) -> str:
    return "open after 2 s" if value is None else f"{value:,.{digits}f}"


def table(results: list[dict[str, Any]]) -> str:
    rows = ["| client | import ms | import MiB | GET CPU µs | GET wall µs | GET wall µs, concurrent | "
            "PATCH CPU µs | PATCH wall µs | cancel: task ends, ms | cancel: connection closed, ms |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for result in results:
        if "missing" in result:
            rows.append(f"| {result['client']} | not installed ({result['missing'][:80]}) |||||||||")
            continue
        concurrent = result.get("get_concurrent")
        rows.append(
            f"| {result['client']} | {result['import_ms']:,.0f} | {result['import_mib']:.1f} "
            f"| {result['get']['cpu_us']:,.0f} | {result['get']['wall_us']:,.0f} "
            f"| {fmt(concurrent['wall_us']) if concurrent else 'n/a (sync)'} "
            f"| {result['patch']['cpu_us']:,.0f} | {result['patch']['wall_us']:,.0f} "
            f"| {fmt(result['cancel']['task_ms'], 1)} | {fmt(result['cancel']['closed_ms'], 1)} |")
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--clients", default=",".join(CLIENTS))
    parser.add_argument("--json", type=Path, default=None, help="also write the results as JSON here")
    parser.add_argument("--child", choices=CLIENTS, help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--import-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.url, args.requests, args.concurrency, args.import_only)
        return
    from benchmarks.devcluster import start_server

    server, url = start_server()  # devcluster on CPU 0, this process (and its children) on the others
    try:
        create_binding(url)
        results = []
        for name in args.clients.split(","):
            run_child(name, url, args, import_only=True)  # compiles its bytecode: the next import is measured
            result = run_child(name, url, args, import_only=False)
            results.append(result)
            print(f"{name}: done", file=sys.stderr, flush=True)
    finally:
        server.terminate()
        server.wait(timeout=10)
    cpus = len(os.sched_getaffinity(0)) + 1
    print(f"{args.requests} requests each, {args.concurrency} in flight for the concurrent GETs; "
          f"{cpus} CPUs, devcluster pinned to one, the clients on the rest; one run")
    print(table(results))
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()

"""devcluster throughput: merge patches per second served on loopback by a server pinned to one core.

    .venv/bin/python -m benchmarks.devcluster [--seconds 5] [--concurrency 32] [--objects 100] [--watchers 1]

The server runs as `binding-scheduler devcluster` in a subprocess pinned to CPU 0 (when the machine has more
than one CPU the load generator is pinned to the others, so it does not steal the server's core). Each
request is a JSON merge patch of one ResourceBinding's `spec.clusters` plus the applied-placement annotation
with a `metadata.resourceVersion` precondition (the scheduler's commit write), spread over `--objects`
bindings; a conflict (409) counts as served. `--watchers` open watch streams on resourcebindings receive
every change meanwhile, as the operator's Kopf watch does. The target is >= 2,000 patches/s.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from typing import Any

import aiohttp

NS_PATH = "/apis/work.karmada.io/v1alpha2/namespaces/default/resourcebindings"
MERGE = {"Content-Type": "application/merge-patch+json"}


def start_server() -> tuple[subprocess.Popen[str], str]:
    cpus = sorted(os.sched_getaffinity(0))
    proc = subprocess.Popen(
        [sys.executable, "-m", "binding_scheduler.cli.devcluster", "devcluster"],
        stdout=subprocess.PIPE, text=True,
    )
    os.sched_setaffinity(proc.pid, {cpus[0]})  # pinned at once, long before the load starts
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    if not line.startswith("devcluster: serving "):
        proc.kill()
        raise SystemExit(f"devcluster did not start: {line!r}")
    if len(cpus) > 1:
        os.sched_setaffinity(0, set(cpus[1:]))
    return proc, line.split()[-1]


async def watcher(session: aiohttp.ClientSession, url: str, counter: list[int]) -> None:
    async with session.get(url + NS_PATH, params={"watch": "true"}) as response:
        async for _ in response.content:
            counter[0] += 1


async def run(url: str, seconds: float, concurrency: int, objects: int, watchers: int) -> dict[str, Any]:
    connector = aiohttp.TCPConnector(limit=concurrency + watchers + 4)
    async with aiohttp.ClientSession(connector=connector) as session:
        versions: dict[str, str] = {}
        for index in range(objects):
            body = {"metadata": {"name": f"rb-{index}"},
                    "spec": {"resource": {"apiVersion": "apps/v1", "kind": "Deployment", "name": f"w{index}"},
                             "replicas": 3}}
            async with session.post(url + NS_PATH, json=body) as response:
                created = await response.json()
                versions[f"rb-{index}"] = created["metadata"]["resourceVersion"]
        seen = [0]
        watch_tasks = [asyncio.create_task(watcher(session, url, seen)) for _ in range(watchers)]
        await asyncio.sleep(0.2)
        latencies: list[float] = []
        statuses: dict[int, int] = {}
        deadline = time.perf_counter() + seconds

        host, port = url.removeprefix("http://").rsplit(":", 1)

        async def worker(offset: int) -> None:
            # A bare keep-alive HTTP/1.1 connection: aiohttp's client costs more CPU than the server.
            reader, writer = await asyncio.open_connection(host, int(port))
            turn = offset
            while time.perf_counter() < deadline:
                name = f"rb-{turn % objects}"
                turn += concurrency
                patch = json.dumps({
                    "metadata": {"resourceVersion": versions[name], "annotations": {
                        "policy.karmada.io/applied-placement": json.dumps({"turn": turn})}},
                    "spec": {"clusters": [{"name": f"member{turn % 7}", "replicas": turn % 5 + 1}]},
                }).encode()
                started = time.perf_counter()
                writer.write(
                    f"PATCH {NS_PATH}/{name} HTTP/1.1\r\nHost: {host}\r\n"
                    f"Content-Type: application/merge-patch+json\r\nContent-Length: {len(patch)}\r\n\r\n"
                    .encode() + patch)
                head = await reader.readuntil(b"\r\n\r\n")
                status = int(head[9:12])
                length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
                body = await reader.readexactly(length)
                latencies.append(time.perf_counter() - started)
                statuses[status] = statuses.get(status, 0) + 1
                if status == 200:
                    versions[name] = json.loads(body)["metadata"]["resourceVersion"]
            writer.close()

        began = time.perf_counter()
        await asyncio.gather(*(worker(i) for i in range(concurrency)))
        elapsed = time.perf_counter() - began
        for task in watch_tasks:
            task.cancel()
        await asyncio.gather(*watch_tasks, return_exceptions=True)
    latencies.sort()
    return {
        "requests": len(latencies),
        "per_second": len(latencies) / elapsed,
        "statuses": statuses,
        "p50_ms": statistics.median(latencies) * 1000,
        "p99_ms": latencies[int(len(latencies) * 0.99)] * 1000,
        "watch_lines": seen[0],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--objects", type=int, default=100)
    parser.add_argument("--watchers", type=int, default=1)
    parser.add_argument("--url", default=None, help="load an already running devcluster instead of starting one")
    args = parser.parse_args()
    if args.url:
        result = asyncio.run(run(args.url, args.seconds, args.concurrency, args.objects, args.watchers))
        print(f"{result['per_second']:,.0f} merge patches/s {result['statuses']}")
        return
    proc, url = start_server()
    try:
        result = asyncio.run(run(url, args.seconds, args.concurrency, args.objects, args.watchers))
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=20)
    print(f"devcluster on one core: {result['per_second']:,.0f} merge patches/s "
          f"({result['requests']:,} in {args.seconds:g} s, concurrency {args.concurrency}, "
          f"{args.watchers} watcher(s) got {result['watch_lines']:,} events)")
    print(f"  statuses {result['statuses']}  latency p50 {result['p50_ms']:.2f} ms  p99 {result['p99_ms']:.2f} ms")
    print("  target >= 2,000/s:", "met" if result["per_second"] >= 2000 else "NOT met")


if __name__ == "__main__":
    main()

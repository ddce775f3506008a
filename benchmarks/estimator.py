#!/usr/bin/env python3
"""One accurate-estimator fan-out over many clusters whose estimators are slow: concurrent, not serial.

    .venv/bin/python -m benchmarks.estimator [--clusters 100] [--latency 0.020] [--rounds 20]

Starts one estimator stub per cluster on loopback (each answers after --latency seconds), warms the channels up
with one fan-out, then times --rounds fan-outs. Prints the median and best wall time and their ratio to the
ideal (one latency); a serial client would take clusters x latency. The stubs run in a child process so the
client's event loop measures only the client.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time

os.environ.setdefault("GRPC_VERBOSITY", "ERROR")  # gRPC core reads it when it loads: before the imports below

from binding_scheduler.estimation import AccurateEstimator, EstimatorSettings
from binding_scheduler.estimation.stub import EstimatorStub
from binding_scheduler.model import Cluster, ReplicaRequirements, parse_quantity


async def serve(clusters: int, latency: float, mode: str = "ok") -> None:
    """Child process: serve the stubs, print one `name host:port` line each, run until stdin closes."""
    stubs = [EstimatorStub(f"member{i}", replicas=10, latency=latency, mode=mode) for i in range(clusters)]
    for stub in stubs:
        await stub.start()
        print(stub.cluster_name, stub.address, flush=True)
    print("ready", flush=True)
    reader = asyncio.StreamReader()
    await asyncio.get_running_loop().connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    await reader.read()
    for stub in stubs:
        await stub.stop()


async def measure_cancellation(clusters: int, rounds: int) -> None:
    """Every estimator hangs; the pass is cancelled once all calls are in flight: how long until the caller
    has control back (every call cancelled, nothing left running)."""
    child, endpoints = await start_stubs(clusters, 0.0, "hang")
    estimator = AccurateEstimator(EstimatorSettings(endpoints=endpoints, timeout=60.0))
    members = [Cluster(name=name) for name in endpoints]
    times = []
    try:
        for _ in range(rounds):
            task = asyncio.create_task(estimator.max_available_replicas(members, None))
            await asyncio.sleep(0.3)
            start = time.perf_counter()
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            times.append(time.perf_counter() - start)
    finally:
        await estimator.close()
        assert child.stdin is not None
        child.stdin.close()
        await child.wait()
    print(
        f"cancel with {clusters} calls hanging: control back in {statistics.median(times) * 1000:.1f} ms median, "
        f"{max(times) * 1000:.1f} ms worst (target: within 50 ms)"
    )


async def start_stubs(clusters: int, latency: float, mode: str) -> tuple[asyncio.subprocess.Process, dict[str, str]]:
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        __file__,
        "--serve",
        "--clusters",
        str(clusters),
        "--latency",
        str(latency),
        "--mode",
        mode,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    assert child.stdout is not None
    endpoints = {}
    while (line := (await child.stdout.readline()).decode().strip()) != "ready":
        if not line:
            raise SystemExit("the estimator stubs did not start")
        name, address = line.split()
        endpoints[name] = address
    return child, endpoints


async def measure(clusters: int, latency: float, rounds: int) -> int:
    child, endpoints = await start_stubs(clusters, latency, "ok")
    assert child.stdin is not None
    estimator = AccurateEstimator(EstimatorSettings(endpoints=endpoints, timeout=5.0))
    members = [Cluster(name=name) for name in endpoints]
    requirements = ReplicaRequirements(resource_request={"cpu": parse_quantity("500m", "cpu")}, namespace="default")
    try:
        warm = await estimator.max_available_replicas(members, requirements)
        if warm.failures:
            raise SystemExit(f"warm-up failed: {dict(warm.failures)}")
        times = []
        for _ in range(rounds):
            start = time.perf_counter()
            answer = await estimator.max_available_replicas(members, requirements)
            times.append(time.perf_counter() - start)
            assert len(answer.replicas) == clusters, answer.failures
    finally:
        await estimator.close()
        child.stdin.close()
        await child.wait()
    median, best = statistics.median(times), min(times)
    print(f"clusters: {clusters}, estimator latency: {latency * 1000:.0f} ms, rounds: {rounds}")
    print(f"ideal (one latency): {latency * 1000:.1f} ms; serial would be {clusters * latency * 1000:.0f} ms")
    print(f"fan-out median: {median * 1000:.1f} ms  (ratio to ideal {median / latency:.2f})")
    print(f"fan-out best:   {best * 1000:.1f} ms  (ratio to ideal {best / latency:.2f})")
    print(f"speed-up over serial: {clusters * latency / median:.0f}x (median)")
    await measure_cancellation(clusters, min(rounds, 5))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clusters", type=int, default=100)
    parser.add_argument("--latency", type=float, default=0.020)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--mode", default="ok", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        asyncio.run(serve(args.clusters, args.latency, args.mode))
        return 0
    return asyncio.run(measure(args.clusters, args.latency, args.rounds))


if __name__ == "__main__":
    sys.exit(main())

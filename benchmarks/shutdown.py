"""Time from SIGTERM to process exit for `binding-scheduler run`.

    .venv/bin/python -m benchmarks.shutdown [--counts 0,8,64] [--rounds 3]

For each count N, N bindings have their passes blocked in accurate-estimator calls that never answer (a
stub in hang mode); the process gets SIGTERM and the time until it has exited is measured (the target is
under 300 ms for any N). Then one pass held in its commit: its spec write is delayed 200 ms at the API
server when SIGTERM arrives, so the stop drains it (both writes land) before exiting.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import yaml

from binding_scheduler.devcluster import DevCluster
from binding_scheduler.estimation.stub import EstimatorStub


def wait_until(condition: Any, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise SystemExit("timed out waiting for the scenario to set up")
        time.sleep(0.005)


def cluster(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "cluster.karmada.io/v1alpha1",
        "kind": "Cluster",
        "metadata": {"name": name},
        "spec": {"syncMode": "Push"},
        "status": {
            "apiEnablements": [
                {"groupVersion": "apps/v1", "resources": [{"name": "deployments", "kind": "Deployment"}]}
            ],
            "resourceSummary": {"allocatable": {"pods": "1000"}},
        },
    }


def binding(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "work.karmada.io/v1alpha2",
        "kind": "ResourceBinding",
        "metadata": {
            "name": name,
            "namespace": "default",
            "labels": {"propagationpolicy.karmada.io/permanent-id": "p"},
        },
        "spec": {
            "resource": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name, "namespace": "default"},
            "replicas": 2,
            "placement": {
                "replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted"}
            },
        },
    }


def create(api: DevCluster, doc: dict[str, Any], plural: str) -> None:
    api.store.create(plural, {k: v for k, v in doc.items() if k != "status"})
    if "status" in doc:
        api.store.patch(
            plural,
            doc["metadata"]["name"],
            {"status": doc["status"]},
            namespace=doc["metadata"].get("namespace"),
            subresource="status",
        )


class StubThread:
    def __init__(self, stub: EstimatorStub) -> None:
        self.stub = stub
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    def __enter__(self) -> EstimatorStub:
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self.stub.start(), self.loop).result(10)
        return self.stub

    def __exit__(self, *_: object) -> None:
        asyncio.run_coroutine_threadsafe(self.stub.stop(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


def launch(api: DevCluster, spec: dict[str, Any], folder: Path) -> subprocess.Popen[str]:
    config = folder / "config.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "config.binding-scheduler.io/v1alpha1",
                "kind": "SchedulerConfiguration",
                "metadata": {"name": "bench"},
                "spec": spec,
            }
        )
    )
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "binding_scheduler.cli.main",
            "run",
            "--kubeconfig",
            str(api.kubeconfig_path),
            "--namespace",
            "karmada-system",
            "--config-file",
            str(config),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


def lease_held(api: DevCluster) -> bool:
    lease = api.store.find("leases", "karmada-scheduler", "karmada-system")
    return bool(lease and lease.get("spec", {}).get("holderIdentity"))


def stop_and_time(process: subprocess.Popen[str]) -> float:
    started = time.perf_counter()
    process.send_signal(signal.SIGTERM)
    process.wait(120)
    elapsed = time.perf_counter() - started
    if process.returncode != 0:
        raise SystemExit(f"exit status {process.returncode}: {process.stderr.read() if process.stderr else ''}")
    return elapsed


BASE = {
    "metrics": {"port": 0, "healthPort": 0},
    "leaderElection": {
        "leaseNamespace": "karmada-system",
        "leaseDuration": "3s",
        "renewDeadline": "2s",
        "retryPeriod": "500ms",
    },
    "shutdown": {"drainTimeout": "10s"},
}


def blocked_in_estimator(count: int, folder: Path) -> float:
    with DevCluster.in_thread() as api, StubThread(EstimatorStub("m1", replicas=10, mode="hang")) as stub:
        for ns in ("default", "karmada-system"):
            api.store.ensure_namespace(ns)
        create(api, cluster("m1"), "clusters")
        for i in range(count):
            create(api, binding(f"web-{i}"), "resourcebindings")
        spec = {
            **BASE,
            "workers": max(count, 1),
            "estimator": {"enabled": True, "timeout": "120s", "endpoints": {"m1": stub.address}},
        }
        process = launch(api, spec, folder)
        wait_until(lambda: lease_held(api) and len(stub.calls) >= count)
        time.sleep(0.2)
        return stop_and_time(process)


def held_in_commit(folder: Path) -> float:
    with DevCluster.in_thread() as api:
        for ns in ("default", "karmada-system"):
            api.store.ensure_namespace(ns)
        create(api, cluster("m1"), "clusters")
        create(api, binding("web"), "resourcebindings")
        fault = api.faults.add(method="PATCH", path=r"/resourcebindings/web$", delay=0.2, times=1)
        process = launch(api, {**BASE}, folder)
        wait_until(lambda: fault.hits >= 1)
        elapsed = stop_and_time(process)
        writes = [e.status for e in api.journal.filter(method="PATCH", path=r"/resourcebindings/web")]
        if writes != [200, 200]:
            raise SystemExit(f"the held pass was not drained: {writes}")
        return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--counts", default="0,8,64")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        print(f"{'scenario':<44} {'median':>9} {'best':>9} {'worst':>9}   (SIGTERM -> exit)")
        for count in (int(c) for c in args.counts.split(",")):
            times = [blocked_in_estimator(count, folder) for _ in range(args.rounds)]
            print(
                f"{f'{count} passes blocked in estimator calls':<44} {statistics.median(times) * 1000:>7.0f}ms "
                f"{min(times) * 1000:>7.0f}ms {max(times) * 1000:>7.0f}ms",
                flush=True,
            )
        times = [held_in_commit(folder) for _ in range(args.rounds)]
        print(
            f"{'1 pass held 200 ms in its spec write (drained)':<44} {statistics.median(times) * 1000:>7.0f}ms "
            f"{min(times) * 1000:>7.0f}ms {max(times) * 1000:>7.0f}ms",
            flush=True,
        )


if __name__ == "__main__":
    main()

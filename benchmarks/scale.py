"""Scale: one scheduler instance over a fleet's worth of bindings, from a cold start through churn.

    .venv/bin/python -m benchmarks.scale [--clusters 1000] [--bindings 50000] [--workers 8] [--soak 600]

devcluster runs in its own process (as in `benchmarks/e2e.py`, whose objects this uses: 10 regions, 3 providers,
env/tier labels, taints, summaries; Duplicated, dynamic, Aggregated, static-weight, spread and multi-affinity
bindings, every tenth a ClusterResourceBinding). All objects exist before `binding-scheduler run` starts. Phases:

1. **cold start**: from the scheduler's spawn until every binding has its Scheduled condition; its rate, and the
   scheduler's RSS then (`VmRSS`) and peak (`VmHWM`).
2. **relabel**: one staging cluster's `tier` label changes from gold to silver; the scheduler requeues every
   binding whose affinity selects it before or after (the Aggregated ones, `tier: gold`); measured until its
   queue is empty and no pass is in flight again (its own metrics; an unchanged decision writes nothing, so
   the API server cannot tell).
3. **delete**: a prod cluster is deleted; the bindings placed on it are scheduled again, until the queue is empty.
   RSS is read then, with the peak since the spawn (`VmHWM`).
4. **soak** (`--soak` seconds): each second 50 bindings change replicas and one cluster's allocated resources
   change, each minute one label flips; the scheduler's RSS is sampled every 5 s and its growth reported
   between the end of the first minute and the end.

RSS is the scheduler's resident memory (its Python objects: the binding and cluster stores, parse caches,
snapshots, the queue, Kopf's per-resource state).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import yaml

from benchmarks import ROOT
from benchmarks.e2e import DevclusterHost, binding_doc, cluster_doc, proc_cpu, proc_hwm_mib

QUEUE_DEPTH = "binding_scheduler_queue_depth"
IN_FLIGHT = "binding_scheduler_passes_in_flight"
INCOMING = "karmada_scheduler_queue_incoming_bindings_total"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def proc_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


class Metrics:
    """The scheduler's /metrics, summed per sample name (and label filter)."""

    def __init__(self, port: int) -> None:
        self.url = f"http://127.0.0.1:{port}/metrics"

    def scrape(self) -> list[tuple[str, str, float]]:
        with urllib.request.urlopen(self.url, timeout=30) as answer:
            text = answer.read().decode()
        samples = []
        for line in text.splitlines():
            if not line or line.startswith("#"):
                continue
            head, _, value = line.rpartition(" ")
            name, _, labels = head.partition("{")
            samples.append((name, labels, float(value)))
        return samples

    def total(self, name: str, label: str = "") -> float:
        return sum(v for n, labels, v in self.scrape() if n == name and label in labels)

    def idle(self) -> bool:
        """Nothing queued to run (bindings parked as unschedulable wait for a cluster change) or running."""
        samples = self.scrape()
        busy = sum(v for n, labels, v in samples
                   if n == IN_FLIGHT or (n == QUEUE_DEPTH and 'queue="unschedulable"' not in labels))
        return busy == 0


def write_config(folder: Path, workers: int, port: int, health: int) -> Path:
    spec = {"workers": workers, "kubeAPI": {"qps": 1e6, "burst": 1_000_000},
            "metrics": {"host": "127.0.0.1", "port": port, "healthHost": "127.0.0.1", "healthPort": health}}
    path = folder / "config.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "config.binding-scheduler.io/v1alpha1",
                                    "kind": "SchedulerConfiguration", "metadata": {"name": "scale"}, "spec": spec}))
    return path


def wait_requeued_and_idle(metrics: Metrics, baseline: float, pid: int, timeout: float) -> tuple[float, float]:
    """Seconds until the scheduler has taken the requeues (its ClusterChanged count moved) and drained them;
    and how many were requeued."""
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        requeued = metrics.total(INCOMING, 'event="ClusterChanged"') - baseline
        if requeued > 0 and metrics.idle():
            return time.monotonic() - started, requeued
        time.sleep(0.1)
    raise SystemExit(f"not drained within {timeout:.0f} s (RSS {proc_rss_mib(pid):.0f} MiB)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clusters", type=int, default=1000)
    parser.add_argument("--bindings", type=int, default=50_000)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--soak", type=float, default=600.0, help="seconds of churn (0: none)")
    parser.add_argument("--timeout", type=float, default=1800.0)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--log", type=Path, default=None, help="keep the scheduler's log here")
    parser.add_argument("--gc-stats", type=Path, default=None, metavar="FILE",
                        help="time the scheduler's garbage collections (benchmarks/gc_timing.py) into FILE")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    results: dict[str, Any] = {"clusters": args.clusters, "bindings": args.bindings, "workers": args.workers}

    def report(key: str, value: Any, text: str) -> None:
        results[key] = value
        if text:
            print(text, flush=True)

    host = DevclusterHost(None)
    proc: subprocess.Popen[str] | None = None
    try:
        populated = host.ask(op="populate", clusters=args.clusters, bindings=args.bindings, seed=args.seed)
        print(f"{args.clusters} clusters, {args.bindings} bindings created in {populated['seconds']:.1f} s", flush=True)
        with tempfile.TemporaryDirectory(prefix="scale-") as tmp:
            port, health = free_port(), free_port()
            config = write_config(Path(tmp), args.workers, port, health)
            log = args.log or Path(tmp) / "scheduler.log"
            spawned = time.monotonic()
            with log.open("w") as stderr:
                main_module = ["-m", "binding_scheduler.cli.main"]
                if args.gc_stats is not None:
                    main_module = ["-m", "benchmarks.gc_timing", str(args.gc_stats)]
                proc = subprocess.Popen(
                    [sys.executable, *main_module, "run", "--kubeconfig", str(host.kubeconfig),
                     "--namespace", "karmada-system", "--config-file", str(config)],
                    stdout=subprocess.DEVNULL, stderr=stderr, text=True, cwd=ROOT,
                    env={**os.environ, "PYTHONPATH": str(ROOT / "operator")},
                )
            metrics = Metrics(port)

            def alive() -> None:
                if proc is not None and proc.poll() is not None:
                    raise SystemExit(f"the scheduler exited {proc.returncode}:\n{log.read_text()[-4000:]}")

            # 1. cold start
            progress = spawned + 15
            while True:
                alive()
                stats = host.ask(op="stats")
                if stats["scheduled"] >= args.bindings:
                    break
                if time.monotonic() - spawned > args.timeout:
                    raise SystemExit(f"only {stats['scheduled']} of {args.bindings} scheduled in time")
                if time.monotonic() >= progress:
                    progress += 15
                    print(f"  {time.monotonic() - spawned:5.0f} s: {stats['scheduled']:,} scheduled, RSS "
                          f"{proc_rss_mib(proc.pid):,.0f} MiB", flush=True)
                time.sleep(0.5)
            cold = stats["last"] - spawned
            rate = (args.bindings - 1) / max(stats["last"] - stats["first"], 1e-9)
            while not metrics.idle():
                time.sleep(0.2)
            report("cold_start_s", cold, f"cold start: all scheduled {cold:.1f} s after spawn (first decision after "
                   f"{stats['first'] - spawned:.1f} s; {rate:,.0f} bindings/s between first and last)")
            report("cold_rate", rate, "")
            report("cold_rss_mib", proc_rss_mib(proc.pid), f"  RSS {proc_rss_mib(proc.pid):,.0f} MiB, peak "
                   f"{proc_hwm_mib(proc.pid):,.0f} MiB, CPU {proc_cpu(proc.pid):,.0f} s")
            results["cold_peak_mib"] = proc_hwm_mib(proc.pid)

            # 2. relabel one staging cluster (index % 5 == 0) that is tier gold
            staging_gold = next(
                i for i in range(0, args.clusters, 5)
                if cluster_tier(i, args.seed) == "gold"
            )
            name = f"member-{staging_gold:05d}"
            baseline = metrics.total(INCOMING, 'event="ClusterChanged"')
            host.ask(op="relabel", clusters=[name], labels={"tier": "silver"})
            seconds, requeued = wait_requeued_and_idle(metrics, baseline, proc.pid, args.timeout)
            report("relabel_s", seconds, f"relabel {name} tier gold->silver: {requeued:,.0f} bindings requeued, "
                   f"re-decided in {seconds:.1f} s ({requeued / seconds:,.0f}/s)")
            results["relabel_requeued"] = requeued

            # 3. delete a prod cluster
            victim = f"member-{1:05d}"
            baseline = metrics.total(INCOMING, 'event="ClusterChanged"')
            host.ask(op="delete", plural="clusters", name=victim)
            seconds, requeued = wait_requeued_and_idle(metrics, baseline, proc.pid, args.timeout)
            report("delete_s", seconds, f"delete {victim}: {requeued:,.0f} bindings requeued, re-decided in "
                   f"{seconds:.1f} s ({requeued / seconds:,.0f}/s)")
            results["delete_requeued"] = requeued
            results["after_churn_rss_mib"] = proc_rss_mib(proc.pid)
            results["churn_peak_mib"] = proc_hwm_mib(proc.pid)
            print(f"  RSS {results['after_churn_rss_mib']:,.0f} MiB as the queue empties; peak since spawn "
                  f"{results['churn_peak_mib']:,.0f} MiB", flush=True)

            # 4. soak
            if args.soak > 0:
                soak(args, host, proc, rng, results, alive)
    finally:
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                proc.kill()
        host.close()
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=1))


def cluster_tier(index: int, seed: int) -> str:
    """The tier label e2e.populate gave cluster `index` (it draws from one seeded generator, in order)."""
    rng = random.Random(seed)
    tier = ""
    for i in range(index + 1):
        tier = cluster_doc(i, rng)["metadata"]["labels"]["tier"]
    return tier


def soak(args: argparse.Namespace, host: DevclusterHost, proc: subprocess.Popen[str], rng: random.Random,
         results: dict[str, Any], alive: Any) -> None:
    names = [binding_doc(i, random.Random(0))["metadata"] for i in range(args.bindings)]
    resource_bindings = [(m.get("namespace") or "", m["name"]) for m in names if m.get("namespace")]
    started = time.monotonic()
    samples: list[tuple[float, float]] = []
    flips = 0
    next_sample = started
    while (now := time.monotonic()) - started < args.soak:
        alive()
        tick = time.monotonic()
        chosen = rng.sample(resource_bindings, 50)
        for namespace, name in chosen:
            host.ask(op="patch", objects=[["resourcebindings", namespace, name]],
                     patch={"spec": {"replicas": rng.randint(2, 40)}})
        cluster = f"member-{rng.randrange(2, args.clusters):05d}"
        host.ask(op="patch", objects=[["clusters", "", cluster]], subresource="status",
                 patch={"status": {"resourceSummary": {"allocated": {"cpu": str(rng.randint(0, 16))}}}})
        if int((now - started) // 60) > flips:
            flips += 1
            host.ask(op="relabel", clusters=[f"member-{5 * rng.randrange(args.clusters // 5):05d}"],
                     labels={"tier": rng.choice(["gold", "silver"])})
        if now >= next_sample:
            samples.append((now - started, proc_rss_mib(proc.pid)))
            next_sample += 5
        time.sleep(max(0.0, 1.0 - (time.monotonic() - tick)))
    warm = [rss for at, rss in samples if at >= 60] or [s[1] for s in samples]
    growth = warm[-1] - warm[0]
    results["soak_rss_samples"] = samples
    results["soak_growth_mib"] = growth
    results["soak_peak_mib"] = proc_hwm_mib(proc.pid)
    print(f"soak {args.soak:.0f} s: RSS {samples[0][1]:,.0f} MiB at start, {warm[0]:,.0f} after the first minute, "
          f"{warm[-1]:,.0f} at the end (growth {growth:+,.0f} MiB; min {min(warm):,.0f}, max {max(warm):,.0f}); "
          f"peak since spawn {results['soak_peak_mib']:,.0f} MiB", flush=True)


if __name__ == "__main__":
    main()

"""End to end: bindings per second of `binding-scheduler run` against an API server in its own process.

    .venv/bin/python -m benchmarks.e2e [--clusters 100] [--bindings 4000] [--workers 1,8] [--rounds 2]
        [--estimators 20ms --estimator-clusters 10] [--capacity K] [--tree NAME=PATH ...] [--profile DIR]
        [--pin] [--real]

Each trial starts a fresh API server holding `--clusters` Clusters (10 regions, 3 providers, env/tier labels,
10 % tainted, API enablements, resource summaries) and `--bindings` bindings of mixed kinds (Duplicated,
dynamic weights, Aggregated, static weights by label rules, region + cluster spread, clusterAffinities with a
fallback term; every tenth a ClusterResourceBinding), none scheduled yet. Then the scheduler starts, as a
separate process, with `workers` passes and no client-side rate limit (kubeAPI qps 1e6), and the trial ends
when every binding has its Scheduled condition. Measured:

- bindings/s from the first to the last Scheduled condition, and the time from the scheduler's spawn to its
  first decision (imports, Lease, lists, the first pass);
- API requests per binding sent by the scheduler (its user agent; the Kopf watches and lists included), counted
  once it has sent nothing for 0.5 s after the last decision ("settle": how long its Events trailed);
- the scheduler's peak RSS (`VmHWM` in /proc/PID/status) and its CPU seconds per binding from the first
  decision until it settled (utime + stime from /proc/PID/stat), and its share of a core meanwhile;
- with `--profile DIR`, a py-spy profile of each variant's first trial (speedscope JSON and a flat top list;
  py-spy is an optional tool: `pip install py-spy`, found on PATH or with `--py-spy`).

The API server is devcluster (the same server `binding-scheduler devcluster` runs) in a child process of this
benchmark that also counts requests per user agent and notes when each binding first shows a Scheduled
condition; `--real` uses the real control plane of testsupport/realcluster (etcd + kube-apiserver, built with Go)
instead, requests then counted from its audit log and conditions from a watch.

Variants: every `--workers` value for every `--tree` (a source tree whose `operator/` folder the scheduler
runs from, e.g. a `git worktree` of the baseline commit; default: this checkout), run interleaved: round 1
runs each variant once, then round 2, ... Absolute numbers on a busy machine are noisy: compare variants of
one run, by their ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import math
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from benchmarks import ROOT
from testsupport.realcluster import controlplane

REGIONS = [f"region-{i}" for i in range(10)]
PROVIDERS = ["aws", "gcp", "azure"]
API_ENABLEMENTS = [
    {"groupVersion": "v1", "resources": [{"name": "configmaps", "kind": "ConfigMap"}]},
    {"groupVersion": "apps/v1", "resources": [{"name": "deployments", "kind": "Deployment"}]},
    {"groupVersion": "rbac.authorization.k8s.io/v1", "resources": [{"name": "clusterroles", "kind": "ClusterRole"}]},
]
POLICY_LABEL = "propagationpolicy.karmada.io/permanent-id"
CLUSTER_POLICY_LABEL = "clusterpropagationpolicy.karmada.io/permanent-id"
DIVIDED_WEIGHTED = {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted"}
PLACEMENTS: dict[str, dict[str, Any]] = {
    "duplicated": {
        "clusterAffinity": {"labelSelector": {"matchLabels": {"env": "prod"}}},
        "replicaScheduling": {"replicaSchedulingType": "Duplicated"},
    },
    "dynamic": {
        "clusterAffinity": {"labelSelector": {"matchLabels": {"env": "prod"}}},
        "replicaScheduling": {**DIVIDED_WEIGHTED, "weightPreference": {"dynamicWeight": "AvailableReplicas"}},
    },
    "aggregated": {
        "clusterAffinity": {"labelSelector": {"matchLabels": {"tier": "gold"}}},
        "replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"},
    },
    "static": {
        "clusterAffinity": {"labelSelector": {"matchLabels": {"env": "prod"}}},
        "replicaScheduling": {**DIVIDED_WEIGHTED, "weightPreference": {"staticWeightList": [
            {"targetCluster": {"labelSelector": {"matchLabels": {"tier": "gold"}}}, "weight": 3},
            {"targetCluster": {"labelSelector": {"matchLabels": {"tier": "silver"}}}, "weight": 1},
        ]}},
    },
    "spread": {
        "clusterAffinity": {"labelSelector": {"matchLabels": {"env": "prod"}}},
        "spreadConstraints": [
            {"spreadByField": "region", "minGroups": 2, "maxGroups": 3},
            {"spreadByField": "cluster", "minGroups": 3, "maxGroups": 6},
        ],
        "replicaScheduling": {**DIVIDED_WEIGHTED, "weightPreference": {"dynamicWeight": "AvailableReplicas"}},
    },
    "affinities": {
        "clusterAffinities": [
            {"affinityName": "nowhere", "labelSelector": {"matchLabels": {"env": "nowhere"}}},
            {"affinityName": "prod", "labelSelector": {"matchLabels": {"env": "prod"}}},
        ],
        "replicaScheduling": {**DIVIDED_WEIGHTED, "weightPreference": {"dynamicWeight": "AvailableReplicas"}},
    },
}
CLUSTER_SCOPED = {
    "clusterAffinity": {"labelSelector": {"matchLabels": {"env": "prod"}}},
    "replicaScheduling": {"replicaSchedulingType": "Duplicated"},
}


# ---- the objects ------------------------------------------------------------------------------------------


def cluster_doc(index: int, rng: random.Random, capacity: int = 1) -> dict[str, Any]:
    """One member; `capacity` multiplies what it has allocatable (the draws stay those of capacity 1)."""
    region = REGIONS[index % len(REGIONS)]
    cpu = rng.choice([32, 64, 128])
    taints = [{"key": "maintenance", "effect": "NoSchedule"}] if rng.random() < 0.1 else []
    return {
        "apiVersion": "cluster.karmada.io/v1alpha1",
        "kind": "Cluster",
        "metadata": {
            "name": f"member-{index:05d}",
            "labels": {"env": "prod" if index % 5 else "staging", "tier": rng.choice(["gold", "silver"])},
        },
        "spec": {
            "syncMode": "Push",
            "provider": PROVIDERS[index % len(PROVIDERS)],
            "region": region,
            "zones": [f"{region}-a"],
            "taints": taints,
        },
        "status": {
            "apiEnablements": API_ENABLEMENTS,
            "resourceSummary": {
                "allocatable": {"cpu": str(cpu * capacity), "memory": f"{cpu * 4 * capacity}Gi",
                                "pods": str(330 * capacity)},
                "allocated": {"cpu": str(rng.randint(0, cpu // 2)), "memory": "16Gi", "pods": "40"},
            },
        },
    }


def binding_doc(index: int, rng: random.Random) -> dict[str, Any]:
    if index % 10 == 9:
        name = f"role-{index:06d}"
        return {
            "apiVersion": "work.karmada.io/v1alpha2",
            "kind": "ClusterResourceBinding",
            "metadata": {"name": name, "labels": {CLUSTER_POLICY_LABEL: "cluster-policy"}},
            "spec": {
                "resource": {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "name": name,
                             "uid": f"{rng.getrandbits(128):032x}"},
                "placement": CLUSTER_SCOPED,
            },
        }
    kind = list(PLACEMENTS)[index % len(PLACEMENTS)]
    name = f"{kind}-{index:06d}"
    return {
        "apiVersion": "work.karmada.io/v1alpha2",
        "kind": "ResourceBinding",
        "metadata": {"name": name, "namespace": f"team-{index % 4}", "labels": {POLICY_LABEL: f"policy-{kind}"}},
        "spec": {
            "resource": {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": f"team-{index % 4}",
                         "name": name, "uid": f"{rng.getrandbits(128):032x}"},
            "replicas": rng.randint(2, 40),
            "replicaRequirements": {"resourceRequest": {"cpu": "250m", "memory": "512Mi"}},
            "placement": PLACEMENTS[kind],
        },
    }


# ---- the API server process (devcluster) ---------------------------------------------------------------


async def serve_devcluster() -> None:
    """Child mode: devcluster plus a control channel on stdin/stdout (one JSON command/answer per line)."""
    from binding_scheduler.devcluster import GC_THRESHOLDS, DevCluster
    from binding_scheduler.devcluster.journal import JournalEntry

    gc.set_threshold(*GC_THRESHOLDS)
    api = DevCluster(history=200_000, journal_limit=1)
    requests: Counter[str] = Counter()
    scheduled: dict[str, float] = {}
    original = api.journal.record

    def record(entry: JournalEntry) -> JournalEntry:
        verb = "WATCH" if entry.is_watch else entry.method
        requests[f"{entry.user_agent.split(' ')[0].split('/')[0]} {verb} {_kind_of(entry.path)}"] += 1
        return original(entry)

    api.journal.record = record  # type: ignore[method-assign]
    await api.start()
    subscriptions = [api.store.subscribe(api.store.registry.resolve(plural), None)
                     for plural in ("resourcebindings", "clusterresourcebindings")]

    async def observe(queue: asyncio.Queue[Any]) -> None:
        while True:
            event = await queue.get()
            if event is None:
                continue
            metadata = event.obj.get("metadata") or {}
            key = f"{metadata.get('namespace') or ''}/{metadata['name']}"
            if key not in scheduled and any(
                c.get("type") == "Scheduled" for c in (event.obj.get("status") or {}).get("conditions") or ()
            ):
                scheduled[key] = time.monotonic()

    observers = [asyncio.create_task(observe(s.queue)) for s in subscriptions]
    print(json.dumps({"url": api.url, "kubeconfig": str(api.kubeconfig_path)}), flush=True)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while line := await reader.readline():
        command = json.loads(line)
        answer: dict[str, Any] = {}
        if command["op"] == "populate":
            started = time.monotonic()
            populate(api.store, command["clusters"], command["bindings"], command["seed"], command.get("capacity", 1))
            answer = {"seconds": time.monotonic() - started}
        elif command["op"] == "stats":
            times = list(scheduled.values())
            answer = {"scheduled": len(times), "first": min(times, default=None), "last": max(times, default=None),
                      "requests": dict(requests)}
        elif command["op"] == "relabel":
            started = time.monotonic()
            scheduled.clear()
            for name in command["clusters"]:
                api.store.patch("clusters", name, {"metadata": {"labels": command["labels"]}})
            answer = {"at": started}
        elif command["op"] == "patch":
            started = time.monotonic()
            for plural, namespace, name in command["objects"]:
                api.store.patch(plural, name, command["patch"], namespace=namespace or None,
                                subresource=command.get("subresource"))
            answer = {"at": started}
        elif command["op"] == "delete":
            started = time.monotonic()
            api.store.delete(command["plural"], command["name"], namespace=command.get("namespace"))
            answer = {"at": started}
        print(json.dumps(answer), flush=True)
    for task in observers:
        task.cancel()
    await api.stop()


def populate(store: Any, clusters: int, bindings: int, seed: int, capacity: int = 1) -> None:
    rng = random.Random(seed)
    for namespace in ("karmada-system", *(f"team-{i}" for i in range(4))):
        store.ensure_namespace(namespace)
    for index in range(clusters):
        create(store, "clusters", cluster_doc(index, rng, capacity))
    for index in range(bindings):
        doc = binding_doc(index, rng)
        create(store, "resourcebindings" if doc["kind"] == "ResourceBinding" else "clusterresourcebindings", doc)


def create(store: Any, plural: str, doc: dict[str, Any]) -> None:
    store.create(plural, {k: v for k, v in doc.items() if k != "status"})
    if doc.get("status"):
        metadata = doc["metadata"]
        store.patch(plural, metadata["name"], {"status": doc["status"]}, namespace=metadata.get("namespace"),
                    subresource="status")


def _kind_of(path: str) -> str:
    parts = [p for p in path.split("?", maxsplit=1)[0].split("/") if p]
    for plural in ("resourcebindings", "clusterresourcebindings", "clusters", "events", "leases",
                   "schedulerconfigurations"):
        if plural in parts:
            index = parts.index(plural)
            return plural + ("/" + parts[index + 2] if len(parts) > index + 2 else "")
    return "other"


class DevclusterHost:
    """The devcluster child process and its control channel."""

    def __init__(self, cpu: int | None) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.e2e", "--serve-devcluster"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, text=True, cwd=ROOT,
        )
        if cpu is not None:
            os.sched_setaffinity(self.proc.pid, {cpu})
        hello = self._read()
        self.url, self.kubeconfig = hello["url"], Path(hello["kubeconfig"])

    def _read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit("the devcluster process ended")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def ask(self, **command: Any) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(command) + "\n")
        self.proc.stdin.flush()
        return self._read()

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class RealHost:
    """The real control plane of testsupport/realcluster (etcd + kube-apiserver); requests from its audit log."""

    def __init__(self, folder: Path) -> None:
        self.state = folder / "plane"
        self.plane = controlplane.start(self.state, tie_to_parent=True)
        self.kubeconfig = self.plane.kubeconfig_path
        self.watcher: subprocess.Popen[str] | None = None
        self.scheduled: dict[str, float] = {}
        self.audit_offset = 0

    def populate(self, clusters: int, bindings: int, seed: int, capacity: int = 1) -> None:
        rng = random.Random(seed)
        docs = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": f"team-{i}"}} for i in range(4)]
        docs += [cluster_doc(i, rng, capacity) for i in range(clusters)]
        docs += [binding_doc(i, rng) for i in range(bindings)]
        for start in range(0, len(docs), 500):
            chunk = {"apiVersion": "v1", "kind": "List", "items": [
                {k: v for k, v in d.items() if k != "status"} for d in docs[start:start + 500]]}
            self.plane.kubectl("apply", "--server-side", "-f", "-", input=json.dumps(chunk))
        for doc in docs:
            if doc.get("status"):
                self.plane.kubectl("patch", "cluster", doc["metadata"]["name"], "--subresource=status",
                                   "--type=merge", "-p", json.dumps({"status": doc["status"]}))
        self.audit_offset = self.plane.audit_log.stat().st_size

    def stats(self) -> dict[str, Any]:
        requests: Counter[str] = Counter()
        with self.plane.audit_log.open() as log:
            log.seek(self.audit_offset)
            for line in log:
                entry = json.loads(line)
                if entry.get("stage") != "ResponseComplete":
                    continue
                agent = str(entry.get("userAgent", "")).split(" ")[0].split("/")[0]
                uri = entry.get("requestURI", "")
                verb = "WATCH" if "watch=true" in uri else entry.get("verb", "").upper()
                requests[f"{agent} {verb} {_kind_of(uri)}"] += 1
                obj = entry.get("objectRef") or {}
                if obj.get("subresource") == "status" and obj.get("resource", "").endswith("resourcebindings"):
                    key = f"{obj.get('namespace') or ''}/{obj.get('name')}"
                    stamp = entry.get("stageTimestamp")
                    self.scheduled.setdefault(key, _wall_to_monotonic(stamp))
        times = list(self.scheduled.values())
        return {"scheduled": len(times), "first": min(times, default=None), "last": max(times, default=None),
                "requests": dict(requests)}

    def close(self) -> None:
        controlplane.stop(self.state)


def _wall_to_monotonic(stamp: str) -> float:
    from datetime import datetime

    wall = datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    return time.monotonic() - (time.time() - wall)


# ---- the scheduler process ------------------------------------------------------------------------------


@dataclass
class Trial:
    variant: str
    workers: int
    per_second: float
    first_decision: float
    requests_per_binding: float
    writes_per_binding: float
    peak_rss_mib: float
    cpu_ms_per_binding: float
    cpu_share: float
    server_cpu_share: float = math.nan
    settle: float = 0.0
    requests: dict[str, int] = field(default_factory=dict)


def write_config(folder: Path, workers: int, endpoints: dict[str, str], qps: float) -> Path:
    spec: dict[str, Any] = {
        "workers": workers,
        "kubeAPI": {"qps": qps, "burst": 1_000_000},
        "metrics": {"port": 0, "healthPort": 0},
    }
    if endpoints:
        spec["estimator"] = {"enabled": True, "timeout": "10s", "endpoints": endpoints}
    path = folder / f"config-{workers}.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "config.binding-scheduler.io/v1alpha1",
                                    "kind": "SchedulerConfiguration", "metadata": {"name": "bench"}, "spec": spec}))
    return path


def proc_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def proc_hwm_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def interpolate(samples: list[tuple[float, float]], at: float) -> float:
    before = [s for s in samples if s[0] <= at]
    after = [s for s in samples if s[0] >= at]
    if not before:
        return after[0][1]
    if not after:
        return before[-1][1]
    (t0, c0), (t1, c1) = before[-1], after[0]
    return c0 if t1 == t0 else c0 + (c1 - c0) * (at - t0) / (t1 - t0)


def run_trial(
    args: argparse.Namespace, variant: str, tree: Path, workers: int, endpoints: dict[str, str], folder: Path,
    profile: Path | None, window: Path | None = None,
) -> Trial:
    """One trial. `profile`: py-spy runs the scheduler, start to end (speedscope); `window`: py-spy attaches at
    the first decision and stops when the scheduler has settled, the window CPU per binding is measured over
    (py-spy's raw format, blocking samples, subprocesses included: benchmarks.profile reads it)."""
    host: Any = RealHost(folder) if args.real else DevclusterHost(args.server_cpu)
    try:
        if args.real:
            host.populate(args.clusters, args.bindings, args.seed, args.capacity)
            stats = host.stats
        else:
            host.ask(op="populate", clusters=args.clusters, bindings=args.bindings, seed=args.seed,
                     capacity=args.capacity)

            def stats() -> dict[str, Any]:
                return host.ask(op="stats")
        config = write_config(folder, workers, endpoints, args.qps)
        command = [sys.executable, "-m", "binding_scheduler.cli.main", "run", "--kubeconfig", str(host.kubeconfig),
                   "--namespace", "karmada-system", "--config-file", str(config)]
        if profile is not None:
            command = [args.py_spy, "record", "--format", "speedscope", "--rate", "200", "--nonblocking",
                       "-o", str(profile), "--", *command]
        env = {**os.environ, "PYTHONPATH": str(tree / "operator")}
        spawned = time.monotonic()
        log = (folder / f"scheduler-{variant.replace(' ', '_')}.log").open("w")
        proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=log, env=env, text=True)
        pid = _python_pid(proc) if profile is not None else proc.pid
        if args.scheduler_cpu is not None:
            os.sched_setaffinity(pid, {args.scheduler_cpu})
        samples: list[tuple[float, float]] = []
        server: list[tuple[float, float]] = []
        server_pid = host.proc.pid if not args.real else None
        deadline = spawned + args.timeout
        spy: subprocess.Popen[bytes] | None = None
        try:
            while True:
                if proc.poll() is not None:
                    raise SystemExit(f"the scheduler exited {proc.returncode}: {Path(log.name).read_text()[-3000:]}")
                with contextlib.suppress(OSError, IndexError):
                    samples.append((time.monotonic(), proc_cpu(pid)))
                    rss = proc_hwm_mib(pid)
                    if server_pid is not None:
                        server.append((time.monotonic(), proc_cpu(server_pid)))
                answer = stats()
                if window is not None and spy is None and answer["scheduled"] >= 1:
                    spy = _attach_py_spy(args.py_spy, pid, window)
                if answer["scheduled"] >= args.bindings:
                    break
                if time.monotonic() > deadline:
                    raise SystemExit(f"{variant}: only {answer['scheduled']} of {args.bindings} scheduled in time")
                time.sleep(0.05)
            # The work a pass leaves behind (its Events, posted beside the passes) is counted too: CPU and
            # requests are read once the scheduler has sent nothing for half a second.
            scheduled_answer, quiet_since, sent = answer, time.monotonic(), -1
            while time.monotonic() - quiet_since < 0.5 and time.monotonic() < deadline:
                answer = stats()
                total = sum(v for k, v in answer["requests"].items() if k.startswith("binding-scheduler")
                            and "leases" not in k)
                if total != sent:
                    sent, quiet_since = total, time.monotonic()
                time.sleep(0.1)
            settled = quiet_since
            if spy is not None:
                spy.send_signal(signal.SIGINT)
                spy.wait(120)
            samples.append((time.monotonic(), proc_cpu(pid)))
            if server_pid is not None:
                server.append((time.monotonic(), proc_cpu(server_pid)))
            rss = proc_hwm_mib(pid)
            answer = {**answer, "first": scheduled_answer["first"], "last": scheduled_answer["last"]}
        finally:
            if spy is not None and spy.poll() is None:
                spy.kill()
                spy.wait()
            proc.send_signal(signal.SIGINT if profile is not None else signal.SIGTERM)
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            log.close()
        first, last = answer["first"], answer["last"]
        elapsed = max(last - first, 1e-9)
        cpu = interpolate(samples, settled) - interpolate(samples, first)
        busy = max(settled - first, 1e-9)
        requests = {k: v for k, v in answer["requests"].items() if k.startswith(("binding-scheduler", "kopf"))}
        total = sum(requests.values())
        writes = sum(v for k, v in requests.items() if k.split(" ")[1] in ("PATCH", "POST", "PUT", "DELETE"))
        return Trial(
            variant=variant, workers=workers, per_second=(args.bindings - 1) / elapsed,
            first_decision=first - spawned, requests_per_binding=total / args.bindings,
            writes_per_binding=writes / args.bindings, peak_rss_mib=rss, cpu_ms_per_binding=cpu * 1000 / args.bindings,
            cpu_share=cpu / busy, requests=requests, settle=settled - last,
            server_cpu_share=(interpolate(server, settled) - interpolate(server, first)) / busy if server else math.nan,
        )
    finally:
        host.close()


def _attach_py_spy(py_spy: str, pid: int, output: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [py_spy, "record", "--pid", str(pid), "--format", "raw", "--function", "--full-filenames", "--subprocesses",
         "--rate", "250", "-o", str(output)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )


def _python_pid(proc: subprocess.Popen[str]) -> int:
    """py-spy starts the scheduler as its child: the pid to read /proc of."""
    for _ in range(200):
        children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children")
        with contextlib.suppress(OSError):
            pids = children.read_text().split()
            if pids:
                return int(pids[0])
        time.sleep(0.01)
    return proc.pid


def start_estimators(count: int, latency: float) -> tuple[list[subprocess.Popen[str]], dict[str, str]]:
    procs: list[subprocess.Popen[str]] = []
    endpoints: dict[str, str] = {}
    delay = ["--mode", "latency", "--latency", str(latency)] if latency else []
    for index in range(count):
        name = f"member-{index:05d}"
        proc = subprocess.Popen(
            [sys.executable, "-m", "binding_scheduler.cli.main", "estimator-stub", "--cluster", name,
             "--port", "0", "--replicas", "1000", *delay],
            stdout=subprocess.PIPE, text=True,
        )
        procs.append(proc)
    for index, proc in enumerate(procs):
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        if " serving on " not in line:
            raise SystemExit(f"estimator-stub did not start: {line!r}")
        endpoints[f"member-{index:05d}"] = line.rsplit(" ", 1)[1]
    return procs, endpoints


def top_frames(profile: Path, limit: int = 25) -> list[str]:
    """Self and total time per function from a speedscope profile (sampled)."""
    data = json.loads(profile.read_text())
    frames = data["shared"]["frames"]
    own: Counter[int] = Counter()
    total: Counter[int] = Counter()
    samples = 0
    for prof in data["profiles"]:
        for stack, weight in zip(prof["samples"], prof["weights"], strict=False):
            samples += weight
            if stack:
                own[stack[-1]] += weight
            for index in set(stack):
                total[index] += weight
    lines = []
    for index, weight in total.most_common(limit):
        frame = frames[index]
        where = f"{Path(frame.get('file', '?')).name}:{frame.get('line', '?')}"
        lines.append(f"{100 * weight / samples:5.1f}% total {100 * own[index] / samples:5.1f}% self  "
                     f"{frame['name']} ({where})")
    return lines


def parse_seconds(text: str) -> float:
    text = text.strip()
    if text.endswith("ms"):
        return float(text[:-2]) / 1000
    return float(text.rstrip("s"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clusters", type=int, default=100)
    parser.add_argument("--bindings", type=int, default=4000)
    parser.add_argument("--workers", default="1,8", help="comma-separated worker counts (default 1,8)")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--qps", type=float, default=1e6, help="spec.kubeAPI.qps (default 1e6, the maximum)")
    parser.add_argument("--estimators", default=None, metavar="LATENCY",
                        help="accurate estimators (one estimator-stub process per cluster) answering after LATENCY")
    parser.add_argument("--capacity", type=int, default=1, metavar="K",
                        help="each cluster's allocatable times K (1: 10 clusters are full after ~150 of the "
                             "bindings, and most passes then contend for the last room)")
    parser.add_argument("--estimator-clusters", type=int, default=None,
                        help="how many clusters get an estimator (default: all of them)")
    parser.add_argument("--tree", action="append", default=[], metavar="NAME=PATH",
                        help="a source tree to run the scheduler from (repeatable; default: this checkout)")
    parser.add_argument("--profile", type=Path, default=None, metavar="DIR",
                        help="py-spy profile of each variant's first trial into DIR")
    parser.add_argument("--py-spy", default=shutil.which("py-spy") or "py-spy")
    parser.add_argument("--pin", action="store_true", help="API server on CPU 0, scheduler on CPU 1")
    parser.add_argument("--real", action="store_true", help="the real control plane instead of devcluster")
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--json", type=Path, default=None, help="also write every trial as JSON here")
    parser.add_argument("--serve-devcluster", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_devcluster:
        asyncio.run(serve_devcluster())
        return
    cpus = sorted(os.sched_getaffinity(0))
    args.server_cpu = cpus[0] if args.pin and len(cpus) > 1 else None
    args.scheduler_cpu = cpus[1] if args.pin and len(cpus) > 1 else None
    trees = [(name, Path(path).resolve()) for name, _, path in (t.partition("=") for t in args.tree)] or [
        ("this", ROOT)]
    workers = [int(w) for w in args.workers.split(",")]
    variants = [(f"{name} w={w}" if len(trees) > 1 else f"w={w}", tree, w) for name, tree in trees for w in workers]
    estimators: list[subprocess.Popen[str]] = []
    endpoints: dict[str, str] = {}
    if args.estimators:
        estimators, endpoints = start_estimators(args.estimator_clusters or args.clusters,
                                                 parse_seconds(args.estimators))
    if args.profile is not None:
        args.profile.mkdir(parents=True, exist_ok=True)
    print(f"{args.clusters} clusters, {args.bindings} bindings, qps {args.qps:g}"
          + (f", estimators answering after {args.estimators} for {len(endpoints)} clusters" if endpoints else "")
          + (", pinned" if args.pin else "") + (", real control plane" if args.real else ", devcluster"), flush=True)
    header = (f"{'variant':<16} {'bindings/s':>10} {'first (s)':>9} {'req/b':>6} {'writes/b':>8} {'RSS MiB':>8} "
              f"{'CPU ms/b':>8} {'CPU %':>6} {'API CPU %':>9} {'settle':>6}")
    print(header, flush=True)
    trials: list[Trial] = []
    try:
        with tempfile.TemporaryDirectory(prefix="e2e-") as tmp:
            for round_ in range(args.rounds):
                for name, tree, count in variants:
                    profile = None
                    if args.profile is not None and round_ == 0:
                        profile = args.profile / f"{name.replace(' ', '_').replace('=', '')}.speedscope.json"
                    trial = run_trial(args, name, tree, count, endpoints, Path(tmp), profile)
                    trials.append(trial)
                    print(f"{name:<16} {trial.per_second:>10,.0f} {trial.first_decision:>9.2f} "
                          f"{trial.requests_per_binding:>6.2f} {trial.writes_per_binding:>8.2f} "
                          f"{trial.peak_rss_mib:>8.0f} {trial.cpu_ms_per_binding:>8.2f} "
                          f"{100 * trial.cpu_share:>5.0f}% {100 * trial.server_cpu_share:>8.0f}% {trial.settle:>6.1f}",
                          flush=True)
                    if profile is not None and profile.exists():
                        (profile.with_suffix(".top.txt")).write_text("\n".join(top_frames(profile, 60)) + "\n")
    finally:
        for proc in estimators:
            proc.send_signal(signal.SIGTERM)
        for proc in estimators:
            proc.wait(20)
    print("\nmedians:")
    medians: dict[str, float] = {}
    for name, _, _ in variants:
        rates = [t.per_second for t in trials if t.variant == name]
        medians[name] = statistics.median(rates)
        print(f"  {name:<16} {medians[name]:>8,.0f} bindings/s  (runs: {', '.join(f'{r:,.0f}' for r in rates)})")
    for name, _ in trees:
        prefix = f"{name} " if len(trees) > 1 else ""
        low, high = f"{prefix}w={workers[0]}", f"{prefix}w={workers[-1]}"
        if len(workers) > 1:
            print(f"  {prefix}ratio w={workers[-1]} / w={workers[0]}: {medians[high] / medians[low]:.2f}")
    if len(trees) > 1:
        base = trees[0][0]
        for name, _ in trees[1:]:
            for w in workers:
                print(f"  ratio {name} / {base} at w={w}: {medians[f'{name} w={w}'] / medians[f'{base} w={w}']:.2f}")
    print("\nrequests of the last trial by agent, verb and resource:")
    for key, value in sorted(trials[-1].requests.items()):
        print(f"  {key:<60} {value:>8}")
    if args.json is not None:
        args.json.write_text(json.dumps([t.__dict__ for t in trials], indent=1))


if __name__ == "__main__":
    main()

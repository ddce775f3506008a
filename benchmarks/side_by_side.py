"""Speed side by side: Karmada's own karmada-scheduler v1.18.2 and `binding-scheduler run` on one real control plane.

    .venv/bin/python -m benchmarks.side_by_side [--sizes 100,1000] [--bindings 2000] [--qps default,unlimited]
        [--rounds 1] [--seed 1] [--tree PATH] [--quiet 3] [--timeout 1800] [--json FILE] [--keep DIR] [--py-spy]
        [--schedulers karmada,ours] [--ours-workers 1] [--ours-decision-processes N]

One real control plane (testsupport/realcluster: etcd + kube-apiserver built from their Go modules, with an audit log)
serves the whole run. For each size, a fleet of that many Clusters (testsupport/realcluster/side_by_side.py's generator:
regions, zones, providers, labels, taints, API enablements, resource summaries and models; shared by both
schedulers) and `--bindings` bindings of mixed kinds (the same generator's kinds: Duplicated, static weights by
name and by label, dynamic and aggregated division, spread by cluster and by region, clusterAffinities with
fallback terms, tolerations, evictions, scale up and down, components, ClusterResourceBindings, and a few
unschedulable ones; not its `steady` kinds, which need no decision and end without a condition in Karmada).

Then, per QPS setting and round, interleaved (Karmada, ours, Karmada, ours, ...), each measurement:
1. creates a fresh copy of the bindings: its own namespace, `spec.schedulerName` and ClusterResourceBinding name
   prefix (namespaces are never reused: without kube-controller-manager a deleted one stays Terminating);
2. starts the scheduler (its own Lease, metrics and health ports, no estimator, `--kube-api-qps/--kube-api-burst`
   as the setting says): karmada-scheduler with the admin's kubeconfig, ours as its ServiceAccount (from
   `--tree`'s operator/ folder: a clean `git worktree` keeps a half-edited checkout out of the numbers);
3. follows the audit log until every binding of the copy has a Scheduled condition for its generation (checked
   by listing the copy once every binding had a status write) and nothing more was written for `--quiet` s;
4. reads the scheduler's peak RSS (VmHWM) and CPU time from /proc, stops it, keeps its copy's outcomes, and
   deletes the copy (deletecollection).

Measured, from the audit log (requests told apart by user and user agent: ours is its ServiceAccount, Karmada's
is the admin with user agent karmada-scheduler/...):
- decisions/s from the first to the last decision: a binding's decision is the scheduler's first status write
  that sets its Scheduled condition (after its spec write, if any), at the server's requestReceivedTimestamp;
  (N - 1) / (last - first);
- the time from the spawn to the first decision (process start, Lease, informers' lists), and to the last
  write to any binding, when every binding has settled (Karmada records the generation its own spec write made
  only in a second pass over the binding, queued behind every other: a status write of its own);
- API writes per binding: everything the scheduler wrote while it ran (bindings, their status, Events, its
  Lease), also by resource;
- peak RSS (VmHWM from /proc/PID/status just before the stop) and CPU ms per binding (utime + stime).

The two copies of each (size, setting, round) are compared as testsupport/realcluster/side_by_side.py does
(spec.clusters, the Scheduled condition's status, reason and message, schedulerObservingAffinityName);
differences are counted by kind and printed.

Settings: `default` is Karmada's defaults, qps 40 / burst 60, for both; `unlimited` is qps 100000 / burst 100000
for both (ours accepts qps up to 1e6 and refuses 0 or less; client-go would take a negative qps as "no limiter",
but ours would not, so a very high limit is the common ground). The machine is shared: read the ratios of one
run, not the absolute numbers. With `--py-spy`, py-spy (on PATH or beside the interpreter: `.venv/bin/pip install
py-spy`) samples our process during each of its
measurements into `--keep` (it takes CPU from the schedulers: not for the recorded table).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import datetime
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from benchmarks import ROOT
from testsupport.realcluster.controlplane import (
    ControlPlane,
    ControlPlaneError,
    process_ids,
    start,
    stop,
)
from testsupport.realcluster.karmada import Process, karmada_scheduler
from testsupport.realcluster.kube import KubeClient, path_of
from testsupport.realcluster.side_by_side import (
    Copy,
    Generated,
    compare,
    generate_bindings,
    generate_clusters,
    our_scheduler,
    read_copy,
    settled,
    wait_leading,
)

SETTINGS: dict[str, tuple[float, int]] = {"default": (40, 60), "unlimited": (100_000, 100_000)}
SKIPPED_KINDS = ("steady", "steady-stale")  # no decision to make: Karmada records only the generation
COPY_LABEL = "benchmark.binding-scheduler.io/copy"
FLEET_LABEL = "benchmark.binding-scheduler.io/fleet"
BINDING_RESOURCES = ("resourcebindings", "clusterresourcebindings")
SCHEDULERS = ("karmada", "ours")


# -- the audit log, followed --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Write:
    user: str
    agent: str
    verb: str
    resource: str  # resource[/subresource]
    namespace: str
    name: str
    received: float  # seconds since the epoch (the server's requestReceivedTimestamp)
    code: int
    scheduled: bool  # the request body sets a Scheduled condition


class AuditTail:
    """The audit log followed from where `skip_to_end` left it, complete lines only; only writes are kept.

    kube-apiserver rotates the log at 100 MB (`--audit-log-maxsize 0` is lumberjack's default size): the old
    file is renamed and a new one started. An open handle still reads the rest of the renamed file; then the new
    one is read from its start."""

    WRITES = frozenset({"create", "update", "patch", "delete", "deletecollection"})

    def __init__(self, path: Path) -> None:
        self.path = path
        self.file: BinaryIO | None = None
        self.partial = b""

    def skip_to_end(self) -> None:
        if self.file is not None:
            self.file.close()
        self.file = self.path.open("rb")
        self.file.seek(0, os.SEEK_END)
        self.partial = b""

    def _rotated(self) -> bool:
        assert self.file is not None
        try:
            return os.stat(self.path).st_ino != os.fstat(self.file.fileno()).st_ino
        except FileNotFoundError:  # between the rename and the new file
            return False

    def read(self) -> Iterator[Write]:
        assert self.file is not None, "skip_to_end first"
        data = self.partial + self.file.read()
        while self._rotated():
            data += self.file.read()  # what was written before the rename
            self.file.close()
            self.file = self.path.open("rb")
            data += self.file.read()
        lines = data.split(b"\n")
        self.partial = lines.pop()
        for line in lines:
            if not line.strip():
                continue
            event = json.loads(line)
            if event.get("stage") != "ResponseComplete" or event.get("verb") not in self.WRITES:
                continue
            ref = event.get("objectRef") or {}
            resource = ref.get("resource", "") + (f"/{ref['subresource']}" if ref.get("subresource") else "")
            yield Write(
                user=(event.get("user") or {}).get("username", ""),
                agent=str(event.get("userAgent", "")),
                verb=event["verb"],
                resource=resource,
                namespace=ref.get("namespace", ""),
                name=ref.get("name", ""),
                received=_seconds(event["requestReceivedTimestamp"]),
                code=int((event.get("responseStatus") or {}).get("code", 0)),
                scheduled='"Scheduled"' in json.dumps(event.get("requestObject")),
            )


def _seconds(stamp: str) -> float:
    return datetime.datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


# -- one measurement ----------------------------------------------------------------------------------------


@dataclass
class Measurement:
    size: int
    setting: str
    scheduler: str
    round: int
    bindings: int
    per_second: float  # decisions/s, from the first to the last
    startup: float  # spawn -> first decision, s
    span: float  # first -> last decision, s
    settled: float  # spawn -> the last write to a binding (every binding settled), s
    writes: int
    writes_by_resource: dict[str, int]  # "verb resource[/subresource]" -> count
    conflicts: int  # writes answered 409
    peak_rss_mib: float
    cpu_seconds: float
    plane_cpu_seconds: float = float("nan")  # kube-apiserver + etcd, spawn to stop
    unsettled: list[str] = field(default_factory=list)
    exited: str = ""  # the scheduler ended by itself: how

    @property
    def writes_per_binding(self) -> float:
        return self.writes / self.bindings

    @property
    def cpu_ms_per_binding(self) -> float:
        return 1000 * self.cpu_seconds / self.bindings

    @property
    def plane_cpu_ms_per_binding(self) -> float:
        return 1000 * self.plane_cpu_seconds / self.bindings


def proc_status_kib(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{key}:"):
            return int(line.split()[1])
    return 0


def proc_cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def create_all(kube: KubeClient, documents: Sequence[Mapping[str, Any]], threads: int = 6) -> None:
    with concurrent.futures.ThreadPoolExecutor(threads) as pool:
        for _ in pool.map(kube.create, documents):
            pass


class Bench:
    def __init__(self, plane: ControlPlane, args: argparse.Namespace, workdir: Path) -> None:
        self.plane = plane
        self.kube = plane.admin()
        self.args = args
        self.workdir = workdir
        self.audit = AuditTail(plane.audit_log)
        self.run_tag = uuid.uuid4().hex[:4]
        self.count = 0

    def is_ours(self, scheduler: str, write: Write) -> bool:
        if scheduler == "ours":
            return write.user == self.plane.operator_user
        return write.user == "admin" and write.agent.startswith("karmada-scheduler")

    def _our_config(self, tag: str) -> tuple[str, ...]:
        """`--config-file` setting `workers` when `--ours-workers` asks for more than Karmada's one worker, and
        `decisionProcesses` (`--ours-decision-processes`); the flags set every other field, as they do Karmada's."""
        if self.args.ours_workers == 1 and not self.args.ours_decision_processes:
            return ()
        spec: dict[str, int] = {"workers": self.args.ours_workers}
        if self.args.ours_decision_processes:
            spec["decisionProcesses"] = self.args.ours_decision_processes
        path = self.workdir / f"{tag}-ours-config.json"
        path.write_text(json.dumps({
            "apiVersion": "config.binding-scheduler.io/v1alpha1", "kind": "SchedulerConfiguration",
            "metadata": {"name": "side-by-side"}, "spec": spec}))
        return (f"--config-file={path}",)

    def measure(self, scheduler: str, size: int, setting: str, round_: int,
                generated: Sequence[Generated]) -> tuple[Measurement, Copy, dict[str, Any]]:
        self.count += 1
        tag = f"{self.run_tag}{self.count:02d}"
        copy = Copy(f"bench-{scheduler}-{tag}", f"bench-{tag}-{scheduler}", f"{scheduler[0]}{tag}")
        self.kube.ensure_namespace(copy.namespace)
        documents = []
        for g in generated:
            document = copy.document(g)
            document["metadata"]["labels"][COPY_LABEL] = tag
            documents.append(document)
        started = time.monotonic()
        create_all(self.kube, documents)
        print(f"  [{scheduler} {size} clusters {setting} round {round_}] {len(documents)} bindings created in "
              f"{time.monotonic() - started:.1f}s", flush=True)
        names = {self._key(copy, g): g.name for g in generated}
        qps, burst = SETTINGS[setting]
        flags = (f"--kube-api-qps={qps:g}", f"--kube-api-burst={burst}")
        log = self.workdir / f"{tag}-{scheduler}.log"
        self.audit.skip_to_end()
        plane_before = self._plane_cpu()
        spawned = time.time()
        if scheduler == "karmada":
            process = karmada_scheduler(self.plane, copy.scheduler_name, log, *flags)
        else:
            process = our_scheduler(self.plane, copy.scheduler_name, log, *flags, *self._our_config(tag),
                                    tree=self.args.tree)
        profiler = self._profile(process, tag) if scheduler == "ours" and self.args.py_spy else None
        last_write: dict[str, float] = {}
        decided: dict[str, float] = {}
        status_written: set[str] = set()
        by_resource: Counter[str] = Counter()
        conflicts = 0
        done_at: float | None = None
        last_change = time.monotonic()
        deadline = time.monotonic() + self.args.timeout
        unsettled: list[str] = []
        exited = ""
        next_check = 0.0
        peak = cpu = float("nan")
        try:
            wait_leading(self.kube, process, copy.scheduler_name, timeout=120)
            while True:
                changed = False
                for write in self.audit.read():
                    if not self.is_ours(scheduler, write):
                        continue
                    by_resource[f"{write.verb} {write.resource}"] += 1
                    conflicts += write.code == 409
                    base = write.resource.split("/")[0]
                    if base in BINDING_RESOURCES:
                        key = f"{write.namespace}/{write.name}"
                        if key in names:
                            last_write[key] = write.received
                            changed = True
                            if write.resource.endswith("/status"):
                                status_written.add(key)
                                if write.scheduled and write.code < 300:
                                    decided.setdefault(key, write.received)
                with contextlib.suppress(OSError, ValueError, IndexError):  # kept from the last read if it ended
                    peak = proc_status_kib(process.popen.pid, "VmHWM") / 1024
                    cpu = proc_cpu_seconds(process.popen.pid)
                now = time.monotonic()
                if changed:
                    last_change = now
                    done_at = None
                if not process.alive():
                    lines = process.output(2000).strip().splitlines()
                    exited = f"exited {process.popen.returncode}: {lines[-1] if lines else ''}"
                    print(f"  {scheduler} {exited}", flush=True)
                    break
                quiet_for = now - last_change
                if (done_at is None and now >= next_check
                        and (len(status_written) == len(names) or (last_write and quiet_for > 5))):
                    states = read_copy(self.kube, copy, generated)  # 2,000 bindings: not more than every 3 s
                    unsettled = [n for n, b in states.items() if b is None or not settled(b)]
                    next_check = time.monotonic() + 3
                    if not unsettled:
                        done_at = now
                if done_at is not None and now - done_at >= self.args.quiet and quiet_for >= self.args.quiet:
                    break
                if now > deadline:
                    print(f"  timeout: {len(unsettled)} bindings not settled", flush=True)
                    break
                time.sleep(0.5)
        finally:
            if profiler is not None:
                profiler.send_signal(signal.SIGINT)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    profiler.wait(30)
            stopped = time.time()
            plane_cpu = self._plane_cpu() - plane_before
            process.stop()
        for write in self.audit.read():  # what was written before the stop, and nothing after it
            if self.is_ours(scheduler, write) and write.received < stopped:
                by_resource[f"{write.verb} {write.resource}"] += 1
                conflicts += write.code == 409
        states = read_copy(self.kube, copy, generated)
        self._delete(copy, tag)
        times = sorted(decided.values())
        first, last = (times[0], times[-1]) if times else (spawned, spawned)
        n = len(generated)
        measurement = Measurement(
            size=size, setting=setting, scheduler=scheduler, round=round_, bindings=n,
            per_second=(len(times) - 1) / (last - first) if last > first else float("nan"),
            startup=first - spawned, span=last - first, settled=max(last_write.values(), default=spawned) - spawned,
            writes=sum(by_resource.values()),
            writes_by_resource=dict(by_resource), conflicts=conflicts, peak_rss_mib=peak, cpu_seconds=cpu,
            plane_cpu_seconds=plane_cpu, unsettled=unsettled, exited=exited,
        )
        if len(times) < n:
            measurement.unsettled = sorted(set(names.values()) - {names[k] for k in decided}) or unsettled
        return measurement, copy, states

    def _key(self, copy: Copy, g: Generated) -> str:
        return f"{copy.namespace if g.kind == 'ResourceBinding' else ''}/{copy.name_of(g)}"

    def _plane_cpu(self) -> float:
        """CPU seconds used so far by the control plane's kube-apiserver and etcd (NaN where unreadable)."""
        try:
            return sum(proc_cpu_seconds(pid) for name, pid in process_ids(self.plane.state).items()
                       if name in ("etcd", "kube-apiserver"))
        except (OSError, ValueError, IndexError):
            return float("nan")

    def _profile(self, process: Process, tag: str) -> subprocess.Popen[bytes] | None:
        py_spy = shutil.which("py-spy") or shutil.which("py-spy", path=str(Path(sys.executable).parent))
        if py_spy is None:
            print("  --py-spy: py-spy is not on PATH", flush=True)
            return None
        out = self.workdir / f"{tag}-ours.pyspy.txt"
        return subprocess.Popen([py_spy, "record", "--pid", str(process.popen.pid), "--format", "raw",
                                 "--output", str(out), "--rate", "50", "--nonblocking"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def _delete(self, copy: Copy, tag: str) -> None:
        for path in (path_of("ResourceBinding", namespace=copy.namespace),
                     path_of("ClusterResourceBinding") + f"?labelSelector={COPY_LABEL}%3D{tag}",
                     path_of("Event", namespace=copy.namespace)):
            status, answer = self.kube.request("DELETE", path, timeout=300)
            assert 200 <= status < 300, f"DELETE {path}: {status} {answer}"
        self.kube.delete("Namespace", copy.namespace)


# -- the run ------------------------------------------------------------------------------------------------


def bench_bindings(rng: random.Random, fleet: Sequence[Mapping[str, Any]], count: int) -> list[Generated]:
    """`count` bindings of scripts/side_by_side.py's kinds but the skipped ones."""
    generated = [g for g in generate_bindings(rng, fleet, count * 2)
                 if g.name.rsplit("-", 1)[0] not in SKIPPED_KINDS]
    return generated[:count]


def kind_of(name: str) -> str:
    return name.rsplit("-", 1)[0]


def summarize_differences(generated: Sequence[Generated], karmada: tuple[Copy, Mapping[str, Any]],
                          ours: tuple[Copy, Mapping[str, Any]]) -> tuple[int, Counter[str], list[str]]:
    identical, differences = compare(generated, karmada, ours)
    counts: Counter[str] = Counter()
    examples: list[str] = []
    seen: set[str] = set()
    for d in differences:
        label = f"{kind_of(d.name)}: {'+'.join(d.fields)}"
        counts[label] += 1
        if label not in seen:
            seen.add(label)
            examples.append(d.render())
    return len(identical), counts, examples


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def render(measurements: Sequence[Measurement], bindings: int) -> str:
    lines = [
        "| clusters | QPS/burst | scheduler | decisions/s | first decision after | all settled after | writes/binding "
        "(bindings, status, events, lease) | peak RSS MiB | CPU ms/binding | API server + etcd CPU ms/binding |",
        "|---:|---|---|---:|---:|---:|---|---:|---:|---:|",
    ]
    ratios = [
        "| clusters | QPS/burst | decisions/s ours/Karmada | all settled after ours/Karmada | writes/binding "
        "ours/Karmada | peak RSS ours/Karmada | CPU/binding ours/Karmada |",
        "|---:|---|---:|---:|---:|---:|---:|",
    ]
    groups: dict[tuple[int, str], dict[str, list[Measurement]]] = {}
    for m in measurements:
        groups.setdefault((m.size, m.setting), {}).setdefault(m.scheduler, []).append(m)
    for (size, setting), by_scheduler in groups.items():
        qps, burst = SETTINGS[setting]
        label = f"{qps:g}/{burst}"
        row: dict[str, dict[str, float]] = {}
        for scheduler in SCHEDULERS:
            ms = by_scheduler.get(scheduler, [])
            if not ms:
                continue

            def share(wanted: set[str], ms: Sequence[Measurement] = ms) -> float:
                return median([sum(v for k, v in m.writes_by_resource.items() if k.split(" ")[-1] in wanted)
                               / m.bindings
                               for m in ms])

            spec = share(set(BINDING_RESOURCES))
            status = share({f"{r}/status" for r in BINDING_RESOURCES})
            events, leases = share({"events"}), share({"leases"})
            values = {
                "rate": median([m.per_second for m in ms]),
                "startup": median([m.startup for m in ms]),
                "settled": median([m.settled for m in ms]),
                "writes": median([m.writes_per_binding for m in ms]),
                "rss": median([m.peak_rss_mib for m in ms]),
                "cpu": median([m.cpu_ms_per_binding for m in ms]),
                "plane": median([m.plane_cpu_ms_per_binding for m in ms]),
            }
            row[scheduler] = values
            rates = [m.per_second for m in ms]
            spread = "" if len(ms) == 1 else f" ({min(rates):,.1f}–{max(rates):,.1f})"
            unsettled = sum(len(m.unsettled) for m in ms)
            exits = "; ".join(f"{m.exited} after {m.settled:.0f} s" for m in ms if m.exited)
            lines.append(
                f"| {size:,} | {label} | {'Karmada' if scheduler == 'karmada' else 'ours'} | "
                f"{values['rate']:,.1f}{spread} | {values['startup']:.1f} s | {values['settled']:.0f} s | "
                f"{values['writes']:.2f} "
                f"({spec:.2f}, {status:.2f}, {events:.2f}, {leases:.3f}) | {values['rss']:,.0f} | "
                f"{values['cpu']:.2f} | {values['plane']:.2f} |" + (f" NOT SETTLED: {unsettled}" if unsettled else "")
                + (f" EXITED: {exits}" if exits else "")
            )
        if len(row) == 2:
            k, o = row["karmada"], row["ours"]
            ratios.append(f"| {size:,} | {label} | {o['rate'] / k['rate']:.2f} | {o['settled'] / k['settled']:.2f} | "
                          f"{o['writes'] / k['writes']:.2f} | "
                          f"{o['rss'] / k['rss']:.2f} | {o['cpu'] / k['cpu']:.2f} |")
    return "\n".join([f"{bindings:,} bindings per copy; medians over rounds (range of decisions/s in brackets)", "",
                      *lines, "", *ratios])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="100,1000", help="fleet sizes (clusters), comma-separated")
    parser.add_argument("--bindings", type=int, default=2000)
    parser.add_argument("--ours-workers", type=int, default=1,
                        help="our scheduler's `workers` (default 1, as Karmada's one worker)")
    parser.add_argument("--ours-decision-processes", type=int, default=0, metavar="N",
                        help="our scheduler's decisionProcesses (default 0: decisions in its own process)")
    parser.add_argument("--qps", default="default,unlimited", help=f"settings among {', '.join(SETTINGS)}")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--tree", type=Path, default=ROOT, help="source tree whose operator/ our scheduler runs from")
    parser.add_argument("--quiet", type=float, default=3.0, help="seconds without a write after the last decision")
    parser.add_argument("--timeout", type=float, default=1800.0, help="per measurement, seconds")
    parser.add_argument("--json", type=Path, help="also write every measurement to this file")
    parser.add_argument("--keep", type=Path, help="keep the schedulers' logs (and py-spy's output) here")
    parser.add_argument("--py-spy", action="store_true", help="sample our process with py-spy (skews timings)")
    parser.add_argument("--schedulers", default=",".join(SCHEDULERS),
                        help="which to run (both by default; one alone, e.g. to profile ours, compares nothing)")
    args = parser.parse_args(argv)
    for number in (signal.SIGINT, signal.SIGTERM):  # also when started in the background (SIGINT ignored)
        signal.signal(number, signal.default_int_handler)
    args.tree = args.tree.resolve()
    sizes = [int(s) for s in args.sizes.split(",")]
    settings = args.qps.split(",")
    schedulers = [s for s in SCHEDULERS if s in args.schedulers.split(",")]
    if not schedulers or set(args.schedulers.split(",")) - set(SCHEDULERS):
        parser.error(f"--schedulers: among {', '.join(SCHEDULERS)}")
    unknown = [s for s in settings if s not in SETTINGS]
    if unknown:
        parser.error(f"--qps: unknown setting {', '.join(unknown)} (known: {', '.join(SETTINGS)})")
    commit = subprocess.run(["git", "-C", str(args.tree), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, check=False).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(args.tree), "status", "--porcelain", "--", "operator"],
                           capture_output=True, text=True, check=False).stdout.strip()
    print(f"side by side: sizes {sizes}, {args.bindings} bindings, settings {settings}, {args.rounds} round(s); "
          f"ours from {args.tree} at {commit}{' (operator/ modified)' if dirty else ''}; load average "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}", flush=True)
    all_started = time.monotonic()
    measurements: list[Measurement] = []
    with tempfile.TemporaryDirectory(prefix="bench-side-by-side-") as temporary:
        workdir = args.keep or Path(temporary)
        workdir.mkdir(parents=True, exist_ok=True)
        state = Path(temporary) / "controlplane"
        try:
            plane = start(state, tie_to_parent=True)
        except ControlPlaneError as error:
            print(f"side by side: the control plane did not start: {error}", file=sys.stderr)
            return 2
        try:
            bench = Bench(plane, args, workdir)
            for size in sizes:
                rng = random.Random(args.seed)
                fleet_name = f"f{bench.run_tag}-{size}"
                fleet = generate_clusters(rng, fleet_name, size)
                for cluster in fleet:
                    cluster["metadata"]["labels"][FLEET_LABEL] = fleet_name
                generated = bench_bindings(rng, fleet, args.bindings)
                started = time.monotonic()
                create_all(bench.kube, fleet)
                print(f"{size} clusters created in {time.monotonic() - started:.1f}s", flush=True)
                for round_ in range(1, args.rounds + 1):
                    for setting in settings:
                        pair: dict[str, tuple[Copy, dict[str, Any]]] = {}
                        for scheduler in schedulers:
                            started = time.monotonic()
                            m, copy, states = bench.measure(scheduler, size, setting, round_, generated)
                            measurements.append(m)
                            pair[scheduler] = (copy, states)
                            print(f"  {scheduler:<7} {size:>5} clusters {setting:<9} round {round_}: "
                                  f"{m.per_second:8.1f} decisions/s, first after {m.startup:.1f}s, all settled "
                                  f"after {m.settled:.0f}s, "
                                  f"{m.writes_per_binding:.2f} writes/binding "
                                  f"{dict(sorted(m.writes_by_resource.items()))}"
                                  f"{f', {m.conflicts} conflicts' if m.conflicts else ''}, "
                                  f"peak RSS {m.peak_rss_mib:.0f} MiB, CPU {m.cpu_ms_per_binding:.2f} ms/binding "
                                  f"({time.monotonic() - started:.0f}s in all)"
                                  + (f"; NOT SETTLED: {len(m.unsettled)}, {m.unsettled[:5]}" if m.unsettled else "")
                                  + (f"; EXITED: {m.exited}" if m.exited else ""), flush=True)
                        if len(pair) < 2:
                            continue
                        same, counts, examples = summarize_differences(generated, pair["karmada"], pair["ours"])
                        print(f"  decisions: {same} of {len(generated)} identical"
                              + "".join(f"\n    {n} x {label}" for label, n in counts.most_common()), flush=True)
                        for example in examples[:5]:
                            print("    " + example.replace("\n", "\n    "), flush=True)
                status, answer = bench.kube.request(
                    "DELETE", path_of("Cluster") + f"?labelSelector={FLEET_LABEL}%3D{fleet_name}", timeout=300)
                assert 200 <= status < 300, f"deleting the fleet: {status} {answer}"
        finally:
            if args.keep:
                shutil.copy(state / "audit.log", workdir / "audit.log")
            stop(state)
    print()
    print(render(measurements, args.bindings))
    print(f"\nwhole run: {time.monotonic() - all_started:.0f}s")
    if args.json:
        args.json.write_text(json.dumps([{**asdict(m), "writes_per_binding": m.writes_per_binding}
                                         for m in measurements], indent=1))
    return 0 if not any(m.unsettled for m in measurements) else 1


if __name__ == "__main__":
    sys.exit(main())

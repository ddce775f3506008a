"""Where a binding's CPU goes, end to end: the operator's and `simulate`'s shares, from sampled stacks.

    .venv/bin/python -m benchmarks.profile [--clusters 100,1000] [--bindings 3000] [--workers 8]
        [--estimators 20ms --capacity K] [--simulate 1000x1000] [--detail N] [--keep DIR]

Operator: one `benchmarks.e2e` trial per size (devcluster in its own process, no client-side limit). py-spy (an
optional tool: `pip install py-spy`) attaches to the scheduler at its first decision and stops when it has
settled, the window e2e measures CPU per binding over, sampling at 250 Hz with the process paused for each
sample (exact stacks; subprocesses included). Each sample goes to one share of the table below, the first whose
frames it holds, in the table's order; ms a binding is the share of the trial's measured CPU per binding.

`simulate`: `binding-scheduler simulate -f FLEET -o json` over a generated fleet (e2e's clusters and binding
mix, one kubectl-style JSON list) under py-spy from its start, the whole run.

Shares count where the interpreter was, not what waits: a pass waiting on the API server costs nothing here.
The bytes a socket reads in its protocol callback cannot be told apart by request: they are their own share.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from benchmarks import ROOT, e2e

Frame = tuple[str, str]
"""(function, path) with the path made relative to `binding_scheduler/`, `site-packages/` or the stdlib."""


def _has(stack: Sequence[Frame], *, path: tuple[str, ...] = (), name: tuple[str, ...] = ()) -> bool:
    """Whether a frame of the stack is in a file under `path` or in a function whose name starts with `name`."""
    return any((path and p.startswith(path)) or (name and n.startswith(name)) for n, p in stack)


def _decision(stack: Sequence[Frame]) -> bool:
    return _has(stack, name=("Framework.decide", "Framework.attempt", "PassSettings.decide")) or _has(
        stack, path=("algorithm/",))


OPERATOR_SHARES: list[tuple[str, Callable[[Sequence[Frame]], bool]]] = [
    ("logging", lambda s: _has(s, path=("logging/", "cli/logs.py", "scheduling/passes/decision_log.py"))),
    ("metrics (prometheus_client, our observers)",
     lambda s: _has(s, path=("prometheus_client/", "scheduling/observability/"))),
    ("Events: messages, correlator, encoding and HTTP",
     lambda s: _has(s, path=("scheduling/passes/events.py", "kube/events.py", "algorithm/events.py"))),
    ("watch: Kopf's stream, event decoding", lambda s: _has(s, path=("kopf/_cogs/clients/",))
     and not _has(s, name=("_deliver",))),
    ("intake: routing, the stores, parsing a binding",
     lambda s: _has(s, name=("_deliver", "Scheduler.on_binding", "Scheduler.on_cluster"))
     or _has(s, path=("scheduling/state/stores.py",))),
    ("accurate estimators: requests, gRPC, answers",
     lambda s: _has(s, path=("estimation/", "grpc/", "grpc_aio", "google/protobuf/"))),
    ("Reserve and assumptions", lambda s: _has(s, name=("Framework.reserve",)) or _has(
        s, path=("scheduling/reserve/",)) or (_has(s, path=("scheduling/state/assum",)) and not _decision(s))),
    ("status and spec: building the patches", lambda s: (_has(
        s, path=("model/conditions.py", "algorithm/status.py", "kube/bindings.py"), name=("_write_spec.<locals>",))
        and not _has(s, path=("kube/client.py",)))),
    ("the decision (filter, score, estimate, select, divide)", _decision),
    ("spec and status writes: encoding and HTTP", lambda s: _has(s, path=("kube/client.py", "kube/bindings.py"))),
    ("socket reads and request bodies (any request)", lambda s: _has(
        s, path=("aiohttp/", "asyncio/selector_events.py", "asyncio/sslproto.py", "ssl.py"))),
    ("Kopf's part (watchers, queueing, tasks)", lambda s: _has(s, path=("kopf/",))),
    ("queue and pass machinery", lambda s: _has(s, path=("scheduling/",))),
    ("event loop, threads, the rest", lambda s: True),
]

SIMULATE_SHARES: list[tuple[str, Callable[[Sequence[Frame]], bool]]] = [
    ("interpreter start and imports", lambda s: _has(s, name=("_find_and_load", "_call_with_frames_removed"))),
    ("parsing bindings and clusters into the model", lambda s: _has(s, path=("model/",)) and not _decision(s)),
    ("reading the input: JSON/YAML, unknown fields", lambda s: _has(
        s, path=("cli/inputs.py", "kube/jsonio.py", "yaml/")) and not _has(s, name=("dumps",))),
    ("the decision", _decision),
    ("writing the output", lambda s: _has(s, path=("cli/simulate.py", "cli/explain.py", "kube/jsonio.py",
                                                  "json/"))),
    ("the rest", lambda s: True),
]

Stacks = list[tuple[list[Frame], int]]
"""Distinct stacks (root first) and how many samples each was."""

_FRAME = re.compile(r"(.*) \((.*):\d+\)$")
_ROOTS = ("binding_scheduler/", "site-packages/", "lib/python3.11/", "lib/python3.12/", "lib/python3.13/")


def _frame(text: str) -> Frame:
    match = _FRAME.match(text)
    if match is None:
        return text, ""
    name, path = match.groups()
    for root in _ROOTS:
        if root in path:
            return name, path.split(root, 1)[1]
    return name, path


WAITS = {("_worker", "concurrent/futures/thread.py"), ("Condition.wait", "threading.py"),
         ("Event.wait", "threading.py")}
"""Where a thread blocks on a lock, which py-spy does not always see as idle: not CPU, dropped."""


def read_raw(path: Path) -> Stacks:
    """py-spy's raw format: one `frame;frame;... count` line per distinct stack, root first (waits dropped)."""
    stacks = []
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        frames = stack.split(";")
        if frames and frames[0].startswith(("process ", "thread ")):
            frames = frames[1:]
        parsed = [_frame(f) for f in frames]
        if parsed and parsed[-1] not in WAITS:
            stacks.append((parsed, int(count)))
    return stacks


def classify(stacks: Stacks, rules: list[tuple[str, Callable[[Sequence[Frame]], bool]]]) -> dict[str, Stacks]:
    """The stacks of each share: the first rule a stack satisfies."""
    found: dict[str, Stacks] = {name: [] for name, _ in rules}
    for stack, count in stacks:
        found[next(name for name, rule in rules if rule(stack))].append((stack, count))
    return found


def top_functions(stacks: Stacks, limit: int) -> list[tuple[str, int]]:
    """The functions most samples of these stacks were in (self), as `function (path)`."""
    own: Counter[str] = Counter()
    for stack, count in stacks:
        if stack:
            name, path = stack[-1]
            own[f"{name} ({path})"] += count
    return own.most_common(limit)


@dataclass
class Profiled:
    label: str
    found: dict[str, Stacks]
    """Each share's stacks (`classify`)."""
    cpu_ms_per_binding: float
    extra: str

    @property
    def samples(self) -> int:
        return sum(count for stacks in self.found.values() for _, count in stacks)

    @property
    def shares(self) -> dict[str, float]:
        """Each share's fraction of the samples."""
        total = self.samples or 1
        return {name: sum(count for _, count in stacks) / total for name, stacks in self.found.items()}


def profile_operator(clusters: int, bindings: int, workers: int, folder: Path, py_spy: str,
                     estimators: dict[str, str] | None = None, capacity: int = 1) -> Profiled:
    args = argparse.Namespace(real=False, server_cpu=None, scheduler_cpu=None, clusters=clusters, bindings=bindings,
                              seed=13, capacity=capacity, qps=1e6, py_spy=py_spy, timeout=900.0)
    raw = folder / f"operator-{clusters}.raw"
    trial = e2e.run_trial(args, f"w={workers}", ROOT, workers, estimators or {}, folder, None, window=raw)
    label = f"operator, {clusters:,} clusters, workers {workers}" + (
        f", {len(estimators)} accurate estimators" if estimators else "")
    return Profiled(label, classify(read_raw(raw), OPERATOR_SHARES), trial.cpu_ms_per_binding,
                    f"{trial.per_second:,.0f} bindings/s, {trial.writes_per_binding:.2f} writes a binding")


def fleet_file(clusters: int, bindings: int, path: Path) -> Path:
    rng = random.Random(13)
    items = [e2e.cluster_doc(i, rng) for i in range(clusters)] + [e2e.binding_doc(i, rng) for i in range(bindings)]
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    return path


def profile_simulate(clusters: int, bindings: int, folder: Path, py_spy: str) -> Profiled:
    fleet = fleet_file(clusters, bindings, folder / "fleet.json")
    raw = folder / "simulate.raw"
    command = [str(ROOT / ".venv/bin/binding-scheduler"), "simulate", "-f", str(fleet), "-o", "json"]
    started = time.monotonic()
    subprocess.run([py_spy, "record", "--format", "raw", "--function", "--full-filenames", "--rate", "250",
                    "-o", str(raw), "--", *command], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    elapsed = time.monotonic() - started
    before = _children_cpu()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    cpu = _children_cpu() - before
    return Profiled(f"simulate, {clusters:,} x {bindings:,}", classify(read_raw(raw), SIMULATE_SHARES),
                    cpu * 1000 / bindings, f"{cpu:.2f} s of CPU unprofiled ({elapsed:.1f} s wall under py-spy)")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def table(result: Profiled, detail: int = 0) -> str:
    """The shares as a Markdown table; with `detail`, then each share's `detail` busiest functions."""
    lines = [f"{result.label}: {result.cpu_ms_per_binding:.2f} ms of CPU a binding, {result.samples:,} samples; "
             f"{result.extra}", "", "| share | % | ms a binding |", "|---|---:|---:|"]
    for name, share in result.shares.items():
        lines.append(f"| {name} | {100 * share:.1f} | {share * result.cpu_ms_per_binding:.2f} |")
    total = result.samples or 1
    for name, stacks in result.found.items() if detail else ():
        if stacks:
            lines += ["", f"{name}:", *(f"  {100 * count / total:5.2f} %  {function}"
                                        for function, count in top_functions(stacks, detail))]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clusters", default="100,1000", help="comma-separated fleet sizes for the operator")
    parser.add_argument("--bindings", type=int, default=3000)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--simulate", default="1000x1000", metavar="CLUSTERSxBINDINGS",
                        help="the simulate run's fleet ('' to skip it)")
    parser.add_argument("--estimators", default=None, metavar="LATENCY",
                        help="accurate estimators (e2e's stubs, one per cluster) answering after LATENCY")
    parser.add_argument("--capacity", type=int, default=1, metavar="K", help="each cluster's allocatable times K")
    parser.add_argument("--py-spy", default=shutil.which("py-spy") or str(ROOT / ".venv/bin/py-spy"))
    parser.add_argument("--detail", type=int, default=0, metavar="N",
                        help="also each share's N busiest functions (their own samples)")
    parser.add_argument("--keep", type=Path, default=None, metavar="DIR", help="keep the raw profiles in DIR")
    args = parser.parse_args()
    if not Path(args.py_spy).exists() and shutil.which(args.py_spy) is None:
        raise SystemExit("py-spy not found: .venv/bin/pip install py-spy (or --py-spy PATH)")
    with tempfile.TemporaryDirectory(prefix="profile-") as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        for clusters in (int(c) for c in args.clusters.split(",") if c):
            stubs, endpoints = e2e.start_estimators(clusters, e2e.parse_seconds(args.estimators)) if (
                args.estimators) else ([], {})
            try:
                result = profile_operator(clusters, args.bindings, args.workers, folder, args.py_spy, endpoints,
                                          args.capacity)
            finally:
                for stub in stubs:
                    stub.terminate()
                    stub.wait(20)
            print(table(result, args.detail), end="\n\n", flush=True)
        if args.simulate:
            clusters, _, bindings = args.simulate.partition("x")
            print(table(profile_simulate(int(clusters), int(bindings), folder, args.py_spy), args.detail), flush=True)


if __name__ == "__main__":
    sys.exit(main())

"""The demo's rolling restart: a pass held in a slow estimator, stopped, and retried by the next instance.

The scenario of karmada-io/karmada #7819, where Karmada's scheduler gets it wrong: a pass already running when
the scheduler is stopped goes on (its estimator calls and API patches take no cancellation), so the old
instance's stale decision can land after the new instance's. Here one cluster's estimator holds its answers, a
binding is scaled so that a pass of the first instance waits on that estimator, and the first instance is
stopped as SIGTERM stops it. What the demo then shows comes from the evidence, not from the operator's word: the
stub estimator saw its call cancelled, the API server's journal holds no write of the first instance after its
stop finished (nor to that binding after the scale), and a second instance, a new Lease holder, places it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import threading
import time
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..model.conditions import SCHEDULED
from ..scheduling.lifecycle.stop_report import ShutdownReport
from ..scheduling.passes.context import Phase

if TYPE_CHECKING:  # devcluster is an optional part (cli/optional.py); Kopf and gRPC: imported when the demo runs
    from ..devcluster import DevCluster, Journal, JournalEntry
    from ..estimation.stub import EstimatorStub, RecordedCall

FIRST, SECOND = "instance-1", "instance-2"
"""The two operator instances' identities: their Lease holder names, and in the User-Agent of their requests."""
SCALER = "binding-scheduler-demo (scale)"
"""The User-Agent of the demo's own write, the scale-up a workload's controller would make."""
LEASE_NAMESPACE, LEASE_NAME = "karmada-system", "karmada-scheduler"
PLURALS = {
    "Cluster": "clusters",
    "ResourceBinding": "resourcebindings",
    "ClusterResourceBinding": "clusterresourcebindings",
}
SCALE_BY = 2
WAIT = 30.0  # seconds any step of the scenario may take before the demo gives up on it
POLL = 0.02


class Instance:
    """One operator instance, run on the calling thread in its own event loop (so SIGTERM and Ctrl-C reach it as
    they reach `binding-scheduler run`), while a director acts on it from another thread. Kopf cancels every
    task created in its loop after it started: the director is a thread, not a task."""

    def __init__(self, identity: str, kubeconfig: Path, config: Path) -> None:
        from ..operator.app import OperatorApp
        from ..operator.options import LaunchOptions

        self.identity = identity
        self.app = OperatorApp(
            LaunchOptions(
                kubeconfig=str(kubeconfig), namespace=LEASE_NAMESPACE, config_file=str(config), identity=identity
            )
        )
        self.ended = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None

    def run(self, director: Callable[[Instance], None]) -> int:
        """Run until stopped; returns the exit code. An error of the director stops the instance, then is raised."""
        failures: list[BaseException] = []

        def direct() -> None:
            try:
                director(self)
            except BaseException as error:  # handed to the caller's thread below
                failures.append(error)
                self.stop()

        thread = threading.Thread(target=direct, name=f"demo-{self.identity}", daemon=True)

        from ..operator.runner import run_operator

        async def main() -> int:
            self._loop, self._stop = asyncio.get_running_loop(), asyncio.Event()
            thread.start()
            try:
                return await run_operator(self.app, stop=self._stop)
            finally:
                self.ended.set()

        code = asyncio.run(main())
        thread.join()
        if failures:
            raise failures[0]
        return code

    def stop(self) -> None:
        """What SIGTERM does to `binding-scheduler run` (the runner's signal handler): the app's synchronous stop
        (every pass before its commit point is cancelled at once), then Kopf's stop flag."""
        loop, flag = self._loop, self._stop
        if loop is None or flag is None or self.ended.is_set():
            return
        try:
            loop.call_soon_threadsafe(self.app.request_stop)
            loop.call_soon_threadsafe(flag.set)
        except RuntimeError:  # the loop closed meanwhile: stopped already
            pass

    def wait(self, condition: Callable[[], bool], seconds: float = WAIT) -> bool:
        """Poll `condition` until it holds (True), the instance ends or `seconds` pass (False)."""
        deadline = time.monotonic() + seconds
        while not condition():
            if self.ended.is_set() or time.monotonic() > deadline:
                return condition()
            time.sleep(POLL)
        return True

    def passes(self) -> Mapping[str, Phase] | None:
        """The passes in flight (binding key: phase), read in the operator's loop; None when it cannot say (not
        started, ended, or its loop did not answer within a second)."""
        loop, service = self._loop, self.app.service
        if loop is None or service is None or self.ended.is_set():
            return None
        answer: concurrent.futures.Future[Mapping[str, Phase]] = concurrent.futures.Future()

        def read() -> None:
            if not answer.done():
                answer.set_result(dict(service.scheduler.in_flight))

        try:
            loop.call_soon_threadsafe(read)
            return answer.result(1.0)
        except (RuntimeError, TimeoutError):  # the loop closed, or is too busy to answer now
            return None

    def idle(self) -> bool:
        """No pass in flight."""
        return self.passes() == {}

    @property
    def report(self) -> ShutdownReport | None:
        return self.app.service.report if self.app.service is not None else None

    @property
    def finished_at(self) -> float | None:
        """`time.monotonic()` when its shutdown finished (the journal's clock)."""
        return self.app.service.finished_at if self.app.service is not None else None

    def writes(self, journal: Journal) -> list[JournalEntry]:
        """Every write the API server received from this instance."""
        return [entry for entry in journal.writes() if f"({self.identity})" in entry.user_agent]

    def late_writes(self, journal: Journal) -> list[JournalEntry]:
        """Its writes that reached the API server after its shutdown finished (the promise: none)."""
        finished = self.finished_at
        return [entry for entry in self.writes(journal) if finished is None or entry.time > finished]


@dataclass(frozen=True, slots=True)
class Plan:
    """The binding to scale, and the cluster whose estimator holds its answers meanwhile."""

    kind: str
    name: str
    namespace: str | None
    replicas: int
    cluster: str

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    @property
    def path(self) -> str:
        from ..devcluster import resource_path

        return resource_path("work.karmada.io/v1alpha2", PLURALS[self.kind], self.namespace, self.name)

    def body(self, api: DevCluster) -> Mapping[str, Any]:
        return api.store.find(PLURALS[self.kind], self.name, self.namespace) or {}


def pick(api: DevCluster, bindings: Sequence[Mapping[str, Any]], estimated: Mapping[str, object]) -> Plan | None:
    """A scheduled binding with replicas (a Divided one first) placed on a cluster with an estimator: its pass
    after a scale asks that cluster's estimator. None when the examples have no such binding."""
    found: list[tuple[bool, Plan]] = []
    for doc in bindings:
        metadata = doc["metadata"]
        body = api.store.find(PLURALS[doc["kind"]], metadata["name"], metadata.get("namespace")) or {}
        spec = body.get("spec") or {}
        placed = [c["name"] for c in spec.get("clusters") or [] if c.get("name") in estimated]
        replicas = spec.get("replicas")
        if not placed or not isinstance(replicas, int) or replicas <= 0 or scheduled(body) != "True":
            continue
        divided = ((spec.get("placement") or {}).get("replicaScheduling") or {}).get("replicaSchedulingType")
        plan = Plan(str(doc["kind"]), metadata["name"], metadata.get("namespace"), replicas, placed[0])
        found.append((divided == "Divided", plan))
    divided_first = [plan for divided, plan in found if divided] + [plan for divided, plan in found if not divided]
    return divided_first[0] if divided_first else None


def scheduled(body: Mapping[str, Any]) -> str | None:
    """The status of a binding's Scheduled condition, None when it has none."""
    conditions = (body.get("status") or {}).get("conditions") or []
    return next((str(c.get("status")) for c in conditions if c.get("type") == SCHEDULED), None)


def scale(api: DevCluster, plan: Plan, replicas: int) -> int:
    """The scale-up a workload's controller makes, through the API (so it is in the journal, with its own
    User-Agent). Returns the binding's new generation."""
    request = urllib.request.Request(
        api.url + plan.path,
        data=json.dumps({"spec": {"replicas": replicas}}).encode(),
        method="PATCH",
        headers={"Content-Type": "application/merge-patch+json", "User-Agent": SCALER},
    )
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # the loopback, whatever the proxy
    with opener.open(request, timeout=10) as response:
        body = json.load(response)
    return int(body["metadata"]["generation"])


@dataclass(slots=True)
class Hold:
    """A cluster's estimator holding its answers (the stub's `hang` mode) until released: the calls it holds end
    only when their caller cancels them."""

    stub: EstimatorStub
    before: int = 0
    until: int | None = None

    def begin(self) -> None:
        from ..estimation.stub import StubMode

        self.before = len(self.stub.calls)
        self.stub.mode = StubMode.HANG

    def release(self) -> None:
        from ..estimation.stub import StubMode

        self.stub.mode = StubMode.OK
        self.until = len(self.stub.calls)

    @property
    def calls(self) -> list[RecordedCall]:
        """The calls it held."""
        return self.stub.calls[self.before : self.until]

    def waiting(self) -> bool:
        return any(call.outcome == "running" for call in self.calls)

    def wait_settled(self, seconds: float = 2.0) -> bool:
        """Wait until every call it held has ended (a cancellation reaches the server a moment after the caller
        cancelled); False after `seconds`."""
        deadline = time.monotonic() + seconds
        while self.waiting() and time.monotonic() < deadline:
            time.sleep(POLL)
        return not self.waiting()


@dataclass(slots=True)
class Restart:
    """What the scenario did, for the demo's lines and the tests."""

    plan: Plan
    hold: Hold
    first: Instance
    generation: int = 0
    scaled_at: float = 0.0
    held: bool = False
    """Whether a pass of the first instance was waiting on the held estimator when the stop was asked."""
    second: Instance | None = None
    placed: bool = False
    lease_holder: str | None = None
    """The Lease's holder while the second instance ran."""
    notes: list[str] = field(default_factory=list)

    def hold_and_stop(self, api: DevCluster, instance: Instance) -> None:
        """The first instance's director, once every binding is scheduled: hold the estimator, scale the binding,
        and stop the instance while its pass waits on that estimator."""
        self.hold.begin()
        self.scaled_at = time.monotonic()
        self.generation = scale(api, self.plan, self.plan.replicas + SCALE_BY)
        self.held = instance.wait(lambda: self.hold.waiting() and self.deciding(instance))
        instance.stop()

    def deciding(self, instance: Instance) -> bool:
        """Whether the instance's pass for the binding is before its commit point."""
        return (instance.passes() or {}).get(self.plan.key) is Phase.DECIDING

    def late_to_binding(self, journal: Journal) -> list[JournalEntry]:
        """Writes of the first instance to the scaled binding after the scale: the held pass wrote none."""
        return [e for e in self.first.writes(journal) if e.time > self.scaled_at and self.plan.path in e.path]

    def place(self, api: DevCluster, instance: Instance) -> None:
        """The second instance's director: wait until it has placed the scaled binding (its own status write, seen
        in the journal, recorded the new generation), then stop it."""

        def done() -> bool:
            status = self.plan.body(api).get("status") or {}
            observed = status.get("schedulerObservedGeneration")
            if not isinstance(observed, int) or observed < self.generation:
                return False
            return any(e.path == f"{self.plan.path}/status" and e.time > self.scaled_at
                       for e in instance.writes(api.journal))

        self.placed = instance.wait(done)
        lease = api.store.find("leases", LEASE_NAME, LEASE_NAMESPACE) or {}
        self.lease_holder = (lease.get("spec") or {}).get("holderIdentity")
        instance.stop()


def in_plain_words(identity: str, report: ShutdownReport, late: int) -> str:
    """A shutdown report as a sentence: `instance-1 stopped in 9 ms: 1 pass was cancelled before it wrote
    anything, 0 were finishing a write, 0 were cut at the deadline; the Lease was released; nothing was written
    after the stop.`"""
    took = f"{report.seconds * 1000:.0f} ms" if report.seconds < 1 else f"{report.seconds:.1f} s"
    cancelled = (f"{report.cancelled} pass was cancelled before it wrote anything" if report.cancelled == 1 else
                 f"{report.cancelled} passes were cancelled before they wrote anything")
    if report.lease_released:
        lease = "the Lease was released"
    elif report.lease == "not held":
        lease = "it held no Lease"
    else:
        lease = f"the Lease was {report.lease}"  # lost, or not released (why)
    doubt = ""
    if report.in_doubt:
        doubt = (f"; {_count(report.in_doubt, 'write')} got no answer and may still be applied, only where nobody "
                 "wrote since (fenced)")
    after = "nothing was written after the stop" if not late else f"{_count(late, 'write')} arrived after the stop"
    return (f"{identity} stopped in {took}: {cancelled}, {report.drained} {_were(report.drained)} finishing a write, "
            f"{report.cut} {_were(report.cut)} cut at the deadline; {lease}{doubt}; {after}.")


def _were(count: int) -> str:
    return "was" if count == 1 else "were"


def _count(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def placement(body: Mapping[str, Any]) -> str:
    """`aws-use1-a:6,gcp-usw1:4`, or the names alone for a non-workload; `-` when nowhere."""
    clusters = (body.get("spec") or {}).get("clusters") or []
    return ",".join(f"{c['name']}:{c['replicas']}" if c.get("replicas") else c["name"] for c in clusters) or "-"


def first_lines(restart: Restart, api: DevCluster) -> list[str]:
    """What the first instance's stop shows, from the stub's record and the API server's journal."""
    plan, first, journal = restart.plan, restart.first, api.journal
    lines = [
        f"- {plan.cluster}'s estimator holds its answers; {plan.key} is scaled from {plan.replicas} to "
        f"{plan.replicas + SCALE_BY} replicas",
        f"- {first.identity}'s pass for it " + ("waits on that estimator" if restart.held else
                                                "did not reach that estimator") + f"; {first.identity} is stopped "
        "as SIGTERM stops it",
    ]
    report = first.report
    if report is not None:
        lines.append(f"- {in_plain_words(first.identity, report, len(first.late_writes(journal)))}")
    outcomes = "/".join(sorted({call.outcome for call in restart.hold.calls})) or "never made"
    late = restart.late_to_binding(journal)
    written = "no write" if not late else _count(len(late), "write")
    lines.append(
        f"- {plan.cluster}'s estimator saw the held call {outcomes}; the API server's journal holds {written} of "
        f"{first.identity} to {plan.key} after the scale-up"
    )
    return lines


def second_lines(restart: Restart, api: DevCluster) -> list[str]:
    second = restart.second
    if second is None:
        return []
    body = restart.plan.body(api)
    conditions = (body.get("status") or {}).get("conditions") or []
    condition: Mapping[str, Any] = next((c for c in conditions if c.get("type") == SCHEDULED), {})
    if restart.lease_holder == second.identity:
        took = "took the Lease"
    else:
        took = f"did not take the Lease (held by {restart.lease_holder or 'nobody'})"
    if restart.placed:
        decided = f"retried {restart.plan.key}: {condition.get('reason', '-')}, {placement(body)}"
    else:
        decided = f"did not place {restart.plan.key} within {WAIT:.0f} s"
    lines = [f"- {second.identity} {took} and {decided}"]
    late = second.late_writes(api.journal)
    after = "nothing written after its stop" if not late else f"{_count(len(late), 'write')} after its stop"
    lines.append(f"- {second.identity} stopped too, {after}")
    return lines

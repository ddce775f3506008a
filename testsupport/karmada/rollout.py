"""The original report's scenario as a Deployment rollout, on the in-cluster plane (testsupport/karmada/incluster.py):
the scheduler runs as two pods on a node with a real kubelet, and the kubelet, not the test, stops the old ones.

    1. the pods schedule N Deployments, Divided by the members' available replicas (every decision asks every
       member's estimator, reached through a relay: testsupport/karmada/slowlink.py);
    2. member1's estimator turns slow and every policy changes its cluster affinity: the leader's passes wait in
       member1's estimator calls;
    3. the trigger: `kubectl rollout restart` of the scheduler's Deployment, a `helm upgrade` changing a value,
       the leader pod deleted with `--grace-period=1` (SIGTERM, SIGKILL a second later), or the leader's
       container killed on the node (SIGKILL, the kubelet restarts it);
    4. once the old pods are gone (or the killed one is back), every policy changes again (the newest
       placement), member1's estimator turns fast, the bindings settle; then a wait longer than the estimator's
       delay, for anything still in flight to land.

Judged from karmada-apiserver's audit log, where each pod is told apart by its address (pods reach
karmada-apiserver without NAT): no write by an old pod after its container's last line (its shutdown's end),
no binding whose final spec.clusters is older than the newest policy or was last written by an old pod, the old
leader's exit status, and the times from the trigger to the first decision of a new pod and from the newest
policy change to every binding placed."""

from __future__ import annotations

import contextlib
import ipaddress
import json
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from testsupport.karmada import incluster, node
from testsupport.karmada.plane import KARMADA_SYSTEM, KarmadaPlane, Processes, wait_for
from testsupport.karmada.restart import (
    AFFINITIES,
    BINDINGS,
    POLICIES,
    _bindings_on,
    _point_estimator,
    _set_affinity,
    deployment,
    policy,
    settle_on_newest,
)
from testsupport.karmada.slowlink import SlowLink, slow_link
from testsupport.realcluster import audit
from testsupport.realcluster.controlplane import binaries as kube_binaries

TRIGGERS = ("restart", "upgrade", "delete", "kill")
"""rollout restart; helm upgrade with a changed value (the chart only); the leader pod deleted with
--grace-period=1; the leader's container SIGKILLed on the node."""
LEASE = f"/apis/coordination.k8s.io/v1/namespaces/{KARMADA_SYSTEM}/leases/karmada-scheduler"


@dataclass
class OldPod:
    name: str
    ip: str
    leader: bool
    exit_code: int | None = None  # the container's, as the kubelet reported it
    last_line: float = 0.0  # when its container printed its last line (epoch seconds)
    last_lines: list[str] = field(default_factory=list)


@dataclass
class RolloutReport:
    scheduler: str
    trigger: str
    bindings: int
    held_calls: int = 0  # client chunks the slow estimator held
    old_pods: list[OldPod] = field(default_factory=list)
    stop_seconds: float = 0.0  # from the trigger to the old leader's last line
    resume_seconds: float = 0.0  # from the trigger to the first spec write of a pod other than the old leader
    settle_seconds: float = 0.0  # from the newest policy change to every binding on it
    writes_after_exit: list[str] = field(default_factory=list)  # an old pod's writes after its last line
    stale_bindings: list[str] = field(default_factory=list)  # final spec.clusters not from the newest placement

    @property
    def leader(self) -> OldPod | None:
        return next((pod for pod in self.old_pods if pod.leader), None)

    @property
    def passed(self) -> bool:
        """No late write, no stale binding, and for binding-scheduler an exit status of 0 wherever it was let
        finish its shutdown (karmada-scheduler's 255 is recorded, not judged)."""
        leader = self.leader
        clean_exit = (self.scheduler != "ours" or self.trigger in ("kill", "delete")
                      or (leader is not None and leader.exit_code == 0))
        return not self.writes_after_exit and not self.stale_bindings and clean_exit

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2)


class Rollouts(list[RolloutReport]):
    """The reports of one plane's runs, written as one JSON list."""

    def to_json(self) -> str:
        return "[\n" + ",\n".join(report.to_json() for report in self) + "\n]\n"


def deployment_name(plane: KarmadaPlane) -> str:
    return "karmada-scheduler" if plane.scheduler == "karmada" else incluster.RELEASE


def selector(plane: KarmadaPlane) -> str:
    return "app=karmada-scheduler" if plane.scheduler == "karmada" else incluster.SELECTOR


class LogFollower:
    """`kubectl logs -f --timestamps` of one pod into a file, until its container exits."""

    def __init__(self, plane: KarmadaPlane, pod: str, path: Path) -> None:
        self.path = path
        with path.open("wb") as out:
            self.process = subprocess.Popen(
                [str(kube_binaries() / "kubectl"), "--kubeconfig", str(plane.kubeconfig), "--context",
                 "karmada-host", "-n", KARMADA_SYSTEM, "logs", "-f", "--timestamps", pod],
                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

    def last_lines(self, count: int = 3) -> tuple[float, list[str]]:
        """When the pod printed its last line, and its last `count` lines."""
        lines = [line for line in self.path.read_text(errors="replace").splitlines() if line.strip()]
        stamped = [line for line in lines if line[:4].isdigit() and " " in line]
        when = _stamp(stamped[-1].split(" ", 1)[0]) if stamped else 0.0
        return when, [line.split(" ", 1)[1] if line in stamped else line for line in lines[-count:]]

    def close(self, timeout: float = 30.0) -> None:
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _stamp(text: str) -> float:
    """An RFC 3339 time with up to nanoseconds, as seconds since the epoch."""
    head, _, fraction = text.rstrip("Z").partition(".")
    return datetime.fromisoformat(head + "+00:00").timestamp() + float(f"0.{fraction or 0}")


class PodWatch:
    """The scheduler's pods as the host cluster reports them, kept in the background: each pod's address and
    its container's last termination (exit code), even after the pod is gone."""

    def __init__(self, plane: KarmadaPlane, label_selector: str) -> None:
        self.client = incluster.host_client(plane)
        self.selector = label_selector
        self.seen: dict[str, dict[str, Any]] = {}
        self.present: set[str] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, name="podwatch", daemon=True)

    def __enter__(self) -> PodWatch:
        self._poll_once()
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(10)

    def _poll(self) -> None:
        while not self._stop.wait(0.1):
            self._poll_once()

    def _poll_once(self) -> None:
        status, answer = self.client.request(
            "GET", f"/api/v1/namespaces/{KARMADA_SYSTEM}/pods?labelSelector={self.selector}")
        if status != 200:
            return
        present = set()
        for pod in answer.get("items", []):
            name = pod["metadata"]["name"]
            present.add(name)
            record = self.seen.setdefault(name, {"ip": "", "exit_code": None, "ready": False, "restarts": 0})
            record["ip"] = pod["status"].get("podIP") or record["ip"]
            record["ready"] = any(c.get("type") == "Ready" and c.get("status") == "True"
                                  for c in pod["status"].get("conditions") or ())
            for container in pod["status"].get("containerStatuses") or ():
                record["restarts"] = container.get("restartCount", 0)
                for state in (container.get("state") or {}, container.get("lastState") or {}):
                    if "terminated" in state:
                        record["exit_code"] = state["terminated"].get("exitCode")
        self.present = present

    def ready(self) -> dict[str, str]:
        """The pods present and Ready: name -> address."""
        return {name: self.seen[name]["ip"] for name in self.present if self.seen[name]["ready"]}


def leader_pod(plane: KarmadaPlane) -> str:
    holder = plane.karmada.client().ok("GET", LEASE)["spec"].get("holderIdentity") or ""
    return holder.split("_", 1)[0]


@contextlib.contextmanager
def estimator_relay(plane: KarmadaPlane, delay: float) -> Iterator[SlowLink]:
    """member1's estimator reached through a relay that can turn slow, for as long as the block runs. Both
    schedulers dial an estimator once and keep the connection while it works (karmada-scheduler:
    pkg/estimator/client EstablishConnection, cached; binding-scheduler re-resolves only after a failed
    connection), so the pods are restarted first, to dial the relay."""
    client = plane.karmada.client()
    service_path = f"/api/v1/namespaces/{KARMADA_SYSTEM}/services/karmada-scheduler-estimator-member1"
    service = client.ok("GET", service_path)
    estimator_port = int(service["spec"]["ports"][0]["targetPort"])
    try:
        with slow_link(estimator_port, delay, node.GATEWAY) as link:
            _point_estimator(client, service_path, service, link.port)
            _trigger(plane, "restart", "")
            plane.kubectl("-n", KARMADA_SYSTEM, "rollout", "status", f"deployment/{deployment_name(plane)}",
                          "--timeout=180s", context="karmada-host")
            yield link
    finally:
        _point_estimator(client, service_path, service, estimator_port)


def run(plane: KarmadaPlane, link: SlowLink, *, trigger: str = "restart", bindings: int = 6) -> RolloutReport:
    """The scenario once, with `trigger`, member1's estimator behind `link` (estimator_relay)."""
    if trigger not in TRIGGERS:
        raise ValueError(f"trigger {trigger!r}: expected one of {', '.join(TRIGGERS)}")
    if trigger == "upgrade" and plane.scheduler == "karmada":
        raise ValueError("a helm upgrade is the chart's: karmada-scheduler runs from Karmada's manifest")
    client = plane.karmada.client()
    processes = Processes.of(plane.state)
    namespace = f"rollout-{uuid.uuid4().hex[:6]}"
    client.ok("POST", "/api/v1/namespaces", {"metadata": {"name": namespace}})
    names = [f"web-{index}" for index in range(bindings)]
    report = RolloutReport(scheduler=plane.scheduler, trigger=trigger, bindings=bindings)
    logs_dir = plane.state / "logs" / "rollout" / namespace  # kept with the plane's logs
    logs_dir.mkdir(parents=True)
    followers: dict[str, LogFollower] = {}
    held_before = link.held
    try:
        with PodWatch(plane, selector(plane)) as watch:
            for name in names:
                client.ok("POST", f"/apis/apps/v1/namespaces/{namespace}/deployments", deployment(namespace, name, 4))
                client.ok("POST", POLICIES.format(namespace=namespace), policy(namespace, name, AFFINITIES[0]))
            wait_for(lambda: _bindings_on(plane, namespace, names, AFFINITIES[0]), "the pods' first decisions",
                     processes, timeout=120)
            old = watch.ready()
            leader = leader_pod(plane)
            report.old_pods = [OldPod(name, ip, name == leader) for name, ip in sorted(old.items())]
            followers = {name: LogFollower(plane, name, logs_dir / f"{name}.log") for name in old}
            link.slow = True
            for name in names:
                _set_affinity(client, namespace, name, AFFINITIES[1])
            wait_for(lambda: link.held > 0, "a call held in the slow estimator", processes, timeout=30)
            signalled = time.time()
            _trigger(plane, trigger, leader)
            _wait_replaced(plane, trigger, old, leader, watch, processes)
            report.settle_seconds = round(settle_on_newest(plane, namespace, names, link, processes), 1)
            time.sleep(link.delay + 5.0)  # anything still in flight anywhere lands now
            report.held_calls = link.held - held_before
            for pod in report.old_pods:
                pod.exit_code = watch.seen[pod.name]["exit_code"]
        for pod in report.old_pods:
            follower = followers[pod.name]
            follower.close(timeout=5 if trigger == "kill" else 30)
            pod.last_line, pod.last_lines = follower.last_lines()
        judge(plane, report, namespace, names, signalled)
        return report
    finally:
        for follower in followers.values():
            follower.close(timeout=1)
        client.request("DELETE", f"/api/v1/namespaces/{namespace}")


def _trigger(plane: KarmadaPlane, trigger: str, leader: str) -> None:
    name = deployment_name(plane)
    if trigger == "restart":
        plane.kubectl("-n", KARMADA_SYSTEM, "rollout", "restart", f"deployment/{name}", context="karmada-host")
    elif trigger == "upgrade":
        incluster.helm(plane, "upgrade", incluster.RELEASE, str(incluster.CHART), "--namespace", KARMADA_SYSTEM,
                       "--reuse-values", "--set", f"podAnnotations.rollout={uuid.uuid4().hex[:8]}")
    elif trigger == "delete":
        plane.kubectl("-n", KARMADA_SYSTEM, "delete", "pod", leader, "--grace-period=1", "--wait=false",
                      context="karmada-host")
    else:
        node.kill_container(plane.state / "node", incluster.host_client(plane), KARMADA_SYSTEM, leader)


def _wait_replaced(plane: KarmadaPlane, trigger: str, old: dict[str, str], leader: str, watch: PodWatch,
                   processes: Processes) -> None:
    """Until the old pods are gone and two Ready pods run (the killed one restarted, for a node-level kill),
    and a pod holds the Lease."""
    if trigger == "kill":
        wait_for(lambda: watch.seen[leader]["restarts"] > 0 and len(watch.ready()) >= 2,
                 "the killed container restarted and Ready", processes, timeout=120)
    elif trigger == "delete":
        wait_for(lambda: leader not in watch.present and len(watch.ready()) >= 2,
                 "the deleted pod replaced", processes, timeout=120)
    else:
        wait_for(lambda: not (set(old) & watch.present) and len(watch.ready()) >= 2,
                 "every old pod gone, two new ones Ready", processes, timeout=180)
    wait_for(lambda: leader_pod(plane) in watch.ready(), "a Ready pod holding the Lease", processes, timeout=60)


def _stopped_cleanly(trigger: str, pod: OldPod) -> bool:
    """Whether the pod's process ended its own shutdown (so nothing may be sent after its last line): a rollout
    always lets it, a one-second grace period only when it exited 0 within it; a SIGKILL never (a write it had
    sent may land after its end: the fencing's part)."""
    return trigger in ("restart", "upgrade") or (trigger == "delete" and pod.exit_code == 0)


def judge(plane: KarmadaPlane, report: RolloutReport, namespace: str, names: list[str], signalled: float) -> None:
    entries = audit.read(plane.audit_log)
    old_ips = {pod.ip: pod for pod in report.old_pods}
    # the pods the trigger ended for good (a killed container restarts with the same address)
    stopped = {pod.ip for pod in report.old_pods if report.trigger in ("restart", "upgrade")
               or (report.trigger == "delete" and pod.leader)}
    leader = report.leader
    if leader is not None and leader.last_line and report.trigger != "kill":
        report.stop_seconds = round(leader.last_line - signalled, 2)
    pods = ipaddress.ip_network(node.POD_CIDR)
    spec_writes = [e for e in entries if e.is_write and e.resource == "resourcebindings" and e.namespace == namespace
                   and not e.subresource and e.code < 300 and e.source and ipaddress.ip_address(e.source) in pods]
    for entry in entries:
        pod = old_ips.get(entry.source)
        if pod is None or not entry.is_write or not pod.last_line or not _stopped_cleanly(report.trigger, pod):
            continue
        if entry.received > pod.last_line:
            report.writes_after_exit.append(f"{pod.name}: {entry} at +{entry.received - pod.last_line:.2f}s")
    leader_ip = leader.ip if leader is not None else ""
    resumed = [e.received for e in spec_writes if e.received > signalled and (
        e.source != leader_ip or report.trigger == "kill")]
    report.resume_seconds = round(min(resumed) - signalled, 2) if resumed else -1.0
    last: dict[str, str] = {}
    for entry in spec_writes:
        last[entry.name] = entry.source
    items = plane.karmada.client().ok("GET", BINDINGS.format(namespace=namespace))["items"]
    for item in items:
        name = item["metadata"]["name"]
        targets = sorted(c["name"] for c in item["spec"].get("clusters") or ())
        writer = last.get(name, "")
        if not set(targets) <= set(AFFINITIES[2]) or writer in stopped:
            report.stale_bindings.append(f"{name}: {targets} (last written from {writer or 'nobody'})")
    del names


HEADER = ("| trigger | old leader's exit status | trigger to its last line (s) | writes after its last line "
          "| stale bindings | trigger to a new pod's first decision (s) | newest policy to all placed (s) |")


def row(report: RolloutReport) -> str:
    leader = report.leader
    code = "?" if leader is None or leader.exit_code is None else str(leader.exit_code)
    stop = "-" if report.trigger == "kill" else f"{report.stop_seconds:.1f}"
    return (f"| {report.trigger} | {code} | {stop} | {len(report.writes_after_exit)} "
            f"| {len(report.stale_bindings)} | {report.resume_seconds:.1f} | {report.settle_seconds:.1f} |")


def table(reports: list[RolloutReport]) -> str:
    """The reports as docs/karmada-e2e.md's rollout table (one scheduler)."""
    return "\n".join([HEADER, "|" + "---|" * 7, *(row(report) for report in reports)])


SIDE_BY_SIDE = ("| trigger | old leader's exit status | writes after its last line | stale bindings "
                "| trigger to a new pod's first decision (s) | newest policy to all placed (s) |")


def side_by_side(ours: list[RolloutReport], karmada: list[RolloutReport]) -> str:
    """One row per trigger, each cell `binding-scheduler / karmada-scheduler` ("-" where one did not run)."""
    theirs = {report.trigger: report for report in karmada}
    lines = [SIDE_BY_SIDE, "|" + "---|" * 6]
    for report in ours:
        other = theirs.get(report.trigger)
        cells = [_cells(report), _cells(other) if other else ["-"] * 5]
        lines.append(f"| {report.trigger} | " + " | ".join(f"{a} / {b}" for a, b in zip(*cells, strict=True)) + " |")
    return "\n".join(lines)


def _cells(report: RolloutReport) -> list[str]:
    leader = report.leader
    code = "?" if leader is None or leader.exit_code is None else str(leader.exit_code)
    return [code, str(len(report.writes_after_exit)), str(len(report.stale_bindings)),
            f"{report.resume_seconds:.1f}", f"{report.settle_seconds:.1f}"]

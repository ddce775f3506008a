"""Rolling restarts of the scheduler on a real Karmada, under policy churn, with Karmada's own Deployment flags
(`--feature-gates=AllAlpha=true,AllBeta=true`: overcommit protection on), then scale-ups after the last takeover.

    1. instance 0 (its own client identity, so the audit log tells the instances apart) schedules N Deployments:
       every third Duplicated (2 replicas), the others Divided by the members' available replicas (3), each over
       two of the three members: at 150, about a quarter of the members' pod slots stays free, less than the
       Duplicated replicas a member runs (what a new leader deciding them again must not count twice);
    2. for each restart: the next instance starts beside the leader (a Deployment's surge pod), a tenth of the
       policies change their cluster affinity, and the leader is stopped: SIGTERM, or every `kill_every`-th time
       SIGKILL (a node lost); the next instance takes the Lease over and the bindings settle on their newest
       placement;
    3. after the last takeover, `scale_ups` Divided Deployments are scaled from 3 to 5 replicas: each must be
       placed within seconds, as karmada-scheduler places them (not refused until the assumptions expire).

Judged by karmada-apiserver's audit log (no write of an instance after it exited), by every binding's final
`spec.clusters` (on its newest placement, decided for its current generation; and what Karmada's own scheduling
code, the oracle, decides on an export of the final state), and by the scale-ups' outcome.
`python3 dev.py karmada churn --scheduler ours|karmada` runs it on a plane of its own (docs/karmada-e2e.md)."""

from __future__ import annotations

import contextlib
import json
import random
import signal
import time
import uuid
from dataclasses import asdict, dataclass, field
from typing import Any

from testsupport.karmada.plane import KARMADA_SYSTEM, KarmadaError, KarmadaPlane, Processes, scheduler_command, wait_for
from testsupport.karmada.restart import BINDINGS, POLICIES, deployment, instance_kubeconfig
from testsupport.oracle import oracle
from testsupport.realcluster import audit

AFFINITIES = (["member1", "member2"], ["member1", "member3"], ["member2", "member3"])
LEASE = f"/apis/coordination.k8s.io/v1/namespaces/{KARMADA_SYSTEM}/leases/karmada-scheduler"
DEPLOYMENTS = "/apis/apps/v1/namespaces/{namespace}/deployments"
REQUESTS = {"cpu": "10m", "memory": "16Mi"}
"""Small pods: a member's 220 pod slots bound it, as 4 CPUs would not."""
DUPLICATED_REPLICAS, DIVIDED_REPLICAS, SCALED_REPLICAS = 2, 3, 5
SETTLE_TIMEOUT = 300.0
SCALE_UP_TIMEOUT = 60.0


@dataclass
class Stop:
    instance: str
    signal: str  # TERM or KILL
    exit_code: int  # -1: killed, or did not exit in time
    exit_seconds: float  # from the signal to the exit
    takeover_seconds: float  # from the exit to the next instance holding the Lease
    settle_seconds: float  # from the exit until every binding is on its newest placement


@dataclass
class ScaleUp:
    name: str
    reason: str  # the Scheduled condition's reason for the scaled generation, or "" if none came in time
    seconds: float  # from the Deployment's update to that condition


@dataclass
class ChurnReport:
    scheduler: str
    workloads: int
    stops: list[Stop] = field(default_factory=list)
    writes_after_exit: list[str] = field(default_factory=list)  # any instance's writes after it exited
    oracle_agrees: int = 0  # bindings whose final spec.clusters is what Karmada's own code decides on the export
    oracle_differs: list[str] = field(default_factory=list)  # the others, with both results
    not_on_newest: list[str] = field(default_factory=list)  # bindings whose final spec is not their newest decision
    scale_ups: list[ScaleUp] = field(default_factory=list)

    @property
    def scale_ups_placed(self) -> int:
        return sum(1 for s in self.scale_ups if s.reason == "Success")

    @property
    def passed(self) -> bool:
        return (not self.writes_after_exit and not self.not_on_newest and not self.oracle_differs
                and self.scale_ups_placed == len(self.scale_ups))

    def to_json(self) -> str:
        return json.dumps({**asdict(self), "scale_ups_placed": self.scale_ups_placed}, indent=2)

    def summary(self) -> str:
        terms = [s for s in self.stops if s.signal == "TERM"]
        slowest = max((s.exit_seconds for s in terms), default=0.0)
        takeover = max((s.takeover_seconds for s in self.stops), default=0.0)
        scale = max((s.seconds for s in self.scale_ups), default=0.0)
        return (f"{len(self.stops)} restarts ({len(terms)} SIGTERM, {len(self.stops) - len(terms)} SIGKILL), "
                f"SIGTERM to exit at most {slowest:.2f} s, takeover at most {takeover:.1f} s; "
                f"{len(self.writes_after_exit)} writes after an instance's exit; "
                f"{len(self.not_on_newest)} of {self.workloads} bindings not on their newest decision; "
                f"{self.oracle_agrees} of {self.workloads} where Karmada's own code decides on the export; "
                f"scale-ups placed {self.scale_ups_placed}/{len(self.scale_ups)} (slowest {scale:.1f} s)")


@dataclass
class _Workload:
    name: str
    duplicated: bool
    affinity: list[str]


def policy(namespace: str, workload: _Workload) -> dict[str, Any]:
    scheduling: dict[str, Any] = {"replicaSchedulingType": "Duplicated"} if workload.duplicated else {
        "replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted",
        "weightPreference": {"dynamicWeight": "AvailableReplicas"}}
    return {
        "apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
        "metadata": {"name": workload.name, "namespace": namespace},
        "spec": {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": workload.name}],
                 "placement": {"clusterAffinity": {"clusterNames": workload.affinity},
                               "replicaScheduling": scheduling}},
    }


def run(plane: KarmadaPlane, processes: Processes, *, workloads: int = 150, restarts: int = 10, kill_every: int = 3,
        scale_ups: int = 5, seed: int = 7) -> ChurnReport:
    """The scenario on `plane` (its own scheduler is stopped first and started again at the end)."""
    rng = random.Random(seed)
    client = plane.karmada.client()
    namespace = f"churn-{uuid.uuid4().hex[:6]}"
    client.ok("POST", "/api/v1/namespaces", {"metadata": {"name": namespace}})
    chosen = [_Workload(f"app-{i:03d}", i % 3 == 0, list(AFFINITIES[i % len(AFFINITIES)])) for i in range(workloads)]
    report = ChurnReport(scheduler=plane.scheduler, workloads=workloads)
    processes.stop("scheduler")
    users: dict[str, str] = {}
    exits: dict[str, float] = {}

    def start(index: int) -> str:
        name = f"scheduler-{index}"
        config, users[name] = instance_kubeconfig(plane, f"i{index}")
        processes.start(name, scheduler_command(plane.scheduler, plane.state, config))
        return name

    try:
        leader = start(0)
        for workload in chosen:
            replicas = DUPLICATED_REPLICAS if workload.duplicated else DIVIDED_REPLICAS
            client.ok("POST", DEPLOYMENTS.format(namespace=namespace),
                      deployment(namespace, workload.name, replicas, REQUESTS))
            client.ok("POST", POLICIES.format(namespace=namespace), policy(namespace, workload))
        wait_for(lambda: _settled(client, namespace, chosen), "the first instance's decisions", processes,
                 timeout=SETTLE_TIMEOUT, interval=1.0)
        for index in range(1, restarts + 1):
            holder = _holder(client)
            incoming = start(index)
            time.sleep(2.0)
            _churn(client, namespace, rng.sample(chosen, max(1, workloads // 10)))
            sig = signal.SIGKILL if index % kill_every == 0 else signal.SIGTERM
            signalled = time.monotonic()
            code = processes.stop(leader, sig=sig, timeout=60)
            exited = time.monotonic()
            exits[leader] = time.time()
            wait_for(lambda previous=holder: _holder(client) not in ("", previous),  # type: ignore[misc]
                     "the next instance to take the Lease over", processes, timeout=60, interval=0.2)
            took_over = time.monotonic()
            wait_for(lambda: _settled(client, namespace, chosen), "every binding on its newest placement", processes,
                     timeout=SETTLE_TIMEOUT, interval=1.0)
            report.stops.append(Stop(leader, "KILL" if sig == signal.SIGKILL else "TERM",
                                     -1 if code is None else code, round(exited - signalled, 2),
                                     round(took_over - exited, 1), round(time.monotonic() - exited, 1)))
            leader = incoming
        report.scale_ups = _scale_up(client, namespace, [w for w in chosen if not w.duplicated][:scale_ups],
                                     processes)
        time.sleep(2.0)  # anything still in flight lands
        _judge(plane, report, client, namespace, chosen, users, exits)
        return report
    finally:
        for name in list(users):
            processes.stop(name)
        client.request("DELETE", f"/api/v1/namespaces/{namespace}")
        processes.start("scheduler", scheduler_command(plane.scheduler, plane.state, plane.karmada.kubeconfig))


def _holder(client: Any) -> str:
    status, lease = client.request("GET", LEASE)
    return str(((lease or {}).get("spec") or {}).get("holderIdentity") or "") if status == 200 else ""


def _churn(client: Any, namespace: str, changed: list[_Workload]) -> None:
    for workload in changed:
        workload.affinity = list(AFFINITIES[(AFFINITIES.index(workload.affinity) + 1) % len(AFFINITIES)])
        client.ok("PATCH", f"{POLICIES.format(namespace=namespace)}/{workload.name}",
                  {"spec": {"placement": {"clusterAffinity": {"clusterNames": workload.affinity}}}})


def _bindings(client: Any, namespace: str) -> dict[str, dict[str, Any]]:
    items = client.ok("GET", BINDINGS.format(namespace=namespace))["items"]
    return {item["metadata"]["name"].removesuffix("-deployment"): item for item in items}


def _condition(body: dict[str, Any]) -> dict[str, Any] | None:
    for item in (body.get("status") or {}).get("conditions") or ():
        if item.get("type") == "Scheduled":
            return dict(item)
    return None


def _misplaced(body: dict[str, Any] | None, workload: _Workload) -> str | None:
    """Why `body` is not on `workload`'s newest decision, or None."""
    if body is None:
        return "no binding"
    targets = sorted(c["name"] for c in body["spec"].get("clusters") or ())
    policy_affinity = ((body["spec"].get("placement") or {}).get("clusterAffinity") or {}).get("clusterNames")
    if sorted(policy_affinity or ()) != sorted(workload.affinity):
        return f"placement not yet updated by Karmada ({policy_affinity})"
    if body["metadata"]["generation"] != (body.get("status") or {}).get("schedulerObservedGeneration"):
        return f"generation {body['metadata']['generation']} not observed"
    if not targets or not set(targets) <= set(workload.affinity):
        return f"on {targets}, not within {workload.affinity}"
    if workload.duplicated and targets != sorted(workload.affinity):
        return f"Duplicated on {targets}, not on {workload.affinity}"
    verdict = _condition(body)
    if verdict is None or verdict.get("status") != "True":
        return f"Scheduled {verdict}"
    return None


def _settled(client: Any, namespace: str, workloads: list[_Workload]) -> bool:
    bindings = _bindings(client, namespace)
    return all(_misplaced(bindings.get(w.name), w) is None for w in workloads)


def _scale_up(client: Any, namespace: str, workloads: list[_Workload], processes: Processes) -> list[ScaleUp]:
    started = time.monotonic()
    for workload in workloads:
        client.ok("PATCH", f"{DEPLOYMENTS.format(namespace=namespace)}/{workload.name}",
                  {"spec": {"replicas": SCALED_REPLICAS}})
    outcomes: dict[str, ScaleUp] = {}

    def decided() -> bool:
        bindings = _bindings(client, namespace)
        for workload in workloads:
            body = bindings.get(workload.name)
            if workload.name in outcomes or body is None or body["spec"].get("replicas") != SCALED_REPLICAS:
                continue
            verdict = _condition(body)
            observed = (body.get("status") or {}).get("schedulerObservedGeneration")
            if verdict is not None and observed == body["metadata"]["generation"]:
                outcomes[workload.name] = ScaleUp(workload.name, str(verdict.get("reason")),
                                                  round(time.monotonic() - started, 1))
        return len(outcomes) == len(workloads)

    with contextlib.suppress(KarmadaError):  # an undecided scale-up is an outcome of the scenario, reported
        wait_for(decided, "the scale-ups' decisions", processes, timeout=SCALE_UP_TIMEOUT, interval=0.5)
    return [outcomes.get(w.name, ScaleUp(w.name, "", SCALE_UP_TIMEOUT)) for w in workloads]


def _judge(plane: KarmadaPlane, report: ChurnReport, client: Any, namespace: str, workloads: list[_Workload],
           users: dict[str, str], exits: dict[str, float]) -> None:
    entries = audit.read(plane.audit_log)
    for name, exited in exits.items():
        report.writes_after_exit += [f"{name}: {e} at +{e.received - exited:.2f}s" for e in entries
                                     if e.user == users[name] and e.is_write and e.received > exited]
    bindings = _bindings(client, namespace)
    for workload in workloads:
        why = _misplaced(bindings.get(workload.name), workload)
        if why is not None:
            report.not_on_newest.append(f"{workload.name}: {why}")
    _ask_the_oracle(report, client, bindings)


def _ask_the_oracle(report: ChurnReport, client: Any, bindings: dict[str, dict[str, Any]]) -> None:
    """Karmada's own scheduling code (karmada-oracle, testsupport/oracle) decides every binding on an export of the
    final Clusters and bindings: where the scheduler left each binding must be where Karmada's code puts it now. The
    oracle estimates from the members' resource summaries (no accurate estimator), as `simulate` does."""
    clusters = client.ok("GET", "/apis/cluster.karmada.io/v1alpha1/clusters")["items"]
    documents = [_exported(c, "Cluster") for c in clusters]
    documents += [_exported(body, "ResourceBinding") for body in bindings.values()]
    results = oracle.decide(documents)["results"]
    by_name = {str(r["name"]).removesuffix("-deployment"): r for r in results if r.get("kind") == "ResourceBinding"}
    for name, body in sorted(bindings.items()):
        placed = sorted((c["name"], int(c.get("replicas") or 0)) for c in body["spec"].get("clusters") or ())
        theirs = by_name.get(name) or {}
        decided = sorted((c["name"], int(c.get("replicas") or 0)) for c in theirs.get("clusters") or ())
        if placed == decided:
            report.oracle_agrees += 1
        else:
            report.oracle_differs.append(f"{name}: placed {placed}, Karmada decides {decided} "
                                         f"({theirs.get('reason')}: {theirs.get('message')})")


def _exported(body: dict[str, Any], kind: str) -> dict[str, Any]:
    """`body` as `kubectl get -o json` exports it, without the server's bookkeeping."""
    metadata = {k: v for k, v in body["metadata"].items() if k not in ("managedFields",)}
    api_version = "cluster.karmada.io/v1alpha1" if kind == "Cluster" else "work.karmada.io/v1alpha2"
    return {**body, "apiVersion": body.get("apiVersion") or api_version, "kind": kind, "metadata": metadata}

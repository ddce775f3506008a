"""A bounded chaos soak (minutes; not part of the test command).

    .venv/bin/python -m scripts.chaos_soak --minutes 10 [--bindings 2000] [--clusters 50] [--seed 1]

devcluster runs in this process; two `binding-scheduler run` processes compete for the Lease. For the whole
run, at random: API faults (5xx, 429 with Retry-After, latency, cut connections, lost answers, watch ERROR
events, events cut mid-JSON, watches ended), cluster label flips, cluster deletions and re-creations, binding
scale changes, and the leader killed (-9), stopped (SIGSTOP, then SIGCONT) or terminated, then restarted. At
the end the faults stop, the fleet settles, both processes get SIGTERM, and the invariants are checked:

1. every binding is at rest: wherever Karmada's rules would schedule it on the final state, its placement
   (spec.clusters, order aside) is what `simulate` computes from that state (testsupport/faults/harness.py says why);
2. every binding has a Scheduled condition (a True one for its current generation);
3. nothing was written after the last process exited;
4. no write by a non-leader landed (the writer held the Lease by the last Lease write before it);
5. no process exited except by our signals or a lost Lease.

It prints what happened and the invariants, and exits 1 if one does not hold.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from binding_scheduler.algorithm.schedule import ScheduleOptions
from binding_scheduler.devcluster import DevCluster
from binding_scheduler.model import ValidationError, parse_binding, parse_cluster
from testsupport.faults.harness import expected_at_rest, non_leader_writes, placement_of
from testsupport.operator.harness import (
    apply,
    binding_doc,
    cluster_doc,
    cluster_path,
    namespaces,
    rb_path,
    request,
)

REGIONS = ("us-east", "us-west", "eu-west", "ap-south", "ap-east")
WATCH = r"watch=(true|1)"
LEASE = {"leaseName": "soak", "leaseNamespace": "karmada-system", "leaseDuration": "6s", "renewDeadline": "4s",
         "retryPeriod": "1s"}


def cluster(i: int) -> dict[str, Any]:
    return cluster_doc(f"m{i:03d}", pods=random.choice((50, 100, 400)), labels={"env": random.choice(("prod", "qa"))},
                       region=REGIONS[i % len(REGIONS)], provider=random.choice(("aws", "gcp")))


def binding(i: int) -> dict[str, Any]:
    kind = i % 5
    divided = {"replicaSchedulingType": "Divided"}
    placement: dict[str, Any]
    if kind == 0:
        placement = {"replicaScheduling": {"replicaSchedulingType": "Duplicated"},
                     "clusterAffinity": {"labelSelector": {"matchLabels": {"env": "qa"}}}}
    elif kind == 1:
        placement = {"replicaScheduling": {**divided, "replicaDivisionPreference": "Weighted"},
                     "clusterAffinity": {"labelSelector": {"matchLabels": {"env": "prod"}}}}
    elif kind == 2:
        placement = {"replicaScheduling": {**divided, "replicaDivisionPreference": "Weighted",
                                           "weightPreference": {"dynamicWeight": "AvailableReplicas"}}}
    elif kind == 3:
        placement = {"replicaScheduling": {**divided, "replicaDivisionPreference": "Aggregated"}}
    else:
        placement = {"replicaScheduling": {**divided, "replicaDivisionPreference": "Weighted",
                                           "weightPreference": {"dynamicWeight": "AvailableReplicas"}},
                     "spreadConstraints": [{"spreadByField": "region", "minGroups": 2, "maxGroups": 3},
                                           {"spreadByField": "cluster", "minGroups": 3, "maxGroups": 6}]}
    return binding_doc(f"b{i:04d}", namespace="soak", replicas=random.randint(1, 30), placement=placement,
                       scheduler_name="soak")


@dataclass
class Instance:
    identity: str
    log: Path
    process: subprocess.Popen[bytes] | None = None
    stopped: bool = False
    exits: list[str] = field(default_factory=list)


class Soak:
    def __init__(self, api: DevCluster, workdir: Path, clusters: int) -> None:
        self.api = api
        self.workdir = workdir
        self.clusters = clusters
        self.config = workdir / "config.yaml"
        self.config.write_text(yaml.safe_dump({
            "apiVersion": "config.binding-scheduler.io/v1alpha1", "kind": "SchedulerConfiguration",
            "metadata": {"name": "soak"},
            "spec": {"schedulerName": "soak", "workers": 4, "metrics": {"port": 0, "healthPort": 0},
                     "leaderElection": LEASE, "decisionCPULimit": "2s"},
        }))
        self.instances = [Instance(name, workdir / f"{name}.log") for name in ("alpha", "beta")]
        self.events: Counter[str] = Counter()
        self.deleted: set[int] = set()

    def start(self, instance: Instance) -> None:
        with instance.log.open("ab") as log:
            instance.process = subprocess.Popen(
                [sys.executable, "-m", "binding_scheduler.cli.main", "run", "--kubeconfig",
                 str(self.api.kubeconfig_path), "--namespace", "karmada-system", "--config-file", str(self.config),
                 "--identity", instance.identity],
                stdout=log, stderr=log, env={**os.environ, "PYTHONUNBUFFERED": "1"},
            )
        instance.stopped = False

    def reap(self, instance: Instance, how: str) -> None:
        process = instance.process
        assert process is not None
        code = process.wait(timeout=60)
        instance.exits.append(f"{how}:{code}")

    def leader(self) -> Instance | None:
        _, lease = request(self.api, "GET", "/apis/coordination.k8s.io/v1/namespaces/karmada-system/leases/soak")
        holder = ((lease or {}).get("spec") or {}).get("holderIdentity")
        return next((i for i in self.instances if i.identity == holder), None)

    # -- chaos -----------------------------------------------------------------------------------------

    def check_unexpected_exits(self) -> None:
        for instance in self.instances:
            process = instance.process
            if process is not None and not instance.stopped and process.poll() is not None:
                text = instance.log.read_text(errors="replace")
                cause = "lost-lease" if "lost the lease" in text.rsplit("acquired lease", 1)[-1] else "UNEXPECTED"
                instance.exits.append(f"{cause}:{process.returncode}")
                self.events[f"exit {cause}"] += 1
                self.start(instance)

    def leader_fault(self) -> None:
        leader = self.leader()
        if leader is None or leader.process is None or leader.process.poll() is not None:
            return
        action = random.choice(("kill", "stop-cont", "term"))
        self.events[f"leader {action}"] += 1
        if action == "kill":
            leader.stopped = True
            leader.process.send_signal(signal.SIGKILL)
            self.reap(leader, "kill")
            self.start(leader)
        elif action == "term":
            leader.stopped = True
            leader.process.send_signal(signal.SIGTERM)
            self.reap(leader, "term")
            self.start(leader)
        else:
            leader.process.send_signal(signal.SIGSTOP)
            time.sleep(random.uniform(2.0, 9.0))
            leader.process.send_signal(signal.SIGCONT)

    def api_fault(self) -> None:
        kind = random.choice(("5xx", "429", "latency", "drop", "lose-answer", "watch-error", "watch-cut",
                              "watch-end"))
        self.events[f"api {kind}"] += 1
        faults = self.api.faults
        if kind == "5xx":
            fault = faults.add(method="PATCH", status=random.choice((500, 503)), times=random.randint(1, 20))
        elif kind == "429":
            fault = faults.add(status=429, retry_after=1, times=random.randint(1, 10))
        elif kind == "latency":
            fault = faults.add(delay=random.uniform(0.05, 0.5))
        elif kind == "drop":
            fault = faults.add(method="PATCH", drop=True, times=random.randint(1, 5))
        elif kind == "lose-answer":
            fault = faults.add(method="PATCH", lose_answer=True, times=random.randint(1, 5))
        elif kind == "watch-error":
            fault = faults.add(method="GET", query=WATCH, watch_error=500, times=random.randint(1, 4))
        elif kind == "watch-cut":
            fault = faults.add(method="GET", query=WATCH, cut_event=True, times=random.randint(1, 4))
        else:
            fault = faults.add(method="GET", query=WATCH, end_watch=True, times=random.randint(1, 4))
        time.sleep(random.uniform(0.5, 4.0))
        fault.remove()

    def fleet_change(self) -> None:
        i = random.randrange(self.clusters)
        action = random.choice(("label", "label", "delete-or-create", "scale"))
        self.events[f"fleet {action}"] += 1
        if action == "label":
            request(self.api, "PATCH", cluster_path(f"m{i:03d}"),
                    {"metadata": {"labels": {"env": random.choice(("prod", "qa"))}}})
        elif action == "delete-or-create":
            if i in self.deleted:
                doc = cluster(i)
                status, _ = request(self.api, "POST", "/apis/cluster.karmada.io/v1alpha1/clusters",
                                    {k: v for k, v in doc.items() if k != "status"})
                if status == 201:
                    request(self.api, "PATCH", cluster_path(f"m{i:03d}") + "/status", {"status": doc["status"]})
                    # Karmada schedules nothing on a cluster's creation: its first label update does that
                    request(self.api, "PATCH", cluster_path(f"m{i:03d}"),
                            {"metadata": {"labels": {"soak/joined": "yes"}}})
                    self.deleted.discard(i)
            elif request(self.api, "DELETE", cluster_path(f"m{i:03d}"))[0] == 200:
                self.deleted.add(i)
        else:
            name = f"b{random.randrange(self.bindings):04d}"
            request(self.api, "PATCH", rb_path(name, "soak"), {"spec": {"replicas": random.randint(1, 30)}})

    bindings = 0

    def run(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        next_leader_fault = time.monotonic() + random.uniform(5, 15)
        while time.monotonic() < end:
            self.check_unexpected_exits()
            if time.monotonic() >= next_leader_fault:
                self.leader_fault()
                next_leader_fault = time.monotonic() + random.uniform(5, 15)
            elif random.random() < 0.4:
                self.api_fault()
            else:
                self.fleet_change()
                time.sleep(random.uniform(0.05, 0.5))

    # -- the end ------------------------------------------------------------------------------------------

    def settle(self, timeout: float) -> float:
        """Faults are gone; wait until every binding is settled and nothing was written for 10 s."""
        for fault in list(self.api.faults):
            fault.remove()
        started = time.monotonic()
        while time.monotonic() - started < timeout:
            self.check_unexpected_exits()
            writes = [e.time for e in self.api.journal.writes() if "/leases/" not in e.path]
            quiet = time.monotonic() - max(writes, default=0.0)
            _, listed = request(self.api, "GET", "/apis/work.karmada.io/v1alpha2/namespaces/soak/resourcebindings")
            if quiet > 10 and all(_settled(b) for b in listed["items"]):
                return time.monotonic() - started
            time.sleep(1)
        raise SystemExit(f"not settled within {timeout:g}s")

    def stop(self) -> float:
        for instance in self.instances:
            instance.stopped = True
            if instance.process is not None and instance.process.poll() is None:
                instance.process.send_signal(signal.SIGTERM)
        for instance in self.instances:
            self.reap(instance, "final-term")
        return time.monotonic()


def _names(targets: list[dict[str, Any]] | None) -> str:
    return ",".join(f"{t['name']}:{t.get('replicas', '-')}" for t in targets or [])


def _settled(body: dict[str, Any]) -> bool:
    for item in (body.get("status") or {}).get("conditions") or []:
        if item.get("type") == "Scheduled":
            if item.get("status") != "True":
                return True
            return bool(body["status"].get("schedulerObservedGeneration") == body["metadata"]["generation"])
    return False


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--bindings", type=int, default=2000)
    parser.add_argument("--clusters", type=int, default=50)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    random.seed(args.seed)
    workdir = Path(tempfile.mkdtemp(prefix="chaos-soak-"))
    with DevCluster.in_thread(history=5000, journal_limit=None) as api:
        namespaces(api, "default", "karmada-system", "soak")
        apply(api, *(cluster(i) for i in range(args.clusters)))
        apply(api, *(binding(i) for i in range(args.bindings)))
        soak = Soak(api, workdir, args.clusters)
        soak.bindings = args.bindings
        try:
            for instance in soak.instances:
                soak.start(instance)
            started = time.monotonic()
            soak.run(args.minutes * 60)
            chaos = time.monotonic() - started
            settle = soak.settle(300)
            finished = soak.stop()
        finally:  # whatever went wrong, leave no scheduler running against a vanished emulator
            for instance in soak.instances:
                if instance.process is not None and instance.process.poll() is None:
                    instance.process.kill()
        time.sleep(2)
        report = invariants(api, soak, finished)
    print(json.dumps({"chaos_seconds": round(chaos), "settle_seconds": round(settle), "events": soak.events,
                      "exits": {i.identity: i.exits for i in soak.instances}, "invariants": report,
                      "logs": str(workdir)}, indent=2, default=str))
    return 0 if all(v == "holds" for v in report.values()) else 1


def invariants(api: DevCluster, soak: Soak, finished: float) -> dict[str, str]:
    bodies = api.store.list("resourcebindings", namespace="soak")
    parsed = []
    for body in bodies:
        try:
            parsed.append(parse_binding(body))
        except ValidationError:
            continue
    clusters = [parse_cluster(c) for c in api.store.list("clusters")]
    expected = expected_at_rest(parsed, clusters, ScheduleOptions(cpu_limit=2.0))
    differing = [
        f"soak/{b['metadata']['name']}: {_names(b['spec'].get('clusters'))} != {_names(expected[key])}"
        for b in bodies
        if (key := f"soak/{b['metadata']['name']}") in expected
        and placement_of(b["spec"].get("clusters")) != placement_of(expected[key])
    ]
    unsettled = [b["metadata"]["name"] for b in bodies if not _settled(b)]
    late = [f"{e.method} {e.path}" for e in api.journal.writes() if e.time > finished]
    stray = non_leader_writes(list(api.journal), "soak")
    unexpected = [e for i in soak.instances for e in i.exits if e.startswith("UNEXPECTED")]

    def verdict(problems: list[str]) -> str:
        return "holds" if not problems else f"BROKEN ({len(problems)}): {problems[:5]}"

    return {
        "1 at rest: placement == simulate(final state) wherever a pass would schedule": verdict(differing),
        "2 a Scheduled condition for every generation": verdict(unsettled),
        "3 no write after shutdown": verdict(late),
        "4 no landed write by a non-leader": verdict(stray),
        "5 no exit but by signal or lost Lease": verdict(unexpected),
    }


if __name__ == "__main__":
    sys.exit(main())

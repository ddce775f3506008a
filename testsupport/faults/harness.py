"""One harness for every fault: the example fleet and bindings on devcluster, the real operator, a fault
injected while it works, then the same invariants whatever the fault was.

Invariants (checked by `check_invariants`):
1. every binding is at rest: wherever Karmada's rules (pkg/scheduler/scheduler.go: doScheduleBinding) would
   schedule it on the final state, its placement (`spec.clusters`, order aside) is what `simulate` computes from
   that state. (Where those rules would not schedule it, Karmada keeps its placement even if the fleet changed,
   e.g. static weights after a label flip, so neither do we; `simulate` always decides, so the literal "equals
   simulate" cannot hold there.)
2. every binding has a Scheduled condition, and a True one is for its current generation;
3. nothing was written after the operator's shutdown finished;
4. no write of a non-leader landed (every landed binding write came from the instance holding the Lease);
5. the operator did not exit on its own (only the test's stop ends it, with status 0).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

from binding_scheduler.algorithm.registry import build_plugins
from binding_scheduler.algorithm.schedule import ScheduleOptions
from binding_scheduler.algorithm.snapshot import Snapshot
from binding_scheduler.algorithm.triggers import condition_owed, schedule_trigger
from binding_scheduler.cli.simulate import simulate
from binding_scheduler.devcluster import DevCluster
from binding_scheduler.devcluster.journal import JournalEntry
from binding_scheduler.model import Binding, Cluster, parse_binding, parse_cluster
from testsupport.operator.harness import OperatorThread, apply, condition, request, wait_until

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def example_documents() -> list[dict[str, Any]]:
    documents: list[dict[str, Any]] = []
    for name in ("clusters.yaml", "bindings.yaml"):
        documents.extend(d for d in yaml.safe_load_all((EXAMPLES / name).read_text()) if d and d["kind"] != "Namespace")
    return documents


def load_examples(api: DevCluster) -> list[dict[str, Any]]:
    """The example fleet and bindings, as their controllers would leave them; returns the bindings."""
    documents = example_documents()
    for namespace in sorted({d["metadata"].get("namespace") for d in documents} - {None}):
        api.store.ensure_namespace(namespace)
    apply(api, *documents)
    return [d for d in documents if d["kind"] in ("ResourceBinding", "ClusterResourceBinding")]


def stored_bindings(api: DevCluster) -> list[dict[str, Any]]:
    """Every binding, read over HTTP (the store is the server thread's while it serves)."""
    items: list[dict[str, Any]] = []
    for plural in ("resourcebindings", "clusterresourcebindings"):
        path = f"/apis/work.karmada.io/v1alpha2/{plural}"
        status, answer = request(api, "GET", path)
        assert status == 200, answer
        items.extend(dict(item) for item in answer["items"])
    return items


def settled_condition(body: Mapping[str, Any]) -> bool:
    """Has a Scheduled condition, and a True one is for the binding's current generation."""
    scheduled = condition(body)
    if scheduled is None:
        return False
    if scheduled["status"] != "True":
        return True
    return bool((body.get("status") or {}).get("schedulerObservedGeneration") == body["metadata"]["generation"])


def wait_settled(
    api: DevCluster, operator: OperatorThread, timeout: float = 60.0, options: ScheduleOptions | None = None
) -> None:
    """Every binding carries its outcome (invariant 2 holds) and the operator has no pass queued or running.
    With `options`, also wait until invariant 1 holds: a binding whose write failed during the fault is in
    backoff with a False condition, and its retry after the fault is what the invariant is about. Without
    them, bindings backing off after an error may wait (their condition says why)."""
    service = operator.app.service
    assert service is not None

    def idle() -> bool:
        return operator.call(lambda: service.queue.depth().active == 0 and not service.scheduler.in_flight)

    def converged() -> bool:
        if options is None:
            return True
        expected = simulated_clusters(api, options)
        return all(
            placement_of(b["spec"].get("clusters")) == placement_of(expected[_key(b)])
            for b in stored_bindings(api) if _key(b) in expected
        )

    def done() -> bool:
        return all(settled_condition(b) for b in stored_bindings(api)) and idle() and converged()

    wait_until(done, timeout, "every binding to carry a Scheduled condition for its generation")


def simulated_clusters(api: DevCluster, options: ScheduleOptions) -> dict[str, list[dict[str, Any]]]:
    bindings = [parse_binding(b) for b in stored_bindings(api) if _parses(b)]
    status, answer = request(api, "GET", "/apis/cluster.karmada.io/v1alpha1/clusters")
    assert status == 200, answer
    clusters = [parse_cluster(c) for c in answer["items"]]
    return expected_at_rest(bindings, clusters, options)


def expected_at_rest(
    bindings: list[Binding], clusters: list[Cluster], options: ScheduleOptions
) -> dict[str, list[dict[str, Any]]]:
    """For each binding a pass would schedule now (by doScheduleBinding's rules, or a condition still owed), what
    `simulate` gives."""
    snapshot = Snapshot(clusters)
    due = [
        b for b in bindings
        if schedule_trigger(b, snapshot.by_name, multiple_pod_templates=options.multiple_pod_templates) is not None
        or condition_owed(b)
    ]
    results = asyncio.run(simulate(due, snapshot, build_plugins(), None, options))
    return {r.meta.key: [t.to_dict() for t in r.clusters] for r in results if r.scheduled}


def placement_of(targets: Iterable[Mapping[str, Any]] | None) -> dict[str, int | None]:
    """A placement as it means something: which cluster gets how many replicas. The order of `spec.clusters`
    follows scores that include where the binding already is (ClusterLocality), so a pass run again on the same
    fleet can reorder the same placement; Karmada runs none without a trigger, neither do we."""
    return {str(t["name"]): t.get("replicas") for t in targets or []}


def _parses(body: Mapping[str, Any]) -> bool:
    try:
        parse_binding(body)
    except ValueError:
        return False
    return True


def check_invariants(
    api: DevCluster,
    operators: Iterable[OperatorThread],
    *,
    options: ScheduleOptions | None = None,
    leader_writes: Mapping[str, Iterable[str]] | None = None,
    compare_with_simulate: bool = True,
) -> None:
    """Invariants 1-5, after every operator has been stopped by the test."""
    operators = list(operators)
    for operator in operators:
        assert operator.exit_code == 0, "the operator exited on its own, or not cleanly"
    expected = simulated_clusters(api, options or ScheduleOptions()) if compare_with_simulate else {}
    for body in stored_bindings(api):
        key = _key(body)
        assert settled_condition(body), f"{key}: no Scheduled condition for generation {body['metadata']['generation']}"
        if key in expected:
            assert placement_of(body["spec"].get("clusters")) == placement_of(expected[key]), (
                f"{key}: not what simulate decides: {body['spec'].get('clusters')} != {expected[key]}"
            )
    finished = max((op.app.service.finished_at or 0.0) for op in operators if op.app.service is not None)
    late = [f"{e.method} {e.path} {e.status}" for e in api.journal.writes() if e.time > finished]
    assert late == [], f"written after the shutdown finished: {late}"
    if leader_writes is not None:
        for identity, paths in leader_writes.items():
            assert list(paths) == [], f"{identity} wrote while it was not the leader: {list(paths)}"


AGENT = re.compile(r"binding-scheduler \((?P<identity>[^)]*)\)")


def non_leader_writes(entries: Iterable[JournalEntry], lease_name: str) -> list[str]:
    """Invariant 4: the landed binding writes whose sender (named in its User-Agent) did not hold the Lease,
    by the last successful write of the Lease before it."""
    holder, bad = "", []
    for entry in entries:
        if not entry.is_write or not 200 <= entry.status < 300:
            continue
        if entry.path.endswith(f"/leases/{lease_name}") or entry.path.endswith("/leases"):
            if ((entry.body or {}).get("metadata") or {}).get("name", lease_name) == lease_name:
                holder = str(((entry.body or {}).get("spec") or {}).get("holderIdentity") or "")
            continue
        match = AGENT.match(entry.user_agent)
        if "resourcebindings/" not in entry.path or match is None:
            continue  # not a binding write, or not one of ours (the test's own)
        if match.group("identity") != holder:
            bad.append(f"{entry.method} {entry.path} by {match.group('identity')!r} while {holder!r} held the Lease")
    return bad


def _key(body: Mapping[str, Any]) -> str:
    metadata = body["metadata"]
    return f"{metadata['namespace']}/{metadata['name']}" if metadata.get("namespace") else metadata["name"]

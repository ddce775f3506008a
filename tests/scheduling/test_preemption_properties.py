"""Properties of preemption over a random cluster (Karmada's open PR #7832 rules, with our claims): a preemptor never
evicts a binding of its priority or more, and once its victims leave, neither they (coming back) nor it overcommit
the cluster: the claim keeps what was freed for the preemptor."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from binding_scheduler.algorithm.preemption import PreemptingError
from binding_scheduler.algorithm.registry import build_plugins
from binding_scheduler.algorithm.snapshot import Snapshot
from binding_scheduler.model import Binding, TargetCluster, parse_binding, parse_cluster
from binding_scheduler.scheduling.framework.preemptor import Preemption
from binding_scheduler.scheduling.framework.runner import Framework
from binding_scheduler.scheduling.state.claims import PreemptionClaims
from testsupport.builders import AGGREGATED, binding, cluster, names, placement

PREEMPTOR = 1000


def workload(name: str, priority: int, replicas: int, cpu: int, placed: bool) -> Binding:
    body = binding(name, replicas=replicas, requests={"cpu": f"{cpu}m"}, uid=f"uid-{name}",
                   clusters={"m1": replicas} if placed else None,
                   placement=placement(affinity=names("m1"), scheduling=AGGREGATED))
    body["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
    body["spec"]["schedulePriority"] = {"priority": priority, "preemptionPolicy": "PreemptLowerPriority"}
    return parse_binding(body)


def fleet(capacity: int, used: int) -> Snapshot:
    return Snapshot([parse_cluster(cluster("m1", allocatable={"cpu": f"{capacity}m", "pods": "1000"},
                                           allocated={"cpu": f"{used}m", "pods": "0"}))])


def usage(binding: Binding, clusters: tuple[TargetCluster, ...]) -> int:
    request = binding.replica_requirements.resource_request["cpu"].milli_value()  # type: ignore[union-attr]
    return sum(t.replicas for t in clusters if t.name == "m1") * request


placed_workloads = st.lists(st.tuples(st.integers(0, PREEMPTOR + 5), st.integers(1, 4), st.integers(5, 20)),
                            min_size=1, max_size=6)


@settings(max_examples=60, deadline=None)
@given(placed_workloads, st.integers(1, 5), st.integers(5, 20), st.integers(0, 20))
def test_preemption_never_overcommits_or_evicts_equal_priority(
    drawn: list[tuple[int, int, int]], replicas: int, cpu: int, slack: int,
) -> None:
    asyncio.run(_preempt_then_settle(drawn, replicas, cpu, slack))


async def _preempt_then_settle(drawn: list[tuple[int, int, int]], replicas: int, cpu: int, slack: int) -> None:
    stored = [workload(f"w{i}", priority, count, each, placed=True) for i, (priority, count, each) in enumerate(drawn)]
    preemptor = workload("high", PREEMPTOR, replicas, cpu, placed=False)
    used = sum(usage(b, b.clusters) for b in stored)
    capacity = used + slack
    claims = PreemptionClaims()
    bindings = [*stored, preemptor]
    framework = Framework(build_plugins(), preemptor=Preemption(lambda: bindings, claims, max_victims=100))

    decision = await framework.decide(preemptor, fleet(capacity, used))
    if not isinstance(decision.error, PreemptingError):
        return
    plan = decision.error.plan
    assert plan.victims
    victims = {v.key for v in plan.victims}
    assert all(b.schedule_priority < PREEMPTOR for b in stored if b.key in victims)
    claims.set(plan.claim())

    # The victims leave m1 (and, the grace period over, carry no eviction task): they and the preemptor decide again.
    remaining = [b for b in stored if b.key not in victims]
    left = [replace(b, clusters=()) for b in stored if b.key in victims]
    bindings[:] = [*remaining, *left, preemptor]
    now_used = sum(usage(b, b.clusters) for b in remaining)
    placed_now = now_used
    for victim in left:
        result = await framework.decide(victim, fleet(capacity, placed_now))
        placed_now += usage(victim, result.clusters or ())
    final = await framework.decide(preemptor, fleet(capacity, placed_now))
    placed_now += usage(preemptor, final.clusters or ())

    assert placed_now <= capacity
    assert final.error is None and usage(preemptor, final.clusters or ()) == replicas * cpu

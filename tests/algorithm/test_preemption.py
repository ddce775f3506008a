"""Binding priority preemption's pure rules, as Karmada's open PR #7832 defines them
(pkg/scheduler/core/preemption.go: isPreemptionApplicable, listPreemptionVictimCandidates,
selectVictimsByReplicaCount; preemption_claims.go: withClaimDeductions): who may preempt, who may be a victim,
which victims, and what live claims take from a cluster."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from binding_scheduler.algorithm.preemption import (
    Candidate,
    Claim,
    PreemptionGates,
    claimed_replicas,
    not_applicable,
    select_victims,
    victim_candidates,
)
from binding_scheduler.model import Binding, parse_binding
from testsupport.builders import AGGREGATED, DUPLICATED, DYNAMIC_WEIGHT, binding, names, placement, term

BOTH = PreemptionGates(priority_based_scheduling=True, priority_based_preemptive_scheduling=True)
HIGH, LOW = 1000, 100


def prioritized(
    name: str = "high", *, priority: int = HIGH, policy: str | None = "PreemptLowerPriority", replicas: int = 3,
    cpu: str | None = "10m", created: str = "2026-01-01T00:00:00Z", **kwargs: Any,
) -> Binding:
    kwargs.setdefault("placement", placement(affinity=names("m1"), scheduling=AGGREGATED))
    body = binding(name, replicas=replicas, requests={"cpu": cpu} if cpu else None, **kwargs)
    body["metadata"]["creationTimestamp"] = created
    body["spec"]["schedulePriority"] = {"priority": priority, **({"preemptionPolicy": policy} if policy else {})}
    return parse_binding(body)


# -- who may preempt ----------------------------------------------------------------------------------------


def test_rb_may_preempt_with_both_gates() -> None:
    assert not_applicable(prioritized(), BOTH) is None


@pytest.mark.parametrize(("gates", "reason"), [
    (PreemptionGates(), "gates PriorityBasedScheduling and PriorityBasedPreemptiveScheduling are not both on"),
    (PreemptionGates(priority_based_preemptive_scheduling=True),
     "gates PriorityBasedScheduling and PriorityBasedPreemptiveScheduling are not both on"),
    (PreemptionGates(priority_based_scheduling=True),
     "gates PriorityBasedScheduling and PriorityBasedPreemptiveScheduling are not both on"),
], ids=["neither", "preemptive-only", "priority-only"])
def test_preemption_needs_both_gates(gates: PreemptionGates, reason: str) -> None:
    assert not_applicable(prioritized(), gates) == reason


@pytest.mark.parametrize(("binding_", "reason"), [
    (prioritized(policy="Never"), "its preemptionPolicy is Never"),
    (prioritized(policy=None), "its preemptionPolicy is Never"),
    (prioritized(cpu=None), "it requests no resources"),
    (prioritized(cpu="0"), "it requests no resources"),
    (prioritized(placement=placement(affinity=names("m1"), scheduling=DUPLICATED)),
     "its replicas are not Divided and Aggregated"),
    (prioritized(placement=placement(affinity=names("m1"), scheduling=DYNAMIC_WEIGHT)),
     "its replicas are not Divided and Aggregated"),
    (prioritized(placement=placement(affinities=[term("only", "m1")], scheduling=AGGREGATED)),
     "its placement has no clusterAffinity, or has clusterAffinities"),
    (prioritized(placement=placement(scheduling=AGGREGATED)),
     "its placement has no clusterAffinity, or has clusterAffinities"),
    (prioritized(cluster_scoped=True), "a ClusterResourceBinding never preempts"),
], ids=["never", "no-policy", "no-request", "zero-request", "duplicated", "dynamic-weight", "cluster-affinities",
        "no-affinity", "cluster-scoped"])
def test_preemption_needs_every_requirement(binding_: Binding, reason: str) -> None:
    assert not_applicable(binding_, BOTH) == reason


# -- who may be a victim ------------------------------------------------------------------------------------


def placed(name: str, priority: int, replicas: int = 3, **kwargs: Any) -> Binding:
    kwargs.setdefault("clusters", {"m1": replicas})
    return prioritized(name, priority=priority, policy="Never", replicas=replicas, **kwargs)


def test_only_lower_priority_bindings_are_candidates() -> None:
    stored = [
        placed("lower", LOW),
        placed("equal", HIGH),
        placed("higher", HIGH + 1),
        placed("elsewhere", LOW, clusters={"m2": 3}),
        placed("evicting", LOW, evicting=["m1"]),
        placed("no-request", LOW, cpu=None),
        placed("other-namespace", LOW, namespace="shop"),
        placed("crb", LOW, cluster_scoped=True),
    ]

    found = victim_candidates(prioritized(), "m1", stored)

    assert [c.key for c in found] == ["default/lower", "shop/other-namespace"]
    assert (found[0].priority, found[0].replicas, dict(found[0].request)) == (LOW, 3, {"cpu": 10})


def test_binding_of_another_scheduler_is_no_candidate() -> None:
    other = replace(placed("other", LOW), scheduler_name="other-scheduler")

    assert victim_candidates(prioritized(), "m1", [other]) == []


def test_preemptor_itself_is_never_own_candidate() -> None:
    assert victim_candidates(prioritized(priority=HIGH), "m1", [prioritized(priority=HIGH)]) == []


# -- which victims ------------------------------------------------------------------------------------------


def candidate(key: str, priority: int, replicas: int = 1, cpu: int = 10, created: float = 0.0) -> Candidate:
    return Candidate(f"default/{key}", priority, replicas, {"cpu": cpu}, datetime.fromtimestamp(created, UTC))


def victims(preemptor: Binding, available: int, *candidates: Candidate) -> list[str] | None:
    chosen = select_victims(preemptor, available, candidates)
    return None if chosen is None else [c.key.removeprefix("default/") for c in chosen]


def test_no_deficit_means_no_preemption() -> None:
    assert victims(prioritized(replicas=3), 3, candidate("low", LOW)) is None


def test_too_little_freed_means_no_preemption() -> None:
    assert victims(prioritized(replicas=3), 0, candidate("a", LOW), candidate("b", LOW)) is None


def test_deficit_alone_is_freed_by_lowest_priority_first() -> None:
    """Three missing replicas of 10m: 30m to free. Spared from the highest priority down while the rest cover it."""
    chosen = victims(prioritized(replicas=3), 0, candidate("p50", 50, replicas=3), candidate("p90", 90, replicas=3),
                     candidate("p10", 10, replicas=3))
    assert chosen == ["p10"]


def test_among_equal_priorities_newest_goes_first() -> None:
    chosen = victims(prioritized(replicas=1), 0,
                     candidate("old", LOW, created=100.0), candidate("new", LOW, created=200.0))
    assert chosen == ["new"]


def test_replicas_already_available_shrink_deficit() -> None:
    chosen = victims(prioritized(replicas=3), 2, candidate("one", LOW, replicas=1), candidate("two", 10, replicas=2))
    assert chosen == ["two"]  # one replica missing: the lower priority goes, the other is spared


def test_every_requested_resource_must_be_covered() -> None:
    preemptor = parse_binding(binding("high", replicas=1, requests={"cpu": "10m", "memory": "1Gi"},
                                      placement=placement(affinity=names("m1"), scheduling=AGGREGATED)))
    cpu_only = Candidate("default/cpu-only", LOW, 5, {"cpu": 100})
    assert select_victims(preemptor, 0, [cpu_only]) is None


@given(st.lists(st.tuples(st.integers(0, HIGH - 1), st.integers(1, 5), st.integers(1, 40), st.integers(0, 10**6)),
                min_size=0, max_size=12),
       st.integers(0, 6), st.integers(1, 8), st.integers(1, 40))
def test_victims_cover_deficit_and_none_of_them_could_be_spared(
    drawn: list[tuple[int, int, int, int]], available: int, replicas: int, cpu: int,
) -> None:
    preemptor = prioritized(replicas=replicas, cpu=f"{cpu}m")
    candidates = [candidate(f"c{i}", priority, count, each, created)
                  for i, (priority, count, each, created) in enumerate(drawn)]
    chosen = select_victims(preemptor, available, candidates)
    need = cpu * (replicas - available)
    total = sum(c.replicas * c.request["cpu"] for c in candidates)
    if need <= 0 or total < need:
        assert chosen is None
        return
    assert chosen is not None
    assert all(c.priority < preemptor.schedule_priority for c in chosen)
    freed = sum(c.replicas * c.request["cpu"] for c in chosen)
    assert freed >= need
    assert all(freed - c.replicas * c.request["cpu"] < need for c in chosen)


# -- what claims take -------------------------------------------------------------------------------------


def claim(key: str, priority: int, replicas: int = 3, cpu: int = 10, cluster: str = "m1") -> Claim:
    return Claim(f"default/{key}", cluster, priority, replicas, {"cpu": cpu})


def test_equal_or_higher_claims_take_their_replicas() -> None:
    requester = prioritized("victim", priority=LOW, cpu="4m")
    claims = [claim("equal", LOW, replicas=3, cpu=10), claim("higher", HIGH, replicas=1, cpu=5),
              claim("lower", LOW - 1), claim("elsewhere", HIGH, cluster="m2")]

    assert claimed_replicas(requester, "m1", claims) == 8 + 2  # ceil(30m / 4m) + ceil(5m / 4m)


def test_requesters_own_claim_takes_nothing_from_it() -> None:
    assert claimed_replicas(prioritized("high"), "m1", [claim("high", HIGH)]) == 0


def test_claim_takes_by_resource_that_needs_most_replicas() -> None:
    requester = parse_binding(binding("small", replicas=1, requests={"cpu": "10m", "memory": "1Mi"}))
    wide = Claim("default/wide", "m1", 0, 2, {"cpu": 10, "memory": 10 * 1024 * 1024 * 1000})

    assert claimed_replicas(requester, "m1", [wide]) == 20  # memory: 2 x 10 Mi / 1 Mi; cpu only 2 x 10m / 10m


# -- edges found by mutation ---------------------------------------------------------------------------------


def test_one_component_may_preempt_and_two_may_not() -> None:
    one = prioritized(components=[{"name": "a", "replicas": 3}])
    two = prioritized(components=[{"name": "a", "replicas": 1}, {"name": "b", "replicas": 2}])

    assert (not_applicable(one, BOTH), not_applicable(two, BOTH)) == (None, "it has more than one component")


def test_duplicated_replicas_never_preempt() -> None:
    duplicated = {"replicaSchedulingType": "Duplicated", "replicaDivisionPreference": "Aggregated"}

    assert not_applicable(prioritized(placement=placement(affinity=names("m1"), scheduling=duplicated)), BOTH) == (
        "its replicas are not Divided and Aggregated")


def test_non_candidates_hide_no_later_ones() -> None:
    stored = [placed("crb", LOW, cluster_scoped=True), placed("equal", HIGH), placed("evicting", LOW, evicting=["m1"]),
              placed("one-replica", LOW, replicas=1, created="2025-06-01T00:00:00Z")]

    (found,) = victim_candidates(prioritized(), "m1", stored)

    assert (found.key, found.replicas) == ("default/one-replica", 1)
    assert found.created == datetime(2025, 6, 1, tzinfo=UTC)


def test_candidate_without_creation_time_spared_first() -> None:
    unknown = Candidate("default/unknown", LOW, 1, {"cpu": 10}, None)
    chosen = select_victims(prioritized(replicas=1), 0, [candidate("dated", LOW, created=10.0), unknown])

    assert [c.key for c in chosen or ()] == ["default/dated"]


def test_requester_that_requests_nothing_loses_nothing_to_claims() -> None:
    assert claimed_replicas(prioritized(cpu=None), "m1", [claim("higher", HIGH)]) == 0


def test_every_claim_on_cluster_counts_whatever_comes_before_it() -> None:
    requester = prioritized("victim", priority=LOW, cpu="10m")
    claims = [claim("elsewhere", HIGH, cluster="m2"), claim("lower", LOW - 1), claim("counted", HIGH, replicas=2)]

    assert claimed_replicas(requester, "m1", claims) == 2


def test_claim_on_unrequested_resource_takes_nothing() -> None:
    requester = prioritized("victim", priority=LOW, cpu="10m")
    memory_only = Claim("default/other", "m1", HIGH, 3, {"memory": 1000})

    assert claimed_replicas(requester, "m1", [memory_only]) == 0

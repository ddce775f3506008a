"""Preemption's claims and its planner's bounds (scheduling/passes/preemption.py): which claims a new one replaces, when
one blocks another preemptor or expires, how a claim written on a preemptor is read back, and the exact edges
of the victims, candidates and rate bounds, each with the warning that says why nothing was preempted."""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import pytest

from binding_scheduler.algorithm.errors import SchedulingError
from binding_scheduler.algorithm.plugins import AttemptContext
from binding_scheduler.algorithm.preemption import Claim, PreemptingError
from binding_scheduler.algorithm.schedule import candidates_of
from binding_scheduler.model import Binding, parse_binding, parse_cluster
from binding_scheduler.scheduling.framework.preemptor import Preemption
from binding_scheduler.scheduling.state.claims import CLAIM_ANNOTATION, PreemptionClaims, claim_annotation, read_claim
from testsupport.builders import AGGREGATED, binding, cluster, names, placement, snapshot

HIGH, LOW = 1000, 100
PREEMPTION = "binding_scheduler.scheduling.passes.preemption"


def claim(key: str, priority: int, cluster_name: str = "m1") -> Claim:
    return Claim(f"default/{key}", cluster_name, priority, 3, {"cpu": 10})


def held(claims: PreemptionClaims) -> list[str]:
    return sorted(c.key.removeprefix("default/") for name in ("m1", "m2") for c in claims.on(name))


# -- claims ---------------------------------------------------------------------------------------------------


def test_claim_replaces_lower_claims_there() -> None:
    claims = PreemptionClaims(clock=lambda: 0.0)
    for other in (claim("higher", HIGH + 1), claim("equal", HIGH), claim("lower", HIGH - 1),
                  claim("elsewhere", LOW, "m2")):
        claims.set(other)

    claims.set(claim("new", HIGH))

    assert held(claims) == ["elsewhere", "equal", "higher", "new"]


def test_claim_lasts_until_deadline_and_not_instant_more() -> None:
    now = [0.0]
    claims = PreemptionClaims(clock=lambda: now[0])
    assert claims.set(claim("given", HIGH), until=50.0) == 50.0
    assert claims.set(claim("default", HIGH, "m2")) == 600.0
    now[0] = 49.999
    assert claims.of("default/given") is not None
    now[0] = 50.0
    assert (claims.of("default/given"), claims.of("default/default") is not None) == (None, True)


def test_equal_or_higher_claim_blocks_preempting_on_cluster() -> None:
    claims = PreemptionClaims(clock=lambda: 0.0)
    claims.set(claim("equal", HIGH))
    preemptor = prioritized("high", HIGH)

    assert claims.blocking("m1", preemptor)
    assert not claims.blocking("m2", preemptor)
    assert not claims.blocking("m1", prioritized("equal", HIGH))  # its own claim never blocks it


def test_claim_round_trips_through_annotation() -> None:
    written = claim("high", HIGH)

    assert read_claim("default/high", claim_annotation(written, 1234.5)) == (written, 1234.5)


def test_bad_claim_annotation_ignored_with_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger=PREEMPTION):
        assert read_claim("default/high", '{"cluster": "m1"}') is None
    assert caplog.messages == [
        f"binding default/high: annotation {CLAIM_ANNOTATION} is not a preemption claim ('priority'): ignored"]


def test_held_or_ending_claim_not_taken_up() -> None:
    claims = PreemptionClaims(clock=lambda: 100.0)
    claims.set(claim("high", HIGH, "m2"), until=500.0)
    claims.take_up("default/high", {CLAIM_ANNOTATION: claim_annotation(claim("high", HIGH), 400.0)})
    claims.take_up("default/late", {CLAIM_ANNOTATION: claim_annotation(claim("late", HIGH), 100.0)})

    held_now = claims.of("default/high")
    assert held_now is not None and held_now.cluster == "m2"
    assert claims.of("default/late") is None


def test_dropped_claim_not_taken_from_annotation_new_one_is() -> None:
    claims = PreemptionClaims(clock=lambda: 100.0)
    until = claims.set(claim("high", HIGH), until=400.123456)
    claims.drop("default/high")

    claims.take_up("default/high", {CLAIM_ANNOTATION: claim_annotation(claim("high", HIGH), until)})
    dropped = claims.of("default/high")
    claims.take_up("default/high", {CLAIM_ANNOTATION: claim_annotation(claim("high", HIGH, "m2"), 700.0)})
    renewed = claims.of("default/high")

    assert dropped is None
    assert renewed is not None and renewed.cluster == "m2"


# -- the planner's bounds ---------------------------------------------------------------------------------


def prioritized(name: str, priority: int, *, replicas: int = 3, placed: bool = False, **extra: Any) -> Binding:
    body = binding(name, replicas=replicas, requests={"cpu": "10m"}, uid=f"uid-{name}",
                   clusters={"m1": replicas} if placed else None,
                   placement=placement(affinity=names("m1"), scheduling=AGGREGATED))
    body["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
    body["spec"]["schedulePriority"] = {"priority": priority, "preemptionPolicy": "PreemptLowerPriority"}
    body["spec"].update(extra)
    return parse_binding(body)


def plan_for(preemption: Preemption, preemptor: Binding) -> Any:
    """The plan for `preemptor` on a full m1 (30m, all allocated)."""
    fleet = snapshot(parse_cluster(cluster("m1", allocatable={"cpu": "30m", "pods": "1000"},
                                           allocated={"cpu": "30m", "pods": "0"})))
    ctx = AttemptContext.of(preemptor, fleet)
    candidates = candidates_of(preemptor, ctx, np.flatnonzero(fleet.columns.live), {}, {})
    candidates.estimated(np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64))
    return preemption.plan(candidates, {})


def test_preemption_allows_exactly_max_victims(
    caplog: pytest.LogCaptureFixture,
) -> None:
    victims = [prioritized(f"v{i}", LOW, replicas=1, placed=True) for i in range(3)]
    limited: list[str] = []
    exact = Preemption(lambda: victims, PreemptionClaims(), max_victims=3)
    short = Preemption(lambda: victims, PreemptionClaims(), max_victims=2, on_limited=limited.append)

    assert len(plan_for(exact, prioritized("high", HIGH)).victims) == 3
    with caplog.at_level(logging.WARNING, logger=PREEMPTION):
        assert plan_for(short, prioritized("high", HIGH)) is None
    assert limited == ["victims"]
    assert caplog.messages == ["binding default/high: preempting on cluster m1 would evict 3 bindings, more than "
                               "spec.preemption.maxVictims (2): nothing preempted"]


def test_over_thousand_bindings_on_cluster_fail_preemption() -> None:
    victims = [prioritized(f"v{i}", LOW, replicas=1, placed=True) for i in range(3)]
    crowd = [prioritized(f"c{i}", HIGH + 1, replicas=1, placed=True) for i in range(997)]
    at_the_bound = Preemption(lambda: [*victims, *crowd], PreemptionClaims(), max_victims=100)
    past_it = Preemption(lambda: [*victims, *crowd, prioritized("one-more", HIGH + 1, replicas=1, placed=True)],
                         PreemptionClaims(), max_victims=100)

    assert plan_for(at_the_bound, prioritized("high", HIGH)) is not None
    with pytest.raises(SchedulingError) as raised:
        plan_for(past_it, prioritized("high", HIGH))
    assert str(raised.value) == "too many preemption victim candidates on cluster m1: 1001 bindings, at most 1000"


def test_rate_bound_counts_last_minute(
    caplog: pytest.LogCaptureFixture,
) -> None:
    now = [1000.0]
    limited: list[str] = []
    victims = [prioritized("low", LOW, placed=True)]
    preemption = Preemption(lambda: victims, PreemptionClaims(), max_victims=100, max_per_minute=1,
                            on_limited=limited.append, clock=lambda: now[0])
    assert plan_for(preemption, prioritized("first", HIGH)) is not None
    now[0] = 1059.999
    with caplog.at_level(logging.WARNING, logger=PREEMPTION):
        assert plan_for(preemption, prioritized("second", HIGH)) is None
    assert limited == ["rate"]
    assert caplog.messages == ["binding default/second: 1 preemptions in the last minute, "
                               "spec.preemption.maxPerMinute: not preempting on cluster m1 now"]
    now[0] = 1060.0  # exactly a minute later the first has left the window
    assert plan_for(preemption, prioritized("second", HIGH)) is not None


def test_default_rate_bound_is_thirty_minute() -> None:
    assert Preemption(list, PreemptionClaims(), max_victims=1).max_per_minute == 30


def test_preemptor_blocked_by_equal_priority_claim_plans_nothing() -> None:
    claims = PreemptionClaims()
    claims.set(claim("rival", HIGH))
    preemption = Preemption(lambda: [prioritized("low", LOW, placed=True)], claims, max_victims=100)

    assert plan_for(preemption, prioritized("high", HIGH)) is None


def test_waiting_preemptors_plan_evicts_no_one() -> None:
    claims = PreemptionClaims()
    claims.set(claim("high", HIGH))
    preemption = Preemption(lambda: [prioritized("low", LOW, placed=True)], claims, max_victims=100)

    plan = plan_for(preemption, prioritized("high", HIGH, replicas=3))
    assert (plan.preemptor, plan.priority, plan.cluster, plan.victims, plan.replicas, dict(plan.request)) == (
        "default/high", HIGH, "m1", (), 3, {"cpu": 10})
    assert PreemptingError(plan, SchedulingError("x")).message == 'waiting for the capacity preempted on cluster "m1"'


# -- preemptors waiting behind another's claim ------------------------------------------------------------------


class Woken(list[tuple[str, int]]):
    def __call__(self, key: str, priority: int) -> None:
        self.append((key, priority))


def waiting(clock: Any = lambda: 0.0) -> tuple[PreemptionClaims, Woken]:
    """Claims where "first" holds m1 and "second" (same priority) waits behind it."""
    claims, woken = PreemptionClaims(clock=clock), Woken()
    claims.on_free = woken
    claims.set(claim("first", HIGH))
    preemption = Preemption(lambda: [prioritized("low", LOW, placed=True)], claims, max_victims=100)
    assert plan_for(preemption, prioritized("second", HIGH)) is None
    return claims, woken


def test_blocked_preemptor_woken_when_claimant_placed() -> None:
    claims, woken = waiting()
    assert woken == []
    claims.clear("default/first")
    assert woken == [("default/second", HIGH)]


def test_blocked_preemptor_woken_when_it_fails() -> None:
    claims, woken = waiting()
    claims.drop("default/first")
    assert woken == [("default/second", HIGH)]


def test_blocked_preemptor_woken_on_expiry() -> None:
    now = [0.0]
    claims, woken = waiting(clock=lambda: now[0])
    now[0] = 600.0
    assert claims.on("m1") == []
    assert woken == [("default/second", HIGH)]


def test_blocked_preemptor_woken_on_capacity_change() -> None:
    claims, woken = waiting()
    claims.freed("m2")
    assert woken == []
    claims.freed("m1")
    claims.freed("m1")
    assert woken == [("default/second", HIGH)]


def test_preemptor_still_blocked_not_woken_when_one_claim_ends() -> None:
    claims, woken = waiting()
    claims.set(claim("third", HIGH))
    claims.clear("default/first")
    assert woken == []
    claims.clear("default/third")
    assert woken == [("default/second", HIGH)]


def test_waiting_preemptor_placed_or_gone_meanwhile_is_not_woken() -> None:
    claims, woken = waiting()
    claims.clear("default/second")
    claims.clear("default/first")
    assert woken == []


def test_blocked_preemptor_woken_when_claim_moves() -> None:
    claims, woken = waiting()
    claims.set(claim("first", HIGH, "m2"))
    assert woken == [("default/second", HIGH)]


def test_placed_preemptors_old_claim_ignored() -> None:
    claims = PreemptionClaims(clock=lambda: 100.0)
    until = claims.set(claim("high", HIGH), until=400.0)
    claims.clear("default/high")
    claims.take_up("default/high", {CLAIM_ANNOTATION: claim_annotation(claim("high", HIGH), until)})
    assert claims.of("default/high") is None

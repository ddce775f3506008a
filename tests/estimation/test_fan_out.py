"""One fan-out: every candidate asked at once; what is kept when some clusters fail."""

from __future__ import annotations

import logging

import pytest
from prometheus_client import CollectorRegistry

from binding_scheduler.estimation import FAILURES_METRIC
from binding_scheduler.model import Cluster
from tests.estimation.helpers import MakeEstimator, StartStub

INT32_MAX = 2**31 - 1


def clusters(*names: str) -> list[Cluster]:
    return [Cluster(name=name) for name in names]


def failures_counted(registry: CollectorRegistry, cluster: str, reason: str) -> float:
    return registry.get_sample_value(f"{FAILURES_METRIC}_total", {"cluster": cluster, "reason": reason}) or 0.0


async def test_every_cluster_answers(stubs: StartStub, make_estimator: MakeEstimator) -> None:
    a, b = await stubs("a", replicas=3), await stubs("b", replicas=INT32_MAX)
    answer = await make_estimator([a, b]).max_available_replicas(clusters("a", "b"), None)
    assert dict(answer.replicas) == {"a": 3, "b": INT32_MAX}
    assert dict(answer.failures) == {}


async def test_component_sets_are_asked_with_their_own_method(stubs: StartStub, make_estimator: MakeEstimator) -> None:
    a = await stubs("a", replicas=3, sets=2)
    answer = await make_estimator([a]).max_available_component_sets(clusters("a"), [], "ns")
    assert dict(answer.replicas) == {"a": 2}
    assert a.calls[0].method.endswith("/MaxAvailableComponentSets")


async def test_unauthentic_replica_passes_through(stubs: StartStub, make_estimator: MakeEstimator) -> None:
    a = await stubs("a", replicas=-1)
    answer = await make_estimator([a]).max_available_replicas(clusters("a"), None)
    assert dict(answer.replicas) == {"a": -1}
    assert dict(answer.failures) == {}


async def test_cluster_listed_twice_is_asked_once(stubs: StartStub, make_estimator: MakeEstimator) -> None:
    a = await stubs("a", replicas=3)
    answer = await make_estimator([a]).max_available_replicas(clusters("a", "a"), None)
    assert dict(answer.replicas) == {"a": 3}
    assert len(a.calls) == 1


async def test_no_candidates_no_calls(make_estimator: MakeEstimator) -> None:
    answer = await make_estimator().max_available_replicas([], None)
    assert (dict(answer.replicas), dict(answer.failures)) == ({}, {})


async def test_refused_connection_keeps_other_answers(
    stubs: StartStub, make_estimator: MakeEstimator, refused_address: str, registry: CollectorRegistry
) -> None:
    a = await stubs("a", replicas=3)
    answer = await make_estimator([a], endpoints={"down": refused_address}).max_available_replicas(
        clusters("a", "down"), None
    )
    assert dict(answer.replicas) == {"a": 3}
    assert answer.failures["down"].startswith(f"cluster down: cannot connect to the estimator: {refused_address}: ")
    assert failures_counted(registry, "down", "dial") == 1


async def test_unknown_error_keeps_other_answers(
    stubs: StartStub, make_estimator: MakeEstimator, registry: CollectorRegistry
) -> None:
    a, bad = await stubs("a", replicas=3), await stubs("bad", replicas=3, mode="error", error_message="boom")
    answer = await make_estimator([a, bad]).max_available_replicas(clusters("a", "bad"), None)
    assert dict(answer.replicas) == {"a": 3}
    assert dict(answer.failures) == {
        "bad": "gRPC request cluster(bad) estimator error when calling MaxAvailableReplicas: UNKNOWN: boom"
    }
    assert failures_counted(registry, "bad", "rpc_error") == 1


@pytest.mark.parametrize(
    ("options", "why"),
    [
        ({"replicas": -2}, "answer -2 is outside -1..2147483647"),
        ({"replicas": 2**40}, "answer 1099511627776 is outside -1..2147483647"),
        ({"replicas": 1, "mode": "garbage"}, "undecodable response (1 bytes)"),
    ],
    ids=["negative", "absurd", "garbage"],
)
async def test_invalid_answer_is_failure(
    stubs: StartStub, make_estimator: MakeEstimator, registry: CollectorRegistry, options: dict[str, object], why: str
) -> None:
    a, bad = await stubs("a", replicas=3), await stubs("bad", **options)
    answer = await make_estimator([a, bad]).max_available_replicas(clusters("a", "bad"), None)
    assert dict(answer.replicas) == {"a": 3}
    assert answer.failures["bad"].startswith(f"cluster bad: invalid answer to MaxAvailableReplicas: {why}")
    assert failures_counted(registry, "bad", "invalid_answer") == 1


async def test_discard_drops_every_answer_when_one_cluster_fails(
    stubs: StartStub, make_estimator: MakeEstimator
) -> None:
    a, bad = await stubs("a", replicas=3), await stubs("bad", replicas=3, mode="error")
    answer = await make_estimator([a, bad], partial_failure="discard").max_available_replicas(
        clusters("a", "bad"), None
    )
    assert dict(answer.replicas) == {}
    assert set(answer.failures) == {"bad"}


async def test_discard_keeps_every_answer_when_none_fails(stubs: StartStub, make_estimator: MakeEstimator) -> None:
    a, b = await stubs("a", replicas=3), await stubs("b", replicas=4)
    answer = await make_estimator([a, b], partial_failure="discard").max_available_replicas(clusters("a", "b"), None)
    assert dict(answer.replicas) == {"a": 3, "b": 4}


async def test_pull_mode_clusters_are_not_asked_when_disabled(
    stubs: StartStub, make_estimator: MakeEstimator, registry: CollectorRegistry
) -> None:
    a, pull = await stubs("a", replicas=3), await stubs("pull", replicas=4)
    estimator = make_estimator([a, pull], disable_in_pull_mode=True)
    answer = await estimator.max_available_replicas([Cluster(name="a"), Cluster(name="pull", sync_mode="Pull")], None)
    assert dict(answer.replicas) == {"a": 3}
    assert dict(answer.failures) == {"pull": "cluster pull is in Pull mode: estimator not used"}
    assert pull.calls == []
    assert failures_counted(registry, "pull", "skipped") == 0


async def test_pull_mode_skip_discards_everything_like_karmada(
    stubs: StartStub, make_estimator: MakeEstimator
) -> None:
    a = await stubs("a", replicas=3)
    estimator = make_estimator([a], disable_in_pull_mode=True, partial_failure="discard")
    answer = await estimator.max_available_replicas([Cluster(name="a"), Cluster(name="p", sync_mode="Pull")], None)
    assert dict(answer.replicas) == {}


async def test_pull_mode_clusters_are_asked_by_default(stubs: StartStub, make_estimator: MakeEstimator) -> None:
    pull = await stubs("pull", replicas=4)
    answer = await make_estimator([pull]).max_available_replicas([Cluster(name="pull", sync_mode="Pull")], None)
    assert dict(answer.replicas) == {"pull": 4}


async def test_failing_cluster_is_logged_once_per_minute(
    stubs: StartStub, make_estimator: MakeEstimator, registry: CollectorRegistry, caplog: pytest.LogCaptureFixture
) -> None:
    bad = await stubs("bad", replicas=3, mode="error")
    estimator = make_estimator([bad])
    with caplog.at_level(logging.WARNING, logger="binding_scheduler.estimation"):
        for _ in range(3):
            await estimator.max_available_replicas(clusters("bad"), None)
    assert [r.getMessage() for r in caplog.records] == [
        "estimator of cluster bad failed (rpc_error): gRPC request cluster(bad) estimator error when calling "
        "MaxAvailableReplicas: UNKNOWN: estimator stub: injected failure"
    ]
    assert failures_counted(registry, "bad", "rpc_error") == 3

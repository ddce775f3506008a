"""Leader election on a coordination.k8s.io/v1 Lease, against the emulator, with a fake wall clock."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable
from typing import Any, TypeVar

import pytest

from binding_scheduler.devcluster import DevCluster
from binding_scheduler.kube import ApiClient, LeaseElector, WriteGate, WriteGateClosed, load_connection
from binding_scheduler.kube.gate import LeadershipInDoubt
from binding_scheduler.kube.lease import LeaseNamespaceMissing, _Attempt, micro_time
from tests.kube.helpers import EPOCH, FakeTime

LEASES = "/apis/coordination.k8s.io/v1/namespaces/karmada-system/leases"
LEASE = f"{LEASES}/karmada-scheduler"
BOUND = 10.0  # seconds: every wait here is bounded, so a regression fails its test instead of hanging it

T = TypeVar("T")


async def bounded(awaitable: Awaitable[T]) -> T:
    """`awaitable`'s result, or a failure once `BOUND` seconds have passed (fake time moves only in sleeps, so an
    elector that never decides would otherwise spin until the pytest timeout)."""
    try:
        async with asyncio.timeout(BOUND):
            return await awaitable
    except TimeoutError:
        raise AssertionError(f"still waiting after {BOUND:g}s: the elector never reached its outcome") from None


@pytest.fixture
async def karmada_system(api: DevCluster) -> None:
    api.store.ensure_namespace("karmada-system")
    api.journal.clear()


@pytest.fixture
def time() -> FakeTime:
    return FakeTime()


@pytest.fixture
async def other_client(api: DevCluster) -> AsyncIterator[ApiClient]:
    async with ApiClient(load_connection(str(api.kubeconfig_path)), WriteGate()) as kube:
        yield kube


def elector(client: ApiClient, time: FakeTime, identity: str, **kwargs: Any) -> LeaseElector:
    return LeaseElector(client, identity=identity, clock=time, sleep=time.sleep, **kwargs)


def spec_of(api: DevCluster) -> dict[str, Any]:
    return dict(api.store.get("leases", "karmada-scheduler", "karmada-system")["spec"])


def hold(api: DevCluster, holder: str, renewed: float, duration: int = 15) -> None:
    lease = api.store.get("leases", "karmada-scheduler", "karmada-system")
    api.store.update("leases", "karmada-scheduler", {**lease, "spec": {
        **lease["spec"], "holderIdentity": holder, "renewTime": micro_time(renewed),
        "leaseDurationSeconds": duration}}, namespace="karmada-system")


pytestmark = pytest.mark.usefixtures("karmada_system")


def test_micro_time_is_rfc3339_with_microseconds() -> None:
    assert micro_time(EPOCH + 0.25) == "2023-11-14T22:13:20.250000Z"


def test_default_identity_is_hostname_underscore_uuid(client: ApiClient) -> None:
    host, _, uid = LeaseElector(client).identity.rpartition("_")
    assert host and len(uid) == 36


async def test_acquire_creates_missing_lease(api: DevCluster, client: ApiClient, time: FakeTime) -> None:
    candidate = elector(client, time, "a")
    await bounded(candidate.acquire())
    assert candidate.is_leader
    assert [(e.method, e.path, e.status) for e in api.journal] == [("GET", LEASE, 404), ("POST", LEASES, 201)]
    assert spec_of(api) == {"holderIdentity": "a", "leaseDurationSeconds": 15, "acquireTime": micro_time(EPOCH),
                            "renewTime": micro_time(EPOCH), "leaseTransitions": 0}


async def test_acquire_rides_out_api_errors(
    api: DevCluster, client: ApiClient, time: FakeTime, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="binding_scheduler.kube.lease")
    api.faults.add(method="GET", path="leases/karmada-scheduler$", status=500, times=2)
    candidate = elector(client, time, "a")
    await bounded(candidate.acquire())
    assert [(e.method, e.status) for e in api.journal] == [("GET", 500), ("GET", 500), ("GET", 404), ("POST", 201)]
    assert (candidate.is_leader, spec_of(api)["holderIdentity"], time.sleeps) == (True, "a", [2.0, 2.0])
    refused = [m for m in caplog.messages if m.startswith("lease karmada-system/karmada-scheduler not acquired: ")]
    assert len(refused) == 2 and all(": 500 InternalError" in m for m in refused)
    assert "acquired lease karmada-system/karmada-scheduler as a" in caplog.messages


async def test_keep_renews_every_retry_period_with_read_version(
    api: DevCluster, client: ApiClient, time: FakeTime
) -> None:
    candidate = elector(client, time, "a")
    await bounded(candidate.acquire())
    read_version = candidate.observed["metadata"]["resourceVersion"]
    lost: list[str] = []
    keeping = asyncio.create_task(candidate.keep(lost.append))
    await api.journal.wait_for(lambda e: e.method == "PUT" and e.status == 200)
    keeping.cancel()
    with pytest.raises(asyncio.CancelledError):
        await keeping
    put = api.journal.filter("PUT")[0]
    assert put.body["metadata"]["resourceVersion"] == read_version
    assert time.sleeps[0] == 2.0
    spec = spec_of(api)
    assert (spec["holderIdentity"], spec["acquireTime"], spec["leaseTransitions"]) == ("a", micro_time(EPOCH), 0)
    assert spec["renewTime"] == put.body["spec"]["renewTime"] != micro_time(EPOCH)
    assert (lost, candidate.is_leader) == ([], True)


async def test_live_lease_not_taken_until_expiry(
    api: DevCluster, client: ApiClient, other_client: ApiClient, time: FakeTime
) -> None:
    await bounded(elector(other_client, time, "old").acquire())
    candidate = LeaseElector(client, identity="new", clock=time, retry_period=0.01)
    acquiring = asyncio.create_task(candidate.acquire())
    await api.journal.wait_for(lambda e: len(api.journal.filter("GET")) >= 3)
    assert not acquiring.done()
    assert api.journal.filter("PUT") == []
    time.advance(15.001)  # renewTime + leaseDurationSeconds has passed
    await bounded(acquiring)
    spec = spec_of(api)
    assert (spec["holderIdentity"], spec["leaseTransitions"], spec["acquireTime"]) == (
        "new", 1, micro_time(EPOCH + 15.001))


async def test_two_candidates_racing_for_free_lease_cannot_both_win(
    api: DevCluster, client: ApiClient, other_client: ApiClient, time: FakeTime
) -> None:
    seed = elector(client, time, "seed")
    await bounded(seed.acquire())
    await seed.release()  # the lease is free for both
    api.journal.clear()
    fault = api.faults.add(method="GET", path="leases/karmada-scheduler$", hang=True, times=2)
    first = asyncio.create_task(LeaseElector(client, identity="a", clock=time, retry_period=0.01).acquire())
    second = asyncio.create_task(LeaseElector(other_client, identity="b", clock=time, retry_period=0.01).acquire())
    await api.journal.wait_for(lambda e: len(api.journal.filter("GET")) == 2)
    fault.release()  # both read the same version, both try to PUT it
    done, pending = await asyncio.wait({first, second}, timeout=BOUND, return_when=asyncio.FIRST_COMPLETED)
    statuses = sorted(e.status for e in api.journal.filter("PUT"))
    winner = spec_of(api)["holderIdentity"]
    for task in pending:
        task.cancel()
    assert (len(done), statuses, winner in ("a", "b")) == (1, [200, 409], True)
    assert spec_of(api)["leaseTransitions"] == 1


async def test_holder_whose_clock_lags_is_not_deposed_while_it_renews(
    api: DevCluster, client: ApiClient, other_client: ApiClient, time: FakeTime
) -> None:
    """Its renewTime is always 30 s in our past; what counts is that the record keeps changing."""
    lagging = FakeTime(EPOCH - 30)
    holder = elector(other_client, lagging, "lagging")
    await bounded(holder.acquire())
    candidate = elector(client, time, "new")
    for _ in range(10):  # 20 s by our clock: more than a lease duration, and the holder renews meanwhile
        attempt = await candidate._try_acquire_or_renew()
        assert (attempt.held, attempt.holder) == (False, "lagging")
        time.advance(2)
        lagging.advance(2)
        assert (await holder._try_acquire_or_renew()).held
    assert spec_of(api)["holderIdentity"] == "lagging"


async def test_stale_holder_taken_over_one_duration_after_seen(
    api: DevCluster, client: ApiClient, other_client: ApiClient, time: FakeTime
) -> None:
    await elector(other_client, FakeTime(EPOCH + 3600), "ahead").acquire()  # its clock is an hour ahead
    candidate = elector(client, time, "new")
    assert (await candidate._try_acquire_or_renew()).holder == "ahead"
    time.advance(15)
    assert (await candidate._try_acquire_or_renew()).holder == "ahead"
    time.advance(0.001)
    assert (await candidate._try_acquire_or_renew()).held
    assert spec_of(api)["holderIdentity"] == "new"


async def test_conflicting_write_is_re_read_and_retried_at_once(
    api: DevCluster, client: ApiClient, time: FakeTime
) -> None:
    seed = elector(client, time, "seed")
    await bounded(seed.acquire())
    await seed.release()
    api.journal.clear()
    api.faults.add(method="PUT", path="leases", status=409, times=1)
    await bounded(elector(client, time, "a").acquire())
    assert [(e.method, e.status) for e in api.journal] == [("GET", 200), ("PUT", 409), ("GET", 200), ("PUT", 200)]
    assert time.sleeps == []


async def test_release_hands_over_at_once(
    api: DevCluster, client: ApiClient, other_client: ApiClient, time: FakeTime
) -> None:
    old = elector(client, time, "old")
    await bounded(old.acquire())
    assert await old.release() is True
    spec = spec_of(api)
    assert (spec["holderIdentity"], spec["leaseDurationSeconds"], old.is_leader) == ("", 1, False)
    successor = elector(other_client, time, "new")
    await bounded(successor.acquire())  # no clock advance needed
    assert (spec_of(api)["holderIdentity"], spec_of(api)["leaseTransitions"], time.sleeps) == ("new", 1, [])


@pytest.mark.parametrize("write", ["create", "put"])
async def test_cancelled_acquisition_releases_its_write(
    api: DevCluster, client: ApiClient, time: FakeTime, write: str
) -> None:
    if write == "put":
        api.store.create("leases", {"metadata": {"name": "karmada-scheduler", "namespace": "karmada-system"},
                                    "spec": {"holderIdentity": "", "leaseDurationSeconds": 1}})
    sent = getattr(client, write)
    landed = asyncio.Event()

    async def landed_but_unanswered(*args: Any) -> Any:
        await sent(*args)
        landed.set()
        await asyncio.Event().wait()

    setattr(client, write, landed_but_unanswered)
    candidate = elector(client, time, "a")
    acquiring = asyncio.create_task(candidate.acquire())
    await bounded(landed.wait())
    acquiring.cancel()
    await asyncio.wait({acquiring})
    taken = spec_of(api)["holderIdentity"]
    setattr(client, write, sent)

    assert (taken, candidate.is_leader) == ("a", False)
    assert await candidate.release() is True
    assert spec_of(api)["holderIdentity"] == ""


async def test_reading_elector_releases_nothing(
    api: DevCluster, client: ApiClient, time: FakeTime
) -> None:
    api.store.create(
        "leases", {"metadata": {"name": "karmada-scheduler", "namespace": "karmada-system"},
                   "spec": {"holderIdentity": "other", "leaseDurationSeconds": 15}})
    candidate = elector(client, time, "a")
    attempt = await candidate._try_acquire_or_renew()
    api.journal.clear()

    assert attempt == _Attempt(False, holder="other", why="held by other")
    assert await candidate.release() is False
    assert list(api.journal) == []


async def test_release_writes_no_holder_one_second(
    api: DevCluster, client: ApiClient, time: FakeTime, caplog: pytest.LogCaptureFixture
) -> None:
    old = elector(client, time, "old")
    await bounded(old.acquire())
    time.advance(5)
    caplog.set_level(logging.INFO, logger="binding_scheduler.kube.lease")
    assert await old.release() is True
    assert spec_of(api) == {"holderIdentity": "", "leaseDurationSeconds": 1, "acquireTime": micro_time(EPOCH + 5),
                            "renewTime": micro_time(EPOCH + 5), "leaseTransitions": 0}
    assert old.observed == api.store.get("leases", "karmada-scheduler", "karmada-system")
    assert "released lease karmada-system/karmada-scheduler" in caplog.messages


async def test_release_after_another_holder_took_lease_writes_nothing(
    api: DevCluster, client: ApiClient, time: FakeTime
) -> None:
    old = elector(client, time, "old")
    await bounded(old.acquire())
    hold(api, "intruder", renewed=EPOCH)
    api.journal.clear()
    assert await old.release() is False
    assert [(e.method, e.status) for e in api.journal] == [("GET", 200)]
    assert (old.holder, old.is_leader, spec_of(api)["holderIdentity"]) == ("intruder", False, "intruder")


async def test_release_of_deleted_lease_writes_nothing(api: DevCluster, client: ApiClient, time: FakeTime) -> None:
    old = elector(client, time, "old")
    await bounded(old.acquire())
    api.store.delete("leases", "karmada-scheduler", namespace="karmada-system")
    api.journal.clear()
    assert await old.release() is False
    assert [(e.method, e.status) for e in api.journal] == [("GET", 404)]


@pytest.mark.parametrize(("conflicts", "released"), [(2, True), (3, False)])
async def test_release_reads_again_after_conflict_three_times_at_most(
    api: DevCluster, client: ApiClient, time: FakeTime, conflicts: int, released: bool
) -> None:
    old = elector(client, time, "old")
    await bounded(old.acquire())
    api.journal.clear()
    api.faults.add(method="PUT", path="leases", status=409, times=conflicts)
    assert await old.release() is released
    puts = [e.status for e in api.journal.filter("PUT")]
    assert puts == [409] * conflicts + ([200] if released else [])
    assert len(api.journal.filter("GET")) == len(puts)
    assert spec_of(api)["holderIdentity"] == ("" if released else "old")


async def test_keep_without_holding_lease_is_loss_at_once(
    api: DevCluster, client: ApiClient, gate: WriteGate, time: FakeTime
) -> None:
    lost: list[str] = []
    await bounded(elector(client, time, "a").keep(lost.append))
    assert lost == ["keep() was called without holding the lease"]
    assert (gate.is_open, gate.reason) == (False, "leadership lost: keep() was called without holding the lease")
    assert list(api.journal) == []


async def test_unanswered_renewal_loses_lease(
    api: DevCluster, client: ApiClient, gate: WriteGate
) -> None:
    candidate = LeaseElector(client, identity="a", lease_duration=1.5, renew_deadline=0.5, retry_period=0.1)
    await bounded(candidate.acquire())
    hung = api.faults.add(method="PUT", path="leases", hang=True)
    lost: list[str] = []
    await bounded(candidate.keep(lost.append))
    hung.release()
    assert lost == ["could not renew the lease within 0.5s: the renewal got no answer within the renew deadline"]
    assert (candidate.is_leader, gate.is_open) == (False, False)


@pytest.mark.parametrize(("duration", "expired"), [(None, True), (True, True), ("15", True), (15, False)])
def test_record_without_numeric_duration_counts_as_expired(
    client: ApiClient, time: FakeTime, duration: object, expired: bool
) -> None:
    candidate = elector(client, time, "new")
    assert candidate._expired({"holderIdentity": "old", "leaseDurationSeconds": duration}) is expired


async def test_each_change_of_holder_counts_one_more_transition(
    api: DevCluster, client: ApiClient, time: FakeTime
) -> None:
    for count, identity in enumerate(("first", "second", "third")):
        candidate = elector(client, time, identity)
        await bounded(candidate.acquire())
        assert spec_of(api)["leaseTransitions"] == count
        assert await candidate.release() is True
        assert spec_of(api)["leaseTransitions"] == count  # a release hands over, it is not a transition yet


@pytest.mark.parametrize(("duration", "written"), [(0.6, 1), (1.2, 1), (1.6, 2), (15.0, 15)])
def test_lease_duration_whole_seconds(
    client: ApiClient, time: FakeTime, duration: float, written: int
) -> None:
    candidate = LeaseElector(client, identity="a", lease_duration=duration, renew_deadline=0.5, retry_period=0.1,
                             clock=time)
    assert candidate._record(None)["leaseDurationSeconds"] == written


async def test_release_without_holding_writes_nothing(api: DevCluster, client: ApiClient, time: FakeTime) -> None:
    assert await elector(client, time, "a").release() is False
    assert list(api.journal) == []


async def test_rejected_late_renewal_loses_lease_once(
    api: DevCluster, client: ApiClient, gate: WriteGate, time: FakeTime, caplog: pytest.LogCaptureFixture
) -> None:
    candidate = elector(client, time, "a")
    await bounded(candidate.acquire())
    api.faults.add(method="PUT", path="leases", status=500)
    lost: list[str] = []

    async def on_lost(reason: str) -> None:
        lost.append(reason)

    await bounded(candidate.keep(on_lost))
    assert len(lost) == 1
    assert lost[0].startswith("could not renew the lease within 10s: 500 InternalError")
    retried = [m for m in caplog.messages if m.startswith("lease karmada-system/karmada-scheduler renewal failed")]
    assert len(retried) == 5 and retried[0].startswith(
        "lease karmada-system/karmada-scheduler renewal failed, retrying: 500 InternalError")
    assert (candidate.is_leader, gate.is_open) == (False, False)
    assert len(api.journal.filter("PUT")) == 5  # the renewal began at 2 s: tries at 2, 4, 6, 8, 10; deadline 12
    with pytest.raises(WriteGateClosed, match="leadership lost"):
        await client.create(LEASES, {})


async def test_renewal_gets_whole_deadline(
    api: DevCluster, client: ApiClient, gate: WriteGate
) -> None:
    """Every answer takes 0.3 s, so one renewal (GET + PUT) takes 0.6 s: more than the deadline minus the time
    since the previous renewal began, well within a deadline of its own (client-go's renew loop)."""
    candidate = LeaseElector(client, identity="a", lease_duration=1.5, renew_deadline=1.0, retry_period=0.25)
    await bounded(candidate.acquire())
    api.faults.add(path="leases", delay=0.3)
    lost: list[str] = []
    keeping = asyncio.create_task(candidate.keep(lost.append))
    await api.journal.wait_for(lambda e: len([p for p in api.journal.filter("PUT") if p.status == 200]) >= 4, 20)
    keeping.cancel()
    with pytest.raises(asyncio.CancelledError):
        await keeping
    assert (lost, candidate.is_leader, gate.is_open) == ([], True, True)


@pytest.mark.parametrize(
    ("attempt_takes", "sleeps"),
    [
        (11.0, [2.0]),  # past the deadline: lost at once, no retry period slept first
        (10.0, [2.0]),  # exactly at the deadline: lost at once too
        (9.5, [2.0, 0.5]),  # 0.5 s left: sleep what is left (not a whole retry period), then lost
    ],
)
async def test_renewal_taking_renew_deadline_is_loss(
    client: ApiClient, time: FakeTime, attempt_takes: float, sleeps: list[float]
) -> None:
    candidate = elector(client, time, "a")
    await bounded(candidate.acquire())

    async def slow_refusal() -> _Attempt:
        time.advance(attempt_takes)
        return _Attempt(False, why="500 InternalError: etcd is slow")

    candidate._try_acquire_or_renew = slow_refusal  # type: ignore[method-assign]
    lost: list[str] = []
    await bounded(candidate.keep(lost.append))
    assert lost == ["could not renew the lease within 10s: 500 InternalError: etcd is slow"]
    assert time.sleeps == sleeps


async def test_renewal_that_fails_once_within_deadline_keeps_lease(
    api: DevCluster, client: ApiClient, gate: WriteGate, time: FakeTime
) -> None:
    candidate = elector(client, time, "a")
    await bounded(candidate.acquire())
    api.faults.add(method="PUT", path="leases", status=503, times=1)
    keeping = asyncio.create_task(candidate.keep(lambda reason: None))
    await api.journal.wait_for(lambda e: e.method == "PUT" and e.status == 200)
    keeping.cancel()
    with pytest.raises(asyncio.CancelledError):
        await keeping
    assert (candidate.is_leader, gate.is_open) == (True, True)


async def test_another_holder_writing_lease_is_loss(
    api: DevCluster, client: ApiClient, gate: WriteGate, time: FakeTime, caplog: pytest.LogCaptureFixture
) -> None:
    candidate = elector(client, time, "a")
    await bounded(candidate.acquire())
    hold(api, "intruder", renewed=EPOCH)
    lost: list[str] = []
    await bounded(candidate.keep(lost.append))
    assert lost == ["the lease is now held by intruder"]
    assert "lost lease karmada-system/karmada-scheduler: the lease is now held by intruder" in caplog.messages
    assert (candidate.is_leader, gate.is_open, api.journal.filter("PUT")) == (False, False, [])


async def test_lease_writes_go_through_gate(api: DevCluster, client: ApiClient, gate: WriteGate,
                                                time: FakeTime) -> None:
    gate.close("shutdown")
    with pytest.raises(WriteGateClosed):
        await bounded(elector(client, time, "a").acquire())
    assert api.journal.writes() == []


async def test_keep_reports_closed_gate_as_loss(api: DevCluster, client: ApiClient, gate: WriteGate,
                                                    time: FakeTime) -> None:
    candidate = elector(client, time, "a")
    await bounded(candidate.acquire())
    gate.close("fatal error")
    lost: list[str] = []
    await bounded(candidate.keep(lost.append))
    assert lost == ["cannot renew the lease: write refused: the write gate is closed (fatal error)"]
    assert api.journal.filter("PUT") == []


async def test_leader_doubts_once_duration_minus_retry_passed(
    client: ApiClient, time: FakeTime
) -> None:
    candidate = elector(client, time, "a")
    assert candidate.doubt() == "this instance does not hold the Lease"
    await bounded(candidate.acquire())
    assert candidate.doubt() is None
    time.advance(13.0)  # 15 s lease - 2 s retry period
    assert candidate.doubt() is None
    time.advance(0.5)
    assert candidate.doubt() == "the Lease was last renewed 13.5s ago: another instance may lead by now"
    assert (await candidate._try_acquire_or_renew()).held
    assert candidate.doubt() is None


async def test_doubtful_leader_write_refused_locally(
    api: DevCluster, client: ApiClient, gate: WriteGate
) -> None:
    doubt: list[str | None] = ["the Lease was last renewed 20.0s ago: another instance may lead by now"]
    client.leadership_doubt = lambda: doubt[0]
    with pytest.raises(LeadershipInDoubt, match=r"last renewed 20\.0s ago"):
        await client.create(LEASES, {"metadata": {"name": "x"}})
    assert api.journal.writes() == []
    assert gate.is_open
    doubt[0] = None
    await client.create(LEASES, {"metadata": {"name": "x"}, "spec": {}})
    assert [e.status for e in api.journal.writes()] == [201]


def test_micro_time_is_utc_whatever_local_time_zone(monkeypatch: pytest.MonkeyPatch) -> None:
    import time as clock

    monkeypatch.setenv("TZ", "America/New_York")
    clock.tzset()
    try:
        assert micro_time(EPOCH) == "2023-11-14T22:13:20.000000Z"
    finally:
        monkeypatch.undo()
        clock.tzset()


async def test_created_lease_is_coordination_v1(
    api: DevCluster, client: ApiClient, time: FakeTime
) -> None:
    await bounded(elector(client, time, "a").acquire())
    (created,) = api.journal.filter("POST")
    assert {key: created.body[key] for key in ("apiVersion", "kind", "metadata")} == {
        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": "karmada-scheduler", "namespace": "karmada-system"}}


async def test_lease_created_meanwhile_is_reread(
    api: DevCluster, client: ApiClient, time: FakeTime
) -> None:
    api.faults.add(method="POST", path="leases", status=409, times=1)
    attempt = await bounded(elector(client, time, "a")._try_acquire_or_renew())
    assert attempt == _Attempt(True)
    assert [(e.method, e.status) for e in api.journal] == [("GET", 404), ("POST", 409), ("GET", 404), ("POST", 201)]


@pytest.mark.parametrize("write", ["POST", "PUT"])
async def test_three_conflicts_end_attempt(
    api: DevCluster, client: ApiClient, time: FakeTime, write: str
) -> None:
    if write == "PUT":
        seed = elector(client, time, "seed")
        await bounded(seed.acquire())
        await seed.release()
        api.journal.clear()
    api.faults.add(method=write, path="leases", status=409, times=3, message="the object has been modified")

    attempt = await bounded(elector(client, time, "a")._try_acquire_or_renew())

    assert (attempt.held, attempt.holder) == (False, "")
    assert attempt.why.startswith("conflicting writes: 409 Conflict: the object has been modified")
    assert [e.method for e in api.journal] == ["GET", write] * 3


async def test_attempt_that_finds_another_holder_keeps_lease_it_read(
    api: DevCluster, client: ApiClient, other_client: ApiClient, time: FakeTime
) -> None:
    await bounded(elector(other_client, time, "other").acquire())
    candidate = elector(client, time, "a")

    attempt = await candidate._try_acquire_or_renew()

    assert attempt == _Attempt(False, holder="other", why="held by other")
    assert candidate.observed == api.store.get("leases", "karmada-scheduler", "karmada-system")
    assert candidate.holder == "other"


async def test_lease_released_by_other_loses_it(
    api: DevCluster, client: ApiClient, gate: WriteGate, time: FakeTime
) -> None:
    candidate = elector(client, time, "a")
    await bounded(candidate.acquire())
    hold(api, "", renewed=EPOCH, duration=1)
    lost: list[str] = []

    await bounded(candidate.keep(lost.append))

    assert lost == ["the lease is now held by nobody"]
    assert (candidate.is_leader, gate.is_open, api.journal.filter("PUT")) == (False, False, [])


def test_new_elector_has_seen_no_lease(client: ApiClient) -> None:
    candidate = LeaseElector(client)
    assert (candidate.observed, candidate.holder, candidate.is_leader) == ({}, "", False)


def test_record_ages_on_monotonic_clock(
    client: ApiClient,
) -> None:
    import time as clock

    assert LeaseElector(client)._elapsed is clock.monotonic
    fake = FakeTime()
    assert LeaseElector(client, clock=fake)._elapsed is fake


@pytest.mark.parametrize(("timings", "error"), [
    ({"lease_duration": 10.0, "renew_deadline": 10.0},
     "lease_duration (10.0) must exceed renew_deadline (10.0) > 0"),
    ({"lease_duration": 15.0, "renew_deadline": 0.0, "retry_period": 0.0},
     "lease_duration (15.0) must exceed renew_deadline (0.0) > 0"),
    ({"retry_period": 0.0}, "retry_period (0.0) must be positive and below renew_deadline"),
    ({"retry_period": 10.0}, "retry_period (10.0) must be positive and below renew_deadline"),
])
def test_impossible_lease_timings_refused(
    client: ApiClient, timings: dict[str, float], error: str
) -> None:
    with pytest.raises(ValueError) as refused:
        LeaseElector(client, **timings)  # type: ignore[arg-type]
    assert str(refused.value) == error


PROBLEM = "cannot take part in the election for lease karmada-system/karmada-scheduler: "


async def attempts(candidate: LeaseElector, api: DevCluster, time: FakeTime, count: int) -> None:
    """Let `candidate` make `count` attempts (it never wins: the API server refuses every one)."""
    task = asyncio.ensure_future(candidate.acquire())
    try:
        await bounded(_until(lambda: len([e for e in api.journal if e.method == "GET"]) >= count))
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def _until(done: Any) -> None:
    """Yield to the elector (fake time moves only in its sleeps) until `done()`; `bounded` limits the wait."""
    for _ in iter(int, 1):
        if done():
            return
        await asyncio.sleep(0)


async def test_refused_attempt_warns_once_then_every_minute(
    api: DevCluster, client: ApiClient, time: FakeTime, caplog: pytest.LogCaptureFixture
) -> None:
    api.faults.add(method="GET", path="leases/karmada-scheduler$", status=403)
    candidate = elector(client, time, "a")
    with caplog.at_level(logging.INFO, logger="binding_scheduler.kube.lease"):
        await attempts(candidate, api, time, 32)  # 31 retries of 2 s: 62 s
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 2
    assert all(m.startswith(PROBLEM) and "403" in m and m.endswith("(retrying every 2s)") for m in warnings)
    assert candidate.problem is not None and "403" in candidate.problem


async def test_changed_cause_said_again(
    api: DevCluster, client: ApiClient, time: FakeTime, caplog: pytest.LogCaptureFixture
) -> None:
    api.faults.add(method="GET", path="leases/karmada-scheduler$", status=403, times=2)
    api.faults.add(method="GET", path="leases/karmada-scheduler$", status=500, times=1)
    candidate = elector(client, time, "a")
    with caplog.at_level(logging.INFO, logger="binding_scheduler.kube.lease"):
        await bounded(candidate.acquire())
    lines = [(r.levelname, r.getMessage()) for r in caplog.records]
    assert [level for level, _ in lines] == ["WARNING", "WARNING", "INFO", "INFO"]
    assert "403" in lines[0][1] and "500" in lines[1][1]
    assert lines[2][1] == "lease karmada-system/karmada-scheduler: the API server answers again"
    assert candidate.problem is None and candidate.is_leader


async def test_missing_lease_namespace_ends_election(
    api: DevCluster, client: ApiClient, time: FakeTime
) -> None:
    """A definite answer no retry changes (the create is refused, nothing written): the start fails in one line."""
    candidate = elector(client, time, "a", namespace="no-such-namespace")
    with pytest.raises(LeaseNamespaceMissing) as missing:
        await bounded(candidate.acquire())
    assert str(missing.value) == (f"{api.url} has no namespace no-such-namespace, so the Lease cannot be created "
                                  "there (--leader-elect-resource-namespace, spec.leaderElection.leaseNamespace)")
    assert [e for e in api.journal if e.method == "POST" and e.status < 300] == []


async def test_lease_held_by_another_is_no_problem(
    api: DevCluster, client: ApiClient, other_client: ApiClient, time: FakeTime, caplog: pytest.LogCaptureFixture
) -> None:
    await bounded(elector(other_client, time, "b").acquire())
    candidate = elector(client, time, "a")
    with caplog.at_level(logging.WARNING, logger="binding_scheduler.kube.lease"):
        await attempts(candidate, api, time, 4)
    assert candidate.problem is None
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []


async def test_unanswered_attempt_is_problem_after_deadline(
    api: DevCluster, client: ApiClient, time: FakeTime
) -> None:
    """karmada-apiserver stalled: the standby's Lease GET hangs instead of failing. Without an answer within
    `renew_deadline` the standby cannot take part in the election, and its `/readyz` must say so."""
    stall = api.faults.add(method="GET", path="leases/karmada-scheduler$", hang=True)
    candidate = elector(client, time, "a", lease_duration=1.0, renew_deadline=0.3, retry_period=0.1)
    acquiring = asyncio.create_task(candidate.acquire())
    for _ in range(int(BOUND / 0.02)):
        if candidate.problem is not None:
            break
        await asyncio.sleep(0.02)
    assert candidate.problem == "no answer within 0.3s"
    assert not acquiring.done()
    stall.remove()
    await bounded(acquiring)
    assert candidate.problem is None and candidate.is_leader


async def test_standby_seeing_live_holder_drops_own_write(
    api: DevCluster, client: ApiClient, other_client: ApiClient, time: FakeTime
) -> None:
    """A standby that once lost a race (its write refused) must not report, at its stop, a Lease it never held as
    'not released': reading another live holder after its write settles that none of its writes took it."""
    await bounded(elector(other_client, time, "b").acquire())
    candidate = elector(client, time, "a")
    candidate._sent_write = True  # a write of its own went out once, and was refused
    attempt = await candidate._try_acquire_or_renew()
    assert attempt.holder == "b"
    assert not candidate.may_hold

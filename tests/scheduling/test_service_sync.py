"""The service's first sync: every Cluster, then every binding, into the stores before any pass, and one log
line that says how many and how long (the first thing to read when a large fleet is slow to start)."""

from __future__ import annotations

import asyncio
import logging
import re
import time

import pytest

from binding_scheduler.devcluster import DevCluster
from binding_scheduler.kube.connection import Connection
from binding_scheduler.kube.errors import Forbidden, TransportError
from binding_scheduler.model.config import (
    FeatureGatesConfig,
    LeaderElectionConfig,
    MetricsConfig,
    SchedulerConfig,
    ShutdownConfig,
)
from binding_scheduler.scheduling.lifecycle.event_source import LISTED_AT_START, EventSource
from binding_scheduler.scheduling.lifecycle.service import SchedulerService
from binding_scheduler.scheduling.lifecycle.stop_budget import STOP_TAIL
from binding_scheduler.scheduling.lifecycle.stop_report import ShutdownReport
from tests.scheduling.test_service_wiring import offline
from testsupport.builders import binding, cluster, placement

SERVICE_LOGGERS = (
    "binding_scheduler.scheduling.lifecycle.service", "binding_scheduler.scheduling.lifecycle.stop_budget")


def service_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    """The service's own log lines, its stop's included (other loggers may log at INFO when another test set the
    root level)."""
    return [r.getMessage() for r in caplog.records if r.name in SERVICE_LOGGERS]


async def test_sync_lists_all_kinds_across_pages(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("binding_scheduler.scheduling.lifecycle.service.LIST_PAGE", 2)
    async with DevCluster() as api:
        api.store.ensure_namespace("default")
        for name in ("m1", "m2", "m3"):
            api.store.create("clusters", cluster(name))
        for name in ("a", "b", "c"):
            api.store.create("resourcebindings", binding(name, replicas=1, placement=placement()))
        api.store.create("clusterresourcebindings", binding("role", cluster_scoped=True, placement=placement()))
        service = SchedulerService(Connection(server=api.url), SchedulerConfig())
        try:
            with caplog.at_level(logging.INFO, logger="binding_scheduler.scheduling.lifecycle.service"):
                await service.sync()
        finally:
            await service.client.close()
            await service.lease_client.close()

    assert sorted(service.context.bindings.keys()) == ["default/a", "default/b", "default/c", "role"]
    assert service.context.clusters.names() == ["m1", "m2", "m3"]
    (line,) = [m for m in caplog.messages if m.startswith("caches synced")]
    seconds = re.fullmatch(r"caches synced: 3 clusters, 4 bindings listed in (\d+\.\d) s", line)
    assert seconds is not None and float(seconds[1]) < 60


async def test_failing_list_retried_until_success(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("binding_scheduler.scheduling.lifecycle.service.SYNC_RETRY_INITIAL", 0.01)
    async with DevCluster() as api:
        api.store.ensure_namespace("default")
        api.store.create("clusters", cluster("m1"))
        api.faults.add(method="GET", path=r"/clusters$", status=503, times=2)
        service = SchedulerService(Connection(server=api.url), SchedulerConfig())
        try:
            with caplog.at_level(logging.WARNING, logger="binding_scheduler.scheduling.lifecycle.service"):
                await service.sync()
        finally:
            await service.client.close()
            await service.lease_client.close()

    assert service.context.clusters.names() == ["m1"]
    retries = [m for m in caplog.messages if m.startswith("listing /apis/cluster.karmada.io/v1alpha1/clusters failed")]
    assert [m.rsplit(": again in ", 1)[1] for m in retries] == ["0.01s", "0.02s"]


@pytest.mark.parametrize(("refused", "streamed"), [("clusters", False), ("clusterresourcebindings", True)],
                         ids=["the-clusters", "a-binding-list-the-watch-would-bring"])
async def test_list_refused_for_good_ends_sync_with_that_error(refused: str, streamed: bool) -> None:
    async with DevCluster() as api:
        api.faults.add(method="GET", path=rf"/{refused}$", status=403)
        source = EventSource.streamed(dict) if streamed else LISTED_AT_START
        service = SchedulerService(Connection(server=api.url), SchedulerConfig(), event_source=source)
        try:
            with pytest.raises(Forbidden):
                await service.sync()
        finally:
            await service.client.close()
            await service.lease_client.close()


async def test_start_waits_for_lease_then_fences_writes(
    caplog: pytest.LogCaptureFixture,
) -> None:
    config = SchedulerConfig(metrics=MetricsConfig(port=0, health_port=0))
    async with DevCluster() as api:
        api.store.ensure_namespace("karmada-system")
        service = SchedulerService(Connection(server=api.url), config, identity="pod-a_1")
        standing_by: list[bool] = []
        assert service.lease is not None
        acquire = service.lease.acquire

        async def observed_acquire() -> None:
            standing_by.append(service.probe_ready)
            await acquire()

        service.lease.acquire = observed_acquire  # type: ignore[method-assign]
        with caplog.at_level(logging.INFO, logger="binding_scheduler.scheduling.lifecycle.service"):
            await service.start()
        try:
            keeper = service._keeper
            leading = (service.ready, service.probe_ready, service._standing_by)
            leader = service.metrics.registry.get_sample_value("binding_scheduler_leader")
            doubt = service.client.leadership_doubt
        finally:
            report = await service.shutdown()

    assert standing_by == [True]
    assert leading == (True, True, False)
    assert leader == 1
    assert keeper is not None and keeper.get_name() == "lease-keeper" and keeper.done()
    assert doubt == service.lease.doubt
    assert report.lease_released is True
    ours = service_lines(caplog)
    assert ours[1:3] == ["waiting for lease karmada-system/karmada-scheduler as pod-a_1",
                         "acquired lease karmada-system/karmada-scheduler"]
    assert ours[0] == (f"binding-scheduler 0.1.0: API server {api.url}; configuration from the defaults; scheduler "
                       "name default-scheduler; metrics off, health off; lease karmada-system/karmada-scheduler as "
                       "pod-a_1")


class ListingClient:
    """Answers each list at once, from `items` by path (no turn of the event loop: only the sync's own yields)."""

    def __init__(self, items: dict[str, list[dict[str, object]]]) -> None:
        self.items = items
        self.asked: list[tuple[str, object]] = []

    async def list(self, path: str, params: dict[str, object]) -> dict[str, object]:
        self.asked.append((path, params))
        return {"items": self.items.get(path, [])}

    async def get(self, path: str, params: dict[str, object]) -> dict[str, object]:
        self.asked.append((path, params))
        return {"items": self.items.get(path, [])[:1]}


def listing(service: SchedulerService, items: dict[str, list[dict[str, object]]]) -> ListingClient:
    client = ListingClient(items)
    service.client = client  # type: ignore[assignment]
    return client


CLUSTERS = "/apis/cluster.karmada.io/v1alpha1/clusters"
RBS = "/apis/work.karmada.io/v1alpha2/resourcebindings"
CRBS = "/apis/work.karmada.io/v1alpha2/clusterresourcebindings"


async def test_list_asks_for_pages_of_500_and_returns_items() -> None:
    service = await offline(SchedulerConfig())
    client = listing(service, {CLUSTERS: [{"metadata": {"name": "m1"}}]})

    assert await service._list(CLUSTERS) == [{"metadata": {"name": "m1"}}]
    assert client.asked == [(CLUSTERS, {"limit": 500})]


async def test_listed_bindings_get_list_kind() -> None:
    service = await offline(SchedulerConfig())
    unkinded = binding("a", replicas=1, placement=placement())
    del unkinded["kind"]
    role = binding("role", cluster_scoped=True, placement=placement())
    del role["kind"]
    named = binding("b", replicas=1, placement=placement())
    named["kind"] = "Other"
    listing(service, {RBS: [unkinded, named], CRBS: [role]})

    await service.sync()

    stored = service.context.bindings
    kinds = {key: (stored.body(key) or {}).get("kind") for key in ("default/a", "default/b", "role")}
    assert kinds == {"default/a": "ResourceBinding", "default/b": "Other", "role": "ClusterResourceBinding"}


async def test_list_without_items_is_empty() -> None:
    service = await offline(SchedulerConfig())
    listing(service, {})
    assert await service._list(CLUSTERS) == []


async def test_sync_yields_every_256_objects() -> None:
    service = await offline(SchedulerConfig())
    listing(service, {
        CLUSTERS: [cluster(f"m{i}") for i in range(511)],
        RBS: [binding(f"b{i}", replicas=1, placement=placement()) for i in range(255)],
        CRBS: [binding(f"c{i}", cluster_scoped=True, placement=placement()) for i in range(256)],
    })
    turns = 0

    async def count_turns() -> None:
        nonlocal turns
        while True:
            await asyncio.sleep(0)
            turns += 1

    counter = asyncio.create_task(count_turns())
    await asyncio.sleep(0)  # the counter is waiting for its next turn
    turns = 0
    await service.sync()
    counter.cancel()

    assert len(service.context.clusters.names()) == 511 and len(list(service.context.bindings.keys())) == 511
    assert turns == 511 // 256 + 255 // 256 + 256 // 256 == 2


async def test_watch_lists_bindings_sync_lists_clusters(
    caplog: pytest.LogCaptureFixture,
) -> None:
    service = await offline(SchedulerConfig(), event_source=EventSource.streamed(dict))
    client = listing(service, {CLUSTERS: [cluster("m1"), cluster("m2")],
                               RBS: [binding("a", replicas=1, placement=placement())]})

    with caplog.at_level(logging.INFO, logger="binding_scheduler.scheduling.lifecycle.service"):
        await service.sync()

    assert client.asked == [(CLUSTERS, {"limit": 500}), (RBS, {"limit": 1}), (CRBS, {"limit": 1})]
    assert service.context.clusters.names() == ["m1", "m2"] and list(service.context.bindings.keys()) == []
    (line,) = service_lines(caplog)
    assert re.fullmatch(r"caches synced: 2 clusters listed in \d+\.\d s; the bindings are scheduled as the watch "
                        r"lists them", line)


async def test_first_complete_list_of_kind_logged_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    service = await offline(SchedulerConfig(), event_source=EventSource.streamed(dict))
    listing(service, {})
    await service.sync()
    listed = [binding(f"b{i}", replicas=1, placement=placement()) for i in range(3)]
    caplog.clear()  # the sync's own line, captured when another test left the root logger at INFO

    with caplog.at_level(logging.INFO, logger="binding_scheduler.scheduling.lifecycle.service"):
        await service.relisted("resourcebindings", listed)
        await service.relisted("resourcebindings", listed)
        await service.relisted("clusterresourcebindings", [])

    lines = service_lines(caplog)
    assert [re.sub(r"\d+\.\d s", "S s", line) for line in lines] == [
        "resourcebindings listed: 3 in S s since the sync began (passes ran meanwhile)",
        "clusterresourcebindings listed: 0 in S s since the sync began (passes ran meanwhile)",
    ]


@pytest.mark.parametrize("gates", [
    FeatureGatesConfig(priority_based_scheduling=True),
    FeatureGatesConfig(priority_based_scheduling=True, priority_based_preemptive_scheduling=True),
    FeatureGatesConfig(workload_affinity=True),
], ids=["priority-queue", "preemption", "workload-affinity"])
async def test_gate_needing_all_bindings_makes_sync_list_them(
    gates: FeatureGatesConfig,
) -> None:
    service = await offline(SchedulerConfig(feature_gates=gates), event_source=EventSource.streamed(dict))
    client = listing(service, {RBS: [binding("a", replicas=1, placement=placement())]})

    await service.sync()

    assert [path for path, _ in client.asked] == [CLUSTERS, RBS, CRBS]
    assert list(service.context.bindings.keys()) == ["default/a"]


async def test_list_retries_double_wait_up_to_cap(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("binding_scheduler.scheduling.lifecycle.service.SYNC_RETRY_INITIAL", 0.01)
    monkeypatch.setattr("binding_scheduler.scheduling.lifecycle.service.SYNC_RETRY_CAP", 0.03)
    async with DevCluster() as api:
        api.store.create("clusters", cluster("m1"))
        for status in (503, 429, 500):
            api.faults.add(method="GET", path=r"/clusters$", times=1, status=status)
        service = SchedulerService(Connection(server=api.url), SchedulerConfig())
        try:
            with caplog.at_level(logging.WARNING, logger="binding_scheduler.scheduling.lifecycle.service"):
                listed = await service._list(CLUSTERS)
        finally:
            await service.client.close()
            await service.lease_client.close()

    assert [item["metadata"]["name"] for item in listed] == ["m1"]
    retries = service_lines(caplog)
    assert [m.rsplit(": again in ", 1)[1] for m in retries] == ["0.01s", "0.02s", "0.03s"]


async def test_list_that_gets_no_answer_is_tried_again(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("binding_scheduler.scheduling.lifecycle.service.SYNC_RETRY_INITIAL", 0.01)
    service = await offline(SchedulerConfig())
    client = listing(service, {CLUSTERS: [{"metadata": {"name": "m1"}}]})
    answer = client.list

    async def unanswered_once(path: str, params: dict[str, object]) -> dict[str, object]:
        client.list = answer  # type: ignore[method-assign]
        raise TransportError("connection reset")

    client.list = unanswered_once  # type: ignore[method-assign]
    with caplog.at_level(logging.WARNING, logger="binding_scheduler.scheduling.lifecycle.service"):
        listed = await service._list(CLUSTERS)

    assert listed == [{"metadata": {"name": "m1"}}]
    assert service_lines(caplog) == [
        f"listing {CLUSTERS} failed (connection reset): again in 0.01s"]


QUICK_ELECTION = LeaderElectionConfig(lease_duration=3.0, renew_deadline=0.5, retry_period=0.25)
LEASE_PATH = r"/namespaces/karmada-system/leases/karmada-scheduler$"


def lease_spec(api: DevCluster) -> dict[str, object]:
    return dict(api.store.get("leases", "karmada-scheduler", "karmada-system")["spec"])


def standby(api: DevCluster) -> SchedulerService:
    api.store.ensure_namespace("karmada-system")
    return SchedulerService(Connection(server=api.url), SchedulerConfig(
        leader_election=QUICK_ELECTION, metrics=MetricsConfig(port=0, health_port=0)), identity="pod-a_1")


async def standing_by_beside_another_holder(api: DevCluster, service: SchedulerService) -> asyncio.Task[None]:
    """`service` started while "other" holds the Lease: its start task, once it has read the Lease."""
    api.store.create("leases", {"metadata": {"name": "karmada-scheduler", "namespace": "karmada-system"},
                                "spec": {"holderIdentity": "other", "leaseDurationSeconds": 15}})
    starting = asyncio.create_task(service.start())
    await api.journal.wait_for(lambda e: e.method == "GET" and e.path.endswith("/leases/karmada-scheduler"), 5)
    return starting


async def leading(api: DevCluster) -> SchedulerService:
    service = standby(api)
    await service.start()
    return service


async def test_stop_as_lease_is_won_leads_nothing() -> None:
    async with DevCluster() as api:
        service = standby(api)
        assert service.lease is not None
        acquire = service.lease.acquire
        stops: list[asyncio.Task[ShutdownReport]] = []

        async def won_as_the_stop_comes() -> None:
            await acquire()
            stops.append(asyncio.create_task(service.shutdown()))
            await asyncio.sleep(0)  # the stop has begun

        service.lease.acquire = won_as_the_stop_comes  # type: ignore[method-assign]
        with pytest.raises(asyncio.CancelledError):
            await service.start()
        report = await stops[0]
        spec = lease_spec(api)
        listed = api.journal.filter(method="GET", path=r"/clusters$")

    assert (spec["holderIdentity"], spec["leaseDurationSeconds"]) == ("", 1)
    assert report.lease_released is True
    assert service._keeper is None and listed == []
    assert service.metrics.registry.get_sample_value("binding_scheduler_leader") == 0


async def test_stop_while_winning_lease_hands_it_back(
) -> None:
    async with DevCluster() as api:
        service = standby(api)
        create = service.lease_client.create
        landed = asyncio.Event()

        async def landed_but_unanswered(path: str, body: object) -> object:
            await create(path, body)  # type: ignore[arg-type]
            landed.set()
            await asyncio.Event().wait()  # the answer never comes back
            raise AssertionError("unreachable")

        service.lease_client.create = landed_but_unanswered  # type: ignore[method-assign]
        starting = asyncio.create_task(service.start())
        await asyncio.wait_for(landed.wait(), 5)
        taken = lease_spec(api)["holderIdentity"]
        report = await service.shutdown()
        with pytest.raises(asyncio.CancelledError):
            await starting
        spec = lease_spec(api)

    assert taken == "pod-a_1"
    assert report.lease_released is True
    assert (spec["holderIdentity"], spec["leaseDurationSeconds"]) == ("", 1)


async def test_stop_in_standby_writes_nothing() -> None:
    async with DevCluster() as api:
        service = standby(api)
        starting = await standing_by_beside_another_holder(api, service)
        report = await service.shutdown()
        with pytest.raises(asyncio.CancelledError):
            await starting
        spec = lease_spec(api)
        writes = api.journal.filter(path=LEASE_PATH, method="PUT")

    assert report.lease_released is False
    assert spec["holderIdentity"] == "other" and writes == []


async def test_stop_before_start_makes_no_lease_request() -> None:
    async with DevCluster() as api:
        service = standby(api)
        report = await service.shutdown()
        requests = api.journal.filter(path=LEASE_PATH)

    assert report.lease_released is False and requests == []


async def test_shutdown_of_leader_releases_lease_after_stopping_keeper() -> None:
    async with DevCluster() as api:
        service = await leading(api)
        keeper = service._keeper
        report = await service.shutdown()
        spec = lease_spec(api)

    assert keeper is not None and keeper.cancelled()
    assert report.lease_released is True
    assert (spec["holderIdentity"], spec["leaseDurationSeconds"]) == ("", 1)


async def test_failed_release_warns_lease_expires(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with DevCluster() as api:
        service = await leading(api)
        api.faults.add(method="PUT", path=LEASE_PATH, status=403, message="no")
        with caplog.at_level(logging.WARNING, logger="binding_scheduler.scheduling.lifecycle.stop_budget"):
            report = await service.shutdown()
        spec = lease_spec(api)

    assert report.lease_released is False
    assert spec["holderIdentity"] == "pod-a_1"
    assert [m for m in service_lines(caplog) if "release" in m] == [
        "could not release the lease (it will expire): 403 Forbidden: no"]


async def test_unanswered_release_ends_at_deadline(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with DevCluster() as api:
        service = await leading(api)
        api.faults.add(method="PUT", path=LEASE_PATH, hang=True)
        with caplog.at_level(logging.WARNING, logger="binding_scheduler.scheduling.lifecycle.stop_budget"):
            report = await service.shutdown()

    assert report.lease_released is False
    assert QUICK_ELECTION.renew_deadline <= report.seconds < 5
    assert [m for m in service_lines(caplog) if "release" in m] == [
        "could not release the lease (it will expire): no answer within 0.5s"]
    assert "lease not released (no answer within 0.5s): it expires 3s after its last renewal;" in report.line()


KARMADA_ELECTION = LeaderElectionConfig(lease_duration=15.0, renew_deadline=10.0, retry_period=2.0)


async def test_unanswered_lease_release_ends_within_budget() -> None:
    """karmada-apiserver stalled (SIGSTOP): the release must not wait for Karmada's 10-s renewDeadline, or the stop
    outlasts the pod's grace period (drainTimeout + 10 s) and the kubelet kills it."""
    async with DevCluster() as api:
        api.store.ensure_namespace("karmada-system")
        service = SchedulerService(Connection(server=api.url), SchedulerConfig(
            leader_election=KARMADA_ELECTION, shutdown=ShutdownConfig(drain_timeout=0.5),
            metrics=MetricsConfig(port=0, health_port=0)), identity="pod-a_1")
        await service.start()
        api.faults.add(method="PUT", path=LEASE_PATH, hang=True)
        report = await service.shutdown()

    assert report.seconds <= 0.5 + STOP_TAIL + 0.25
    assert re.search(r"; lease not released \(no answer within [34]\.\ds\): it expires 15s after its last renewal; "
                     r"1 write got no answer and may still be applied \(binding and Lease writes are fenced: "
                     r"only where nobody wrote since\); write gate closed$", report.line()), report.line()


async def test_stop_with_no_time_left_sends_no_lease_release() -> None:
    async with DevCluster() as api:
        service = await leading(api)
        service._stop_requested_at = time.monotonic() - 60  # the drain and its tail are long over
        api.journal.clear()
        report = await service.shutdown()
        lease_writes = api.journal.filter(path=LEASE_PATH, method="PUT")

    assert lease_writes == []
    assert ("lease not released (no time left in the stop's budget): it expires 3s after its last renewal"
            in report.line())


async def test_shutdown_after_lost_lease_writes_no_release() -> None:
    async with DevCluster() as api:
        service = await leading(api)
        await service._lease_lost("test")
        api.journal.clear()
        report = await service.shutdown()
        lease_requests = api.journal.filter(path=LEASE_PATH)

    assert report.lease_released is False
    assert lease_requests == []


async def test_leader_whose_lease_is_taken_stops_fatally() -> None:
    async with DevCluster() as api:
        service = await leading(api)
        fatal = asyncio.Event()
        service.on_fatal = fatal.set
        lease = api.store.get("leases", "karmada-scheduler", "karmada-system")
        taken = {**lease, "spec": {**lease["spec"], "holderIdentity": "pod-b_2"}}
        api.store.update("leases", "karmada-scheduler", taken, namespace="karmada-system")
        await asyncio.wait_for(fatal.wait(), 5)
        report = await service.shutdown()

    assert service.exit_code == 1 and service.lost_at is not None
    assert service.gate.reason.startswith("leadership lost: the lease is now held by pod-b_2")
    assert report.lease_released is False


async def test_shutdown_is_timed_from_first_stop_request() -> None:
    async with DevCluster() as api:
        service = standby(api)
        service.request_stop()
        await asyncio.sleep(0.3)
        report = await service.shutdown()

    assert 0.3 <= report.seconds < 5


async def test_standby_without_lease_answers_is_unready() -> None:
    async with DevCluster() as api:
        service = standby(api)
        starting = await standing_by_beside_another_holder(api, service)
        ready_before = service.probe_ready
        stall = api.faults.add(method="GET", path=LEASE_PATH, hang=True)
        ready_in_stall = await readiness_after(service, want=False)
        stall.remove()
        ready_again = await readiness_after(service, want=True)
        await service.shutdown()
        with pytest.raises(asyncio.CancelledError):
            await starting

    assert (ready_before, ready_in_stall, ready_again) == (True, False, True)


async def readiness_after(service: SchedulerService, *, want: bool, seconds: float = 5.0) -> bool:
    """`probe_ready` once it is `want`, or as it is after `seconds`."""
    for _ in range(int(seconds / 0.05)):
        if service.probe_ready is want:
            break
        await asyncio.sleep(0.05)
    return service.probe_ready

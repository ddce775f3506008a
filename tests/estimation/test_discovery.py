"""Where a cluster's estimator is dialed: static endpoints, then Karmada's Service rule."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from binding_scheduler.estimation import DiscoveryError, EstimatorSettings
from binding_scheduler.estimation.discovery import candidate_targets
from binding_scheduler.model import Cluster
from tests.estimation.helpers import MakeEstimator, StartStub

SETTINGS = EstimatorSettings(service_namespace="est", service_prefix="karmada-scheduler-estimator", port=10352)


def lookup_returning(service: Mapping[str, Any] | None, seen: list[tuple[str, str]] | None = None) -> Any:
    async def lookup(namespace: str, name: str) -> Mapping[str, Any] | None:
        if seen is not None:
            seen.append((namespace, name))
        return service

    return lookup


def external(name: str, ports: list[dict[str, Any]], kind: str = "ExternalName") -> dict[str, Any]:
    return {"spec": {"type": kind, "externalName": name, "ports": ports}}


async def test_static_endpoint_comes_first_and_no_service_is_read() -> None:
    seen: list[tuple[str, str]] = []
    settings = EstimatorSettings(endpoints={"m1": "10.0.0.1:9000"})
    assert await candidate_targets(settings, "m1", lookup_returning(None, seen)) == ("10.0.0.1:9000",)
    assert seen == []


async def test_service_not_found_gives_two_dns_names_in_order() -> None:
    seen: list[tuple[str, str]] = []
    assert await candidate_targets(SETTINGS, "m1", lookup_returning(None, seen)) == (
        "karmada-scheduler-estimator-m1.est.svc.cluster.local:10352",
        "karmada-scheduler-estimator-m1.est.svc:10352",
    )
    assert seen == [("est", "karmada-scheduler-estimator-m1")]


async def test_without_lookup_dns_names_are_used() -> None:
    assert await candidate_targets(EstimatorSettings(port=7000), "m1", None) == (
        "karmada-scheduler-estimator-m1.karmada-system.svc.cluster.local:7000",
        "karmada-scheduler-estimator-m1.karmada-system.svc:7000",
    )


async def test_external_name_service_gives_name_and_target_port() -> None:
    service = external("est.example.com", [{"port": 10352, "targetPort": 31000}, {"port": 80, "targetPort": 8080}])
    assert await candidate_targets(SETTINGS, "m1", lookup_returning(service)) == ("est.example.com:31000",)


@pytest.mark.parametrize(
    ("service", "message"),
    [
        (external("x", [{"port": 10352, "targetPort": 1}], kind="ClusterIP"), 'unsupported service type "ClusterIP"'),
        ({"spec": {"ports": []}}, 'unsupported service type "ClusterIP"'),
        (
            external("x", [{"port": 80, "targetPort": 1}]),
            'no service port 10352 found for service "karmada-scheduler-estimator-m1"',
        ),
        (
            external("x", [{"port": 10352, "targetPort": "grpc"}]),
            "targetPort 'grpc' of service \"karmada-scheduler-estimator-m1\" is not a port number",
        ),
    ],
    ids=["cluster-ip", "default-type", "no-matching-port", "named-target-port"],
)
async def test_unusable_service(service: dict[str, Any], message: str) -> None:
    with pytest.raises(DiscoveryError) as raised:
        await candidate_targets(SETTINGS, "m1", lookup_returning(service))
    assert str(raised.value) == message


async def test_failing_lookup_is_discovery_error() -> None:
    async def lookup(namespace: str, name: str) -> Mapping[str, Any] | None:
        raise ConnectionError("api server down")

    with pytest.raises(DiscoveryError) as raised:
        await candidate_targets(SETTINGS, "m1", lookup)
    assert str(raised.value) == 'cannot get service "est/karmada-scheduler-estimator-m1": api server down'


async def test_external_name_service_is_dialed(stubs: StartStub, make_estimator: MakeEstimator) -> None:
    stub = await stubs("m1", replicas=5)
    service = external("127.0.0.1", [{"port": 10352, "targetPort": stub.port}])
    estimator = make_estimator(service_lookup=lookup_returning(service))
    answer = await estimator.max_available_replicas([Cluster(name="m1")], None)
    assert dict(answer.replicas) == {"m1": 5}
    assert estimator.connected == {"m1": f"127.0.0.1:{stub.port}"}


async def test_unusable_service_fails_only_that_cluster(stubs: StartStub, make_estimator: MakeEstimator) -> None:
    stub = await stubs("ok", replicas=5)
    estimator = make_estimator([stub], service_lookup=lookup_returning({"spec": {"type": "NodePort"}}))
    answer = await estimator.max_available_replicas([Cluster(name="ok"), Cluster(name="m1")], None)
    assert dict(answer.replicas) == {"ok": 5}
    assert dict(answer.failures) == {"m1": 'cluster m1: estimator not found: unsupported service type "NodePort"'}

"""The wire contract (Karmada's pkg/estimator/service/service.proto, pkg/estimator/pb/estimator.proto): method paths,
request bytes, and every message through a real server.

Expected bytes are written here from the .proto files' fields with a hand-rolled encoder (tests/estimation/helpers.py),
not with the protobuf library that produces them.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path

import grpc
import grpc.aio
import pytest
from google.protobuf.message import Message

from binding_scheduler.algorithm.general_estimator import AssumedWorkload
from binding_scheduler.estimation import AccurateEstimator, wire
from binding_scheduler.estimation.pb import estimator_pb2
from binding_scheduler.estimation.stub import EstimatorStub
from binding_scheduler.model import Cluster, Component, NodeClaim, ObjectReference, ReplicaRequirements, parse_quantity
from binding_scheduler.model.binding import NodeSelectorTerm
from binding_scheduler.model.selectors import Requirement, Toleration
from tests.estimation.helpers import MakeEstimator, StartStub, entry, ld, number, text

ROOT = Path(__file__).resolve().parents[2]
SERVICE = "github.com.karmada_io.karmada.pkg.estimator.service.Estimator"


def q(value: str) -> bytes:
    """A serialized resource.Quantity: field 1 = the canonical string."""
    return text(1, value)


def requirements(
    request: Mapping[str, str] | None = None,
    *,
    namespace: str = "",
    priority_class_name: str = "",
    node_claim: NodeClaim | None = None,
) -> ReplicaRequirements:
    return ReplicaRequirements(
        resource_request={name: parse_quantity(value, name) for name, value in (request or {}).items()},
        node_claim=node_claim,
        namespace=namespace,
        priority_class_name=priority_class_name,
    )


CLAIM = NodeClaim(
    hard_node_affinity=(
        NodeSelectorTerm(
            match_expressions=(Requirement("zone", "In", ("a", "b")),),
            match_fields=(Requirement("metadata.name", "NotIn", ("n1",)),),
        ),
    ),
    node_selector={"disk": "ssd"},
    tolerations=(
        Toleration(key="gpu", operator="Exists", effect="NoSchedule"),
        Toleration(key="k", operator="Equal", value="v", effect="NoExecute", toleration_seconds=30),
    ),
)
SELECTOR = ld(
    1,  # nodeSelectorTerms
    ld(1, text(1, "zone") + text(2, "In") + text(3, "a") + text(3, "b"))  # matchExpressions
    + ld(2, text(1, "metadata.name") + text(2, "NotIn") + text(3, "n1")),  # matchFields
)
# Kubernetes writes every string of a Toleration, empty ones included; tolerationSeconds only when set.
TOLERATION_1 = text(1, "gpu") + text(2, "Exists") + text(3, "") + text(4, "NoSchedule")
TOLERATION_2 = text(1, "k") + text(2, "Equal") + text(3, "v") + text(4, "NoExecute") + number(5, 30)


def test_method_paths_are_karmadas() -> None:
    assert f"/{SERVICE}/MaxAvailableReplicas" == wire.MAX_AVAILABLE_REPLICAS
    assert f"/{SERVICE}/MaxAvailableComponentSets" == wire.MAX_AVAILABLE_COMPONENT_SETS
    assert f"/{SERVICE}/GetUnschedulableReplicas" == wire.GET_UNSCHEDULABLE_REPLICAS


def test_generated_code_is_up_to_date() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_proto.py"), "--check"], check=False, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr


async def received_by_server(
    stubs: StartStub, make_estimator: MakeEstimator, call: Callable[[AccurateEstimator], Awaitable[object]]
) -> bytes:
    stub = await stubs("member1", replicas=1)
    estimator = make_estimator([stub])
    await call(estimator)
    [recorded] = stub.calls
    return recorded.raw


async def test_replicas_request_without_requirements(stubs: StartStub, make_estimator: MakeEstimator) -> None:
    raw = await received_by_server(
        stubs, make_estimator, lambda e: e.max_available_replicas([Cluster(name="member1")], None)
    )
    assert raw == b"\x0a\x07member1"


async def test_replicas_request_fills_both_fields(
    stubs: StartStub, make_estimator: MakeEstimator
) -> None:
    wanted = requirements(request={"memory": "1024Mi", "cpu": "0.5"}, namespace="default", priority_class_name="high")
    raw = await received_by_server(
        stubs, make_estimator, lambda e: e.max_available_replicas([Cluster(name="member1")], wanted)
    )
    resources = entry("cpu", q("500m")), entry("memory", q("1Gi"))
    replica_requirements = (
        b"".join(ld(2, e) for e in resources)  # resourceRequest (v1.17)
        + text(3, "default")  # namespace
        + text(4, "high")  # priorityClassName
        + b"".join(ld(5, e) for e in resources)  # resourceRequestBytes
    )
    assert raw == text(1, "member1") + ld(2, replica_requirements)


async def test_replicas_request_without_legacy_fields(stubs: StartStub, make_estimator: MakeEstimator) -> None:
    stub = await stubs("member1", replicas=1)
    estimator = make_estimator([stub], send_legacy_fields=False)
    await estimator.max_available_replicas([Cluster(name="member1")], requirements(request={"cpu": "2"}))
    assert stub.calls[0].raw == text(1, "member1") + ld(2, ld(5, entry("cpu", q("2"))))


async def test_replicas_request_with_node_claim(stubs: StartStub, make_estimator: MakeEstimator) -> None:
    wanted = requirements(node_claim=CLAIM)
    raw = await received_by_server(
        stubs, make_estimator, lambda e: e.max_available_replicas([Cluster(name="member1")], wanted)
    )
    node_claim = (
        ld(1, SELECTOR)  # nodeAffinity (v1.17)
        + ld(2, entry("disk", b"ssd"))  # nodeSelector
        + ld(3, TOLERATION_1)  # tolerations (v1.17)
        + ld(3, TOLERATION_2)
        + ld(4, SELECTOR)  # nodeAffinityBytes
        + ld(5, TOLERATION_1)  # tolerationsBytes
        + ld(5, TOLERATION_2)
    )
    assert raw == text(1, "member1") + ld(2, ld(1, node_claim))


async def test_empty_node_claim_is_sent_as_empty_message(stubs: StartStub, make_estimator: MakeEstimator) -> None:
    raw = await received_by_server(
        stubs,
        make_estimator,
        lambda e: e.max_available_replicas([Cluster(name="member1")], requirements(node_claim=NodeClaim())),
    )
    assert raw == text(1, "member1") + ld(2, ld(1, b""))


async def test_component_sets_request(stubs: StartStub, make_estimator: MakeEstimator) -> None:
    components = [
        Component(name="web", replicas=2, requirements=requirements(request={"cpu": "1"}, priority_class_name="p")),
        Component(name="db", replicas=1),
    ]
    raw = await received_by_server(
        stubs,
        make_estimator,
        lambda e: e.max_available_component_sets([Cluster(name="member1")], components, "shop"),
    )
    cpu = entry("cpu", q("1"))
    web = text(1, "web") + ld(2, ld(2, cpu) + text(3, "p") + ld(4, cpu)) + number(3, 2)
    db = text(1, "db") + number(3, 1)
    assert raw == text(1, "member1") + ld(2, web) + ld(2, db) + text(3, "shop")


async def test_request_carries_that_clusters_assumed(
    stubs: StartStub, make_estimator: MakeEstimator
) -> None:
    """Field 3 `assumedWorkloads` (gate SchedulingOvercommitProtection): namespace, then the components."""
    assumed = {"member1": [AssumedWorkload("shop", (Component(name="api", replicas=3),))],
               "member2": [AssumedWorkload("other", (Component(name="x", replicas=1),))]}
    raw = await received_by_server(
        stubs, make_estimator, lambda e: e.max_available_replicas([Cluster(name="member1")], None, assumed=assumed)
    )
    assert raw == text(1, "member1") + ld(3, text(1, "shop") + ld(2, text(1, "api") + number(3, 3)))


async def test_component_sets_request_carries_assumed_workloads(
    stubs: StartStub, make_estimator: MakeEstimator
) -> None:
    """Field 4 `assumedWorkloads`, after the namespace."""
    assumed = {"member1": [AssumedWorkload("shop", (Component(name="db", replicas=2),))]}
    raw = await received_by_server(
        stubs, make_estimator,
        lambda e: e.max_available_component_sets([Cluster(name="member1")], [Component(name="web", replicas=1)],
                                                 "shop", assumed=assumed),
    )
    web = text(1, "web") + number(3, 1)
    assert raw == text(1, "member1") + ld(2, web) + text(3, "shop") + ld(4, text(1, "shop") + ld(2, text(1, "db")
                                                                                               + number(3, 2)))


async def test_object_metadata_names_resource(stubs: StartStub, make_estimator: MakeEstimator) -> None:
    stub = await stubs("member1", replicas=1)
    estimator = make_estimator([stub])
    resource = ObjectReference(api_version="apps/v1", kind="Deployment", name="web", namespace="default")
    await estimator.max_available_replicas([Cluster(name="member1")], None, resource=resource)
    assert stub.calls[0].metadata["object"] == "kind=Deployment, name=default/web"


async def call_raw(stub: EstimatorStub, method: str, request: Message, response_type: type[Message]) -> Message:
    async with grpc.aio.insecure_channel(stub.address) as channel:
        call = channel.unary_unary(
            method, request_serializer=wire.serialize, response_deserializer=response_type.FromString
        )
        response: Message = await call(request)
        return response


def test_unschedulable_replicas_request_bytes() -> None:
    resource = ObjectReference(api_version="apps/v1", kind="Deployment", name="web", namespace="default")
    request = wire.unschedulable_replicas_request("member1", resource, threshold_seconds=60)
    reference = text(1, "apps/v1") + text(2, "Deployment") + text(3, "default") + text(4, "web")
    assert wire.serialize(request) == text(1, "member1") + ld(2, reference) + number(3, 60_000_000_000)


def full_component() -> estimator_pb2.Component:
    claim = estimator_pb2.NodeClaim(
        nodeSelector={"disk": "ssd"}, nodeAffinityBytes=SELECTOR, tolerationsBytes=[TOLERATION_1]
    )
    return estimator_pb2.Component(
        name="web",
        replicas=3,
        replicaRequirements=estimator_pb2.ComponentReplicaRequirements(
            nodeClaim=claim, priorityClassName="p", resourceRequestBytes={"cpu": q("1")}
        ),
    )


ROUND_TRIPS = [
    pytest.param(
        wire.MAX_AVAILABLE_REPLICAS,
        estimator_pb2.MaxAvailableReplicasRequest(
            cluster="member1",
            replicaRequirements=estimator_pb2.ReplicaRequirements(
                nodeClaim=estimator_pb2.NodeClaim(nodeAffinity=SELECTOR, tolerations=[TOLERATION_2]),
                resourceRequest={"cpu": q("1")},
                namespace="ns",
                priorityClassName="p",
                resourceRequestBytes={"memory": q("1Gi")},
            ),
            assumedWorkloads=[estimator_pb2.AssumedWorkload(namespace="ns", components=[full_component()])],
        ),
        estimator_pb2.MaxAvailableReplicasResponse,
        estimator_pb2.MaxAvailableReplicasResponse(maxReplicas=7),
        id="MaxAvailableReplicas",
    ),
    pytest.param(
        wire.MAX_AVAILABLE_COMPONENT_SETS,
        estimator_pb2.MaxAvailableComponentSetsRequest(
            cluster="member1",
            components=[full_component()],
            namespace="ns",
            assumedWorkloads=[estimator_pb2.AssumedWorkload(namespace="ns", components=[full_component()])],
        ),
        estimator_pb2.MaxAvailableComponentSetsResponse,
        estimator_pb2.MaxAvailableComponentSetsResponse(maxSets=7),
        id="MaxAvailableComponentSets",
    ),
    pytest.param(
        wire.GET_UNSCHEDULABLE_REPLICAS,
        estimator_pb2.UnschedulableReplicasRequest(
            cluster="member1",
            resource=estimator_pb2.ObjectReference(apiVersion="apps/v1", kind="Deployment", namespace="n", name="w"),
            unschedulableThreshold=5_000_000_000,
        ),
        estimator_pb2.UnschedulableReplicasResponse,
        estimator_pb2.UnschedulableReplicasResponse(unschedulableReplicas=7),
        id="GetUnschedulableReplicas",
    ),
]


@pytest.mark.parametrize(("method", "request_message", "response_type", "response"), ROUND_TRIPS)
async def test_every_message_round_trips_through_real_server(
    stubs: StartStub,
    method: str,
    request_message: Message,
    response_type: type[Message],
    response: Message,
) -> None:
    stub = await stubs("member1", replicas=7, sets=7, unschedulable=7)
    answer = await call_raw(stub, method, request_message, response_type)
    assert stub.calls[0].request == request_message
    assert answer == response


async def test_server_rejects_another_clusters_request(stubs: StartStub) -> None:
    stub = await stubs("member1", replicas=7)
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await call_raw(
            stub,
            wire.MAX_AVAILABLE_REPLICAS,
            estimator_pb2.MaxAvailableReplicasRequest(cluster="member2"),
            estimator_pb2.MaxAvailableReplicasResponse,
        )
    assert raised.value.code() is grpc.StatusCode.UNKNOWN
    assert raised.value.details() == "cluster name does not match, got: member2, desire: member1"


@pytest.mark.parametrize(
    ("data", "value"),
    [(b"", 0), (number(1, 12), 12), (number(1, -1), -1), (number(1, 2**31 - 1), 2**31 - 1)],
)
def test_read_count_accepts(data: bytes, value: int) -> None:
    assert wire.read_count(data) == value


@pytest.mark.parametrize("data", [number(1, -2), number(1, 2**31), number(1, 2**40), b"\x08", b"\xff\xff"])
def test_read_count_rejects(data: bytes) -> None:
    with pytest.raises(wire.InvalidAnswer):
        wire.read_count(data)

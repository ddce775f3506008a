"""The estimator RPCs on the wire: method paths, request building, response reading.

Karmada's: the `Estimator` service of `pkg/estimator/service/service.proto`, the messages of
`pkg/estimator/pb/estimator.proto`, and the requests built by
`pkg/estimator/client/accurate.go: SchedulerEstimator.maxAvailableReplicas` and `maxAvailableComponentSets`.
"""

from __future__ import annotations

from collections.abc import Sequence

from google.protobuf.message import DecodeError, Message

from binding_scheduler.algorithm.general_estimator import AssumedWorkload
from binding_scheduler.model import Component, NodeClaim, ObjectReference, ReplicaRequirements

from .payloads import node_selector_bytes, resource_request_bytes, toleration_bytes
from .pb import estimator_pb2, service_pb2, wide_pb2

SERVICE = service_pb2.DESCRIPTOR.services_by_name["Estimator"].full_name
MAX_AVAILABLE_REPLICAS = f"/{SERVICE}/MaxAvailableReplicas"
MAX_AVAILABLE_COMPONENT_SETS = f"/{SERVICE}/MaxAvailableComponentSets"
GET_UNSCHEDULABLE_REPLICAS = f"/{SERVICE}/GetUnschedulableReplicas"
OBJECT_METADATA_KEY = "object"
INT32_MAX = 2**31 - 1
UNAUTHENTIC_REPLICA = -1


class InvalidAnswer(ValueError):
    """The estimator answered something that cannot be a replica count."""


def serialize(message: Message) -> bytes:
    """Deterministic encoding (map entries sorted by key), so equal requests give equal bytes."""
    return message.SerializeToString(deterministic=True)


def read_count(data: bytes) -> int:
    """Field 1 of either response, as sent: `-1` or a value in 0..MaxInt32, else `InvalidAnswer`."""
    response = wide_pb2.CountResponse()
    try:
        response.ParseFromString(data)
    except DecodeError as exc:
        raise InvalidAnswer(f"undecodable response ({len(data)} bytes): {exc}") from None
    value = response.value
    if value == UNAUTHENTIC_REPLICA or 0 <= value <= INT32_MAX:
        return value
    raise InvalidAnswer(f"answer {value} is outside -1..{INT32_MAX}")


def object_metadata(resource: ObjectReference | None) -> tuple[tuple[str, str], ...]:
    """The `object` metadata Karmada sends for the estimator's logs: `kind=<Kind>, name=<ns>/<name>`."""
    if resource is None:
        return ()
    return ((OBJECT_METADATA_KEY, f"kind={resource.kind}, name={resource.namespace}/{resource.name}"),)


def _node_claim(claim: NodeClaim, target: estimator_pb2.NodeClaim, legacy: bool) -> None:
    target.SetInParent()
    target.nodeSelector.update(claim.node_selector)
    if claim.hard_node_affinity is not None:
        affinity = node_selector_bytes(claim.hard_node_affinity)
        target.nodeAffinityBytes = affinity
        if legacy:
            target.nodeAffinity = affinity
    tolerations = [toleration_bytes(t) for t in claim.tolerations]
    target.tolerationsBytes.extend(tolerations)
    if legacy:
        target.tolerations.extend(tolerations)


def replica_requirements(requirements: ReplicaRequirements, *, legacy: bool) -> estimator_pb2.ReplicaRequirements:
    out = estimator_pb2.ReplicaRequirements(
        namespace=requirements.namespace, priorityClassName=requirements.priority_class_name
    )
    request = resource_request_bytes(requirements.resource_request)
    out.resourceRequestBytes.update(request)
    if legacy:
        out.resourceRequest.update(request)
    if requirements.node_claim is not None:
        _node_claim(requirements.node_claim, out.nodeClaim, legacy)
    return out


def _component(component: Component, *, legacy: bool) -> estimator_pb2.Component:
    out = estimator_pb2.Component(name=component.name, replicas=component.replicas)
    requirements = component.requirements
    if requirements is not None:
        target = out.replicaRequirements
        target.SetInParent()
        target.priorityClassName = requirements.priority_class_name
        request = resource_request_bytes(requirements.resource_request)
        target.resourceRequestBytes.update(request)
        if legacy:
            target.resourceRequest.update(request)
        if requirements.node_claim is not None:
            _node_claim(requirements.node_claim, target.nodeClaim, legacy)
    return out


def assumed_workload(workload: AssumedWorkload, *, legacy: bool) -> estimator_pb2.AssumedWorkload:
    """One workload assumed on the cluster (gate `SchedulingOvercommitProtection`): its namespace and components."""
    out = estimator_pb2.AssumedWorkload(namespace=workload.namespace)
    out.components.extend(_component(c, legacy=legacy) for c in workload.components)
    return out


class AssumedWorkloadEncoder:
    """`assumed_workload`, memoised by the workload object. A pass sends every workload assumed on a cluster to
    that cluster's estimator, and the same workloads pass after pass until they are released: encoding their
    quantities again each time was most of a pass's CPU. Holds the workload (so its id is not reused while the
    entry lives); emptied when it reaches `limit` entries."""

    def __init__(self, *, legacy: bool, limit: int = 65_536) -> None:
        self.legacy = legacy
        self.limit = limit
        self._encoded: dict[int, tuple[AssumedWorkload, estimator_pb2.AssumedWorkload]] = {}

    def __call__(self, workload: AssumedWorkload) -> estimator_pb2.AssumedWorkload:
        entry = self._encoded.get(id(workload))
        if entry is not None and entry[0] is workload:
            return entry[1]
        encoded = assumed_workload(workload, legacy=self.legacy)
        if len(self._encoded) >= self.limit:
            self._encoded.clear()
        self._encoded[id(workload)] = (workload, encoded)
        return encoded


def replicas_request_for(
    cluster: str, encoded: estimator_pb2.ReplicaRequirements | None,
    assumed: Sequence[estimator_pb2.AssumedWorkload] = (),
) -> estimator_pb2.MaxAvailableReplicasRequest:
    """The request for one cluster around requirements encoded once for a whole fan-out."""
    out = estimator_pb2.MaxAvailableReplicasRequest(cluster=cluster)
    if encoded is not None:
        out.replicaRequirements.CopyFrom(encoded)
    out.assumedWorkloads.extend(assumed)
    return out


def max_available_component_sets_request(
    cluster: str, components: Sequence[Component], namespace: str, *, legacy: bool = True,
    assumed: Sequence[AssumedWorkload] = (),
) -> estimator_pb2.MaxAvailableComponentSetsRequest:
    out = estimator_pb2.MaxAvailableComponentSetsRequest(cluster=cluster, namespace=namespace)
    out.components.extend(_component(c, legacy=legacy) for c in components)
    out.assumedWorkloads.extend(assumed_workload(w, legacy=legacy) for w in assumed)
    return out


def unschedulable_replicas_request(
    cluster: str, resource: ObjectReference, threshold_seconds: float
) -> estimator_pb2.UnschedulableReplicasRequest:
    """GetUnschedulableReplicas (the descheduler's call; provided for completeness and the stub)."""
    out = estimator_pb2.UnschedulableReplicasRequest(
        cluster=cluster, unschedulableThreshold=round(threshold_seconds * 1_000_000_000)
    )
    out.resource.CopyFrom(
        estimator_pb2.ObjectReference(
            apiVersion=resource.api_version, kind=resource.kind, namespace=resource.namespace, name=resource.name
        )
    )
    return out

"""The estimator RPCs on the wire: method paths, request building, response reading.

Karmada's: the `Estimator` service of `pkg/estimator/service/service.proto`, the messages of
`pkg/estimator/pb/estimator.proto`, and the requests built by
`pkg/estimator/client/accurate.go: SchedulerEstimator.maxAvailableReplicas` and `maxAvailableComponentSets`.
"""

from __future__ import annotations

from collections.abc import Sequence

from google.protobuf.message import DecodeError, Message

from binding_scheduler.algorithm.general_estimator import AssumedLoad, AssumedWorkload
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


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _length_delimited(field: int, payload: bytes) -> bytes:
    """One length-delimited protobuf record (a string, bytes or message field) of `field`."""
    return _varint(field << 3 | 2) + _varint(len(payload)) + payload


ASSUMED_FIELD_OF_REPLICAS_REQUEST = estimator_pb2.MaxAvailableReplicasRequest.DESCRIPTOR.fields_by_name[
    "assumedWorkloads"].number
ASSUMED_FIELD_OF_SETS_REQUEST = estimator_pb2.MaxAvailableComponentSetsRequest.DESCRIPTOR.fields_by_name[
    "assumedWorkloads"].number


class AssumedRecords:
    """A request's `assumedWorkloads` as wire bytes, ready to follow its other fields.

    A pass sends every workload assumed on a cluster to that cluster's estimator, and the same workloads pass
    after pass until they are released. Protobuf's repeated message field is its records one after another, and
    `assumedWorkloads` has the highest field number of both requests, so the request is its other fields'
    deterministic encoding followed by these bytes, exactly what encoding the whole message gives. Each
    workload's record is encoded once per workload object (held, so its id is not reused while the entry lives;
    emptied at `limit` entries), and each cluster's latest run once per listing (the assumption cache hands out
    the same `AssumedLoad` tuple while a cluster's assumptions are unchanged; one run per cluster is kept, so
    a changed listing replaces its cluster's run), so a request costs a copy of bytes, not an encoding of every
    workload in it."""

    def __init__(self, field: int, *, legacy: bool, limit: int = 65_536) -> None:
        self.field = field
        self.legacy = legacy
        self.limit = limit
        self._records: dict[int, tuple[AssumedWorkload, bytes]] = {}
        self._runs: dict[str, tuple[tuple[AssumedWorkload, ...], bytes]] = {}

    def record(self, workload: AssumedWorkload) -> bytes:
        entry = self._records.get(id(workload))
        if entry is not None and entry[0] is workload:
            return entry[1]
        record = _length_delimited(self.field, serialize(assumed_workload(workload, legacy=self.legacy)))
        if len(self._records) >= self.limit:
            self._records.clear()
        self._records[id(workload)] = (workload, record)
        return record

    def __call__(self, cluster: str, workloads: Sequence[AssumedWorkload]) -> bytes:
        """The records of the workloads assumed on `cluster`."""
        if not workloads:
            return b""
        record = self.record
        if not isinstance(workloads, AssumedLoad):  # not the cache's shared listing: nothing to reuse
            return b"".join([record(w) for w in workloads])
        held = workloads.workloads
        entry = self._runs.get(cluster)
        if entry is None or entry[0] is not held:
            entry = self._runs[cluster] = (held, b"".join([record(w) for w in held]))
        return entry[1]


def replicas_request_prefix(requirements: ReplicaRequirements | None, *, legacy: bool) -> bytes:
    """A `MaxAvailableReplicasRequest`'s requirements field, encoded once for a whole fan-out."""
    if requirements is None:
        return b""
    return serialize(estimator_pb2.MaxAvailableReplicasRequest(
        replicaRequirements=replica_requirements(requirements, legacy=legacy)))


def request_bytes(cluster: str, prefix: bytes, assumed: bytes = b"") -> bytes:
    """Either request for one cluster, encoded: its name (field 1 of both), the fan-out's other fields
    (`replicas_request_prefix`, `component_sets_request_prefix`) and the workloads assumed there
    (`AssumedRecords`), in field order."""
    return (_length_delimited(1, cluster.encode()) if cluster else b"") + prefix + assumed


def component_sets_request_prefix(components: Sequence[Component], namespace: str, *, legacy: bool) -> bytes:
    """A `MaxAvailableComponentSetsRequest`'s components and namespace, encoded once for a whole fan-out."""
    out = estimator_pb2.MaxAvailableComponentSetsRequest(namespace=namespace)
    out.components.extend(_component(c, legacy=legacy) for c in components)
    return serialize(out)


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

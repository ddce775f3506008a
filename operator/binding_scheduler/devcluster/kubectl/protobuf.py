"""Kubernetes protobuf request bodies (`application/vnd.kubernetes.protobuf`) of the built-in kinds devcluster
serves, decoded into the JSON objects a client would have sent.

client-go (kubectl 1.32 and later, and every typed Go client) sends built-in kinds as protobuf and does not fall
back to JSON when a server refuses them (it only falls back from CBOR), so `kubectl create namespace`,
`kubectl auth can-i` and `kubectl auth whoami` need this. A body is the `k8s\\x00` magic and a `runtime.Unknown`
envelope (its apiVersion and kind, and the object's own bytes). The messages below are the fields of the
`generated.proto` files of k8s.io/api and k8s.io/apimachinery v0.35 that those kinds use (a test compares them
with the .proto files when the Go module cache has them). Zero values are dropped, as Go's JSON encoding drops
them for `omitempty` fields, except the few fields without `omitempty` listed in `KEEP_ZERO`.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

MAGIC = b"k8s\x00"
CONTENT_TYPE = "application/vnd.kubernetes.protobuf"


class ProtobufError(ValueError):
    """The body is not a protobuf message of a kind devcluster knows."""


# message -> {number: (json name, type)}; a type is a scalar ("string", "int", "bool", "bytes"), a special
# ("Time", "MicroTime", "FieldsV1", "IntOrString"), a message name, "[T]" (repeated) or "{T}" (map of string to T).
_SPEC = """
TypeMeta: 1 apiVersion string; 2 kind string
Unknown: 1 typeMeta TypeMeta; 2 raw bytes; 3 contentEncoding string; 4 contentType string
ObjectMeta: 1 name string; 2 generateName string; 3 namespace string; 4 selfLink string; 5 uid string;
    6 resourceVersion string; 7 generation int; 8 creationTimestamp Time; 9 deletionTimestamp Time;
    10 deletionGracePeriodSeconds int; 11 labels {string}; 12 annotations {string};
    13 ownerReferences [OwnerReference]; 14 finalizers [string]; 17 managedFields [ManagedFieldsEntry]
OwnerReference: 5 apiVersion string; 1 kind string; 3 name string; 4 uid string; 6 controller bool;
    7 blockOwnerDeletion bool
ManagedFieldsEntry: 1 manager string; 2 operation string; 3 apiVersion string; 4 time Time; 6 fieldsType string;
    7 fieldsV1 FieldsV1; 8 subresource string
Condition: 1 type string; 2 status string; 3 observedGeneration int; 4 lastTransitionTime Time; 5 reason string;
    6 message string
DeleteOptions: 1 gracePeriodSeconds int; 2 preconditions Preconditions; 3 orphanDependents bool;
    4 propagationPolicy string; 5 dryRun [string]; 6 ignoreStoreReadErrorWithClusterBreakingPotential bool
Preconditions: 1 uid string; 2 resourceVersion string
FieldSelectorRequirement: 1 key string; 2 operator string; 3 values [string]
LabelSelectorRequirement: 1 key string; 2 operator string; 3 values [string]
Namespace: 1 metadata ObjectMeta; 2 spec NamespaceSpec; 3 status NamespaceStatus
NamespaceSpec: 1 finalizers [string]
NamespaceStatus: 1 phase string; 2 conditions [NamespaceCondition]
NamespaceCondition: 1 type string; 2 status string; 4 lastTransitionTime Time; 5 reason string; 6 message string
Event: 1 metadata ObjectMeta; 2 involvedObject ObjectReference; 3 reason string; 4 message string;
    5 source EventSource; 6 firstTimestamp Time; 7 lastTimestamp Time; 8 count int; 9 type string;
    10 eventTime MicroTime; 11 series EventSeries; 12 action string; 13 related ObjectReference;
    14 reportingComponent string; 15 reportingInstance string
ObjectReference: 1 kind string; 2 namespace string; 3 name string; 4 uid string; 5 apiVersion string;
    6 resourceVersion string; 7 fieldPath string
EventSource: 1 component string; 2 host string
EventSeries: 1 count int; 2 lastObservedTime MicroTime
Service: 1 metadata ObjectMeta; 2 spec ServiceSpec; 3 status ServiceStatus
ServiceSpec: 1 ports [ServicePort]; 2 selector {string}; 3 clusterIP string; 18 clusterIPs [string]; 4 type string;
    5 externalIPs [string]; 7 sessionAffinity string; 8 loadBalancerIP string; 9 loadBalancerSourceRanges [string];
    10 externalName string; 11 externalTrafficPolicy string; 12 healthCheckNodePort int;
    13 publishNotReadyAddresses bool; 14 sessionAffinityConfig SessionAffinityConfig; 19 ipFamilies [string];
    17 ipFamilyPolicy string; 20 allocateLoadBalancerNodePorts bool; 21 loadBalancerClass string;
    22 internalTrafficPolicy string; 23 trafficDistribution string
ServicePort: 1 name string; 2 protocol string; 6 appProtocol string; 3 port int; 4 targetPort IntOrString;
    5 nodePort int
ServiceStatus: 1 loadBalancer LoadBalancerStatus; 2 conditions [Condition]
LoadBalancerStatus: 1 ingress [LoadBalancerIngress]
LoadBalancerIngress: 1 ip string; 2 hostname string; 3 ipMode string; 4 ports [PortStatus]
PortStatus: 1 port int; 2 protocol string; 3 error string
SessionAffinityConfig: 1 clientIP ClientIPConfig
ClientIPConfig: 1 timeoutSeconds int
Lease: 1 metadata ObjectMeta; 2 spec LeaseSpec
LeaseSpec: 1 holderIdentity string; 2 leaseDurationSeconds int; 3 acquireTime MicroTime; 4 renewTime MicroTime;
    5 leaseTransitions int; 6 strategy string; 7 preferredHolder string
SelfSubjectAccessReview: 1 metadata ObjectMeta; 2 spec SelfSubjectAccessReviewSpec; 3 status SubjectAccessReviewStatus
SelfSubjectAccessReviewSpec: 1 resourceAttributes ResourceAttributes; 2 nonResourceAttributes NonResourceAttributes
ResourceAttributes: 1 namespace string; 2 verb string; 3 group string; 4 version string; 5 resource string;
    6 subresource string; 7 name string; 8 fieldSelector FieldSelectorAttributes;
    9 labelSelector LabelSelectorAttributes
NonResourceAttributes: 1 path string; 2 verb string
FieldSelectorAttributes: 1 rawSelector string; 2 requirements [FieldSelectorRequirement]
LabelSelectorAttributes: 1 rawSelector string; 2 requirements [LabelSelectorRequirement]
SubjectAccessReviewStatus: 1 allowed bool; 4 denied bool; 2 reason string; 3 evaluationError string
SelfSubjectRulesReview: 1 metadata ObjectMeta; 2 spec SelfSubjectRulesReviewSpec; 3 status SubjectRulesReviewStatus
SelfSubjectRulesReviewSpec: 1 namespace string
SubjectRulesReviewStatus: 1 resourceRules [ResourceRule]; 2 nonResourceRules [NonResourceRule]; 3 incomplete bool;
    4 evaluationError string
ResourceRule: 1 verbs [string]; 2 apiGroups [string]; 3 resources [string]; 4 resourceNames [string]
NonResourceRule: 1 verbs [string]; 2 nonResourceURLs [string]
SelfSubjectReview: 1 metadata ObjectMeta; 2 status SelfSubjectReviewStatus
SelfSubjectReviewStatus: 1 userInfo UserInfo
UserInfo: 1 username string; 2 uid string; 3 groups [string]; 4 extra {ExtraValue}
ExtraValue: 1 items [string]
"""


def _parse_spec(text: str) -> dict[str, dict[int, tuple[str, str]]]:
    messages: dict[str, dict[int, tuple[str, str]]] = {}
    current = ""
    for line in text.strip().splitlines():
        fields = line
        if not line.startswith(" "):
            current, _, fields = line.partition(":")
            messages[current] = {}
        for clause in fields.split(";"):
            parts = clause.split()
            if parts:
                messages[current][int(parts[0])] = (parts[1], parts[2])
    return messages


MESSAGES = _parse_spec(_SPEC)

# (apiVersion, kind) -> message, for the kinds whose bodies devcluster decodes
KINDS: dict[tuple[str, str], str] = {
    ("v1", "Namespace"): "Namespace",
    ("v1", "Event"): "Event",
    ("v1", "Service"): "Service",
    ("v1", "DeleteOptions"): "DeleteOptions",
    ("meta.k8s.io/v1", "DeleteOptions"): "DeleteOptions",
    ("coordination.k8s.io/v1", "Lease"): "Lease",
    ("authorization.k8s.io/v1", "SelfSubjectAccessReview"): "SelfSubjectAccessReview",
    ("authorization.k8s.io/v1", "SelfSubjectRulesReview"): "SelfSubjectRulesReview",
    ("authentication.k8s.io/v1", "SelfSubjectReview"): "SelfSubjectReview",
}

# Fields Go's JSON encoding keeps when they hold their zero value (no `omitempty`).
KEEP_ZERO = frozenset({
    ("ServicePort", "port"), ("SubjectAccessReviewStatus", "allowed"), ("OwnerReference", "apiVersion"),
    ("OwnerReference", "kind"), ("OwnerReference", "name"), ("OwnerReference", "uid"),
    ("NamespaceCondition", "type"), ("NamespaceCondition", "status"), ("Condition", "type"),
    ("Condition", "status"), ("Condition", "reason"), ("Condition", "message"), ("PortStatus", "port"),
    ("PortStatus", "protocol"), ("ResourceRule", "verbs"), ("NonResourceRule", "verbs"),
    ("SubjectRulesReviewStatus", "resourceRules"), ("SubjectRulesReviewStatus", "nonResourceRules"),
    ("SubjectRulesReviewStatus", "incomplete"),
})


def _varint(data: bytes, position: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if position >= len(data):
            raise ProtobufError("truncated varint")
        byte = data[position]
        position += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, position
        shift += 7
        if shift > 63:
            raise ProtobufError("varint too long")


def _fields(data: bytes) -> list[tuple[int, int, Any]]:
    """(number, wire type, value) of every field in order: ints for varints, bytes otherwise."""
    fields = []
    position = 0
    while position < len(data):
        key, position = _varint(data, position)
        number, wire = key >> 3, key & 7
        value: Any
        if wire == 0:
            value, position = _varint(data, position)
        elif wire == 2:
            length, position = _varint(data, position)
            if position + length > len(data):
                raise ProtobufError("truncated field")
            value, position = data[position:position + length], position + length
        elif wire == 1:
            value, position = data[position:position + 8], position + 8
        elif wire == 5:
            value, position = data[position:position + 4], position + 4
        else:
            raise ProtobufError(f"unsupported wire type {wire}")
        fields.append((number, wire, value))
    return fields


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _time(data: bytes, micro: bool) -> str | None:
    seconds = nanos = 0
    for number, _, value in _fields(data):
        if number == 1:
            seconds = _signed(value)
        elif number == 2:
            nanos = _signed(value)
    if seconds == 0 and nanos == 0:
        return None
    moment = datetime.fromtimestamp(seconds, UTC)
    if micro:
        return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{nanos // 1000:06d}Z"
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _value(kind: str, wire: int, raw: Any) -> Any:
    if kind == "string":
        return bytes(raw).decode("utf-8")
    if kind == "bytes":
        return bytes(raw)
    if kind == "int":
        return _signed(raw)
    if kind == "bool":
        return bool(raw)
    if kind in ("Time", "MicroTime"):
        return _time(raw, kind == "MicroTime")
    if kind == "FieldsV1":
        raw_json = next((value for number, _, value in _fields(raw) if number == 1), b"{}")
        return json.loads(raw_json)
    if kind == "IntOrString":
        fields = {number: value for number, _, value in _fields(raw)}
        return bytes(fields.get(3, b"")).decode() if fields.get(1, 0) == 1 else _signed(fields.get(2, 0))
    if kind not in MESSAGES:
        raise ProtobufError(f"unknown type {kind}")
    return decode_message(kind, raw)


def _is_zero(value: Any) -> bool:
    return value is None or value in ("", 0, False, b"", [])  # an empty message ({}) is kept, as Go keeps a struct


def decode_message(message: str, data: bytes) -> dict[str, Any]:
    """One message as the JSON object Go would encode it as."""
    spec = MESSAGES[message]
    result: dict[str, Any] = {}
    for number, wire, raw in _fields(data):
        if number not in spec:
            continue  # an unknown field: skipped, as proto2 decoders do
        name, kind = spec[number]
        if kind.startswith("["):
            result.setdefault(name, []).append(_value(kind[1:-1], wire, raw))
        elif kind.startswith("{"):
            entry = {entry_number: value for entry_number, _, value in _fields(raw)}
            key = bytes(entry.get(1, b"")).decode()
            result.setdefault(name, {})[key] = _value(kind[1:-1], 2, entry.get(2, b""))
        else:
            result[name] = _value(kind, wire, raw)
    return {name: value for name, value in result.items()
            if not _is_zero(value) or (message, name) in KEEP_ZERO}


def decode(body: bytes) -> dict[str, Any]:
    """A `k8s\\x00` protobuf body as the JSON object it stands for (ProtobufError if it is none devcluster
    knows)."""
    if not body.startswith(MAGIC):
        raise ProtobufError("provided data does not appear to be a protobuf message, expected prefix "
                            "[107 56 115 0]")
    envelope = {number: value for number, _, value in _fields(body[len(MAGIC):])}
    type_meta = decode_message("TypeMeta", envelope.get(1, b""))
    api_version, kind = type_meta.get("apiVersion", ""), type_meta.get("kind", "")
    message = KINDS.get((api_version, kind))
    if message is None:
        raise ProtobufError(f"no protobuf decoding for {kind} in version {api_version!r}")
    if envelope.get(3):
        raise ProtobufError(f"unsupported content encoding {bytes(envelope[3]).decode()!r}")
    return {"apiVersion": api_version, "kind": kind, **decode_message(message, bytes(envelope.get(2, b"")))}

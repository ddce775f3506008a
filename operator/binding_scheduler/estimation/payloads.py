"""Kubernetes protobuf payloads the estimator protocol carries as bytes (Karmada's `pkg/estimator/pb/helpers.go`:
`ReplicaRequirements.SetResourceRequest`, `NodeClaim.SetNodeAffinity`, `NodeClaim.SetTolerations`).

Kubernetes' own marshaller (modules k8s.io/api and k8s.io/apimachinery v0.35.3, as Karmada v1.18.2 uses:
`k8s.io/api/core/v1/generated.pb.go: Toleration.MarshalToSizedBuffer` and its siblings,
`k8s.io/apimachinery/pkg/api/resource/quantity_proto.go: Quantity.MarshalToSizedBuffer`) writes every string
field of these messages, even when empty, and the optional pointer fields (`tolerationSeconds`) only when set;
setting each field explicitly on the proto2 messages produces the same bytes.
"""

from __future__ import annotations

from collections.abc import Mapping

from binding_scheduler.model import Quantity, Requirement, Toleration
from binding_scheduler.model.binding import NodeSelectorTerm

from .canonical import canonical_quantity
from .pb import k8s_core_pb2, k8s_resource_pb2


def quantity_bytes(quantity: Quantity) -> bytes:
    """A serialized `resource.Quantity` holding the canonical text."""
    message = k8s_resource_pb2.Quantity()
    message.string = canonical_quantity(quantity)
    return message.SerializeToString()


def resource_request_bytes(request: Mapping[str, Quantity]) -> dict[str, bytes]:
    return {name: quantity_bytes(quantity) for name, quantity in request.items()}


def _requirement(requirement: Requirement) -> k8s_core_pb2.NodeSelectorRequirement:
    message = k8s_core_pb2.NodeSelectorRequirement()
    message.key = requirement.key
    message.operator = requirement.operator
    message.values.extend(requirement.values)
    return message


def node_selector_bytes(terms: tuple[NodeSelectorTerm, ...]) -> bytes:
    """A serialized `core.v1.NodeSelector`; no terms gives empty bytes (the field is then not sent)."""
    selector = k8s_core_pb2.NodeSelector()
    for term in terms:
        out = selector.nodeSelectorTerms.add()
        out.matchExpressions.extend(_requirement(r) for r in term.match_expressions)
        out.matchFields.extend(_requirement(r) for r in term.match_fields)
    return selector.SerializeToString()


def toleration_bytes(toleration: Toleration) -> bytes:
    """A serialized `core.v1.Toleration`."""
    message = k8s_core_pb2.Toleration()
    message.key = toleration.key
    message.operator = toleration.operator
    message.value = toleration.value
    message.effect = toleration.effect
    if toleration.toleration_seconds is not None:
        message.tolerationSeconds = toleration.toleration_seconds
    return message.SerializeToString()

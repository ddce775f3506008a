"""Request bodies in a media type the core does not read: protobuf bodies of the built-in kinds (what kubectl and
every typed Go client send them in) are decoded; anything else is refused with the 415 kube-apiserver words by
verb and kind."""

from __future__ import annotations

from typing import Any

from ..errors import ApiError, bad_request
from ..patch import APPLY_PATCH, JSON_PATCH, MERGE_PATCH
from ..resources import ResourceType
from . import protobuf


def _summary(data: bytes, limit: int = 30) -> str:
    """apiserver's summarizeData: a body in an error message."""
    if not data:
        return "<empty>"
    if data[:1] == b"{":
        return data[:limit].decode(errors="replace") + (" ..." if len(data) > limit else "")
    return data[:limit].hex() + (" ..." if len(data) > limit else "")


def decode_body(content_type: str, raw: bytes, rt: ResourceType, method: str) -> Any:
    """A protobuf body of a built-in kind as JSON; anything else devcluster cannot read: 415 as kube answers."""
    if method == "PATCH":
        if rt.custom:
            raise ApiError(415, "the body of the request was in an unknown format - accepted media types include: "
                                f"{JSON_PATCH}, {MERGE_PATCH}, {APPLY_PATCH}", "UnsupportedMediaType")
        raise ApiError(415, "415: Unsupported Media Type", "UnsupportedMediaType", {})
    if content_type != protobuf.CONTENT_TYPE or rt.custom:
        # (kube-apiserver 1.35 panics on a protobuf body for a custom resource and drops the connection)
        raise ApiError(415, "the body of the request was in an unknown format - accepted media types include: "
                            "application/json, application/yaml, application/vnd.kubernetes.protobuf",
                       "UnsupportedMediaType")
    try:
        decoded = protobuf.decode(raw)
    except protobuf.ProtobufError as exc:
        raise bad_request(f"the object provided is unrecognized (must be of type {rt.kind}): {exc} "
                          f"({_summary(raw)})") from None
    expected = {rt.kind, "DeleteOptions"} if method == "DELETE" else {rt.kind}
    if decoded["kind"] not in expected:
        version = decoded["apiVersion"].rpartition("/")[2]
        raise bad_request(f'{decoded["kind"]} in version "{version}" cannot be handled as a {rt.kind}: no '
                          "conversion between these kinds")
    return decoded

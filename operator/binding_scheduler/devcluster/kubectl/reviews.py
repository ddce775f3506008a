"""The create-only review kinds kubectl asks (`kubectl auth can-i`, `kubectl auth can-i --list`, `kubectl auth
whoami`). devcluster authenticates nobody and allows everything, so every request is taken to come from one
superuser, as kube-apiserver answers its admin (group `system:masters`): every access allowed, every rule
granted, and the identity below."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import bad_request
from ..objects import now_rfc3339
from ..patch import copy_json
from ..resources import ResourceType

USER = {"username": "devcluster", "groups": ["system:masters", "system:authenticated"]}


def answer_review(rtype: ResourceType, body: Any) -> dict[str, Any]:
    """The review `body` with its status filled in, as kube-apiserver answers it (201, nothing stored)."""
    if not isinstance(body, Mapping):
        raise bad_request("the body of the request must be a JSON object")
    review: dict[str, Any] = copy_json(dict(body))
    review["apiVersion"], review["kind"] = rtype.api_version, rtype.kind
    given = review.get("metadata")
    metadata: dict[str, Any] = given if isinstance(given, dict) else {}
    metadata.pop("creationTimestamp", None)
    if rtype.kind == "SelfSubjectAccessReview":
        review["metadata"] = metadata
        review["status"] = {"allowed": True}
    elif rtype.kind == "SelfSubjectRulesReview":
        review["metadata"], review["spec"] = metadata, {}
        review["status"] = {"resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
                            "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
                            "incomplete": False}
    else:
        review["metadata"] = {**metadata, "creationTimestamp": now_rfc3339()}
        review["status"] = {"userInfo": copy_json(USER)}
    return review

"""API errors as real Kubernetes `Status` objects (`kind: Status`, `reason`, `code`, `details`)."""

from __future__ import annotations

from typing import Any

_REASONS: dict[int, str] = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    406: "NotAcceptable",
    409: "Conflict",
    410: "Expired",
    415: "UnsupportedMediaType",
    422: "Invalid",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
    504: "Timeout",
}


def status_body(
    code: int,
    message: str,
    reason: str | None = None,
    details: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A failure `Status` object exactly as kube-apiserver sends it."""
    body: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason if reason is not None else _REASONS.get(code, "Unknown"),
        "code": code,
    }
    if details is not None:
        body["details"] = details
    return body


class ApiError(Exception):
    """An error answered to the client as a `Status` body with the given HTTP code."""

    def __init__(
        self,
        code: int,
        message: str,
        reason: str | None = None,
        details: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.body = status_body(code, message, reason, details)
        self.headers = headers or {}

    @property
    def reason(self) -> str:
        return str(self.body["reason"])


def _details(name: str | None, group: str, kind: str) -> dict[str, Any]:
    details: dict[str, Any] = {}
    if name:
        details["name"] = name
    if group:
        details["group"] = group
    details["kind"] = kind
    return details


def _qualified(plural: str, group: str) -> str:
    return f"{plural}.{group}" if group else plural


def not_found(plural: str, group: str, name: str) -> ApiError:
    return ApiError(404, f'{_qualified(plural, group)} "{name}" not found', "NotFound",
                    _details(name, group, plural))


def already_exists(plural: str, group: str, name: str) -> ApiError:
    return ApiError(409, f'{_qualified(plural, group)} "{name}" already exists', "AlreadyExists",
                    _details(name, group, plural))


def conflict(
    plural: str, group: str, name: str, why: str | None = None, *, details_kind: str | None = None
) -> ApiError:
    why = why or "the object has been modified; please apply your changes to the latest version and try again"
    return ApiError(
        409,
        f'Operation cannot be fulfilled on {_qualified(plural, group)} "{name}": {why}',
        "Conflict",
        _details(name, group, details_kind or plural),
    )


def _summary(causes: list[dict[str, str]]) -> str:
    """One cause as `field: message`; several as `[field: message, field: message]` (Go's aggregate)."""
    parts = [f"{c.get('field', '')}: {c['message']}".lstrip(": ") for c in causes]
    return parts[0] if len(parts) == 1 else f"[{', '.join(parts)}]"


def invalid(group: str, kind: str, name: str, causes: list[dict[str, str]]) -> ApiError:
    """422 for an object that fails validation, named by kind (`ResourceBinding.work.karmada.io "x"`)."""
    return ApiError(
        422,
        f'{_qualified(kind, group)} "{name}" is invalid: {_summary(causes)}',
        "Invalid",
        {**_details(name, group, kind), "causes": causes},
    )


def invalid_resource(plural: str, group: str, name: str, causes: list[dict[str, str]]) -> ApiError:
    """422 for a request the registry refuses, named by resource (`resourcebindings.work.karmada.io "x"`)."""
    return ApiError(
        422,
        f'{_qualified(plural, group)} "{name}" is invalid: {_summary(causes)}',
        "Invalid",
        {**_details(name, group, plural), "causes": causes},
    )


def invalid_options(kind: str, causes: list[dict[str, str]]) -> ApiError:
    """422 for bad query options (`CreateOptions.meta.k8s.io "" is invalid: dryRun: ...`)."""
    return ApiError(
        422,
        f'{kind}.meta.k8s.io "" is invalid: {_summary(causes)}',
        "Invalid",
        {"group": "meta.k8s.io", "kind": kind, "causes": causes},
    )


def bad_request(message: str) -> ApiError:
    return ApiError(400, message, "BadRequest")


def namespace_terminating(plural: str, group: str, name: str, namespace: str) -> ApiError:
    return ApiError(
        403,
        f'{_qualified(plural, group)} "{name}" is forbidden: unable to create new content in namespace '
        f"{namespace} because it is being terminated",
        "Forbidden",
        {
            **_details(name, group, plural),
            "causes": [
                {
                    "reason": "NamespaceTerminating",
                    "message": f"namespace {namespace} is being terminated",
                    "field": "metadata.namespace",
                }
            ],
        },
    )


def expired(message: str) -> ApiError:
    return ApiError(410, message, "Expired")

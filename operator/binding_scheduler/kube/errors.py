"""Errors of the API edge: one class per answer the callers act on differently.

`ApiError` carries the failure `Status` the API server sent (`status`, `reason`, `message`, `body`). Subclasses
name the codes a pass reacts to: 409 `Conflict` (fenced: drop the decision and requeue), 404 `NotFound`,
403 `Forbidden` (with `.causes`, e.g. `NamespaceTerminating`), 410 `Gone`, 429 `TooManyRequests`
(`retry_after`), 5xx `ServerError`. `TransportError` is a request that got no HTTP answer (connection refused
or cut, TLS failure, `request_timeout`). `WriteGateClosed` lives in `gate.py` and is deliberately *not* a
`KubeError`, so that code swallowing API failures (events, retries) never swallows a closed gate.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any


class KubeError(Exception):
    """Any failure of a request to the API server (an error answer or no answer)."""


class TransportError(KubeError):
    """The request got no HTTP answer: connection refused or dropped, TLS failure, or `request_timeout`.
    `maybe_sent`: the request may have reached the server (False only when no connection was made)."""

    def __init__(self, message: str, *, maybe_sent: bool = True) -> None:
        super().__init__(message)
        self.maybe_sent = maybe_sent


def outcome_unknown(error: BaseException) -> bool:
    """Whether a write that ended with `error` may still have been applied: it got no answer (a timeout, a
    dropped connection, a cancellation while in flight), a 504 or a `ServerTimeout`/`Timeout` answer (the API
    server gave up waiting for etcd, which may apply it later). No client can recall such a write; it lands only
    if its resourceVersion precondition still holds when it is applied."""
    if isinstance(error, TransportError):
        return error.maybe_sent
    if isinstance(error, ApiError):
        return error.status == 504 or error.reason in ("ServerTimeout", "Timeout")
    return isinstance(error, asyncio.CancelledError)


class ApiError(KubeError):
    """The API server answered with a failure status. `body` is the parsed answer (a `Status` normally)."""

    def __init__(self, status: int, reason: str, message: str, body: Any = None) -> None:
        super().__init__(f"{status} {reason}: {message}")
        self.status = status
        self.reason = reason
        self.message = message
        self.body = body

    @property
    def details(self) -> Mapping[str, Any]:
        details = self.body.get("details") if isinstance(self.body, Mapping) else None
        return details if isinstance(details, Mapping) else {}

    @property
    def causes(self) -> tuple[Mapping[str, Any], ...]:
        """`details.causes` of the `Status` (each with `reason` (the Go field `Type`), `message`, `field`)."""
        causes = self.details.get("causes")
        if not isinstance(causes, list):
            return ()
        return tuple(cause for cause in causes if isinstance(cause, Mapping))

    @property
    def cause_types(self) -> frozenset[str]:
        """The cause types, e.g. `{"NamespaceTerminating"}` (JSON key `reason`; `type` accepted too)."""
        types: set[str] = set()
        for cause in self.causes:
            for key in ("reason", "type"):
                value = cause.get(key)
                if isinstance(value, str) and value:
                    types.add(value)
        return frozenset(types)

    def has_cause(self, cause_type: str) -> bool:
        return cause_type in self.cause_types


class Conflict(ApiError):
    """409: a resourceVersion precondition failed (`reason` "Conflict"), or the object already exists."""


class AlreadyExists(Conflict):
    """409 with reason `AlreadyExists`: a create found an object of that name."""


class NotFound(ApiError):
    """404: the object (or its namespace) does not exist."""


class Forbidden(ApiError):
    """403: refused. `reason` tells why (`Forbidden`, `QuotaExceeded`); see `causes` / `namespace_terminating`."""

    @property
    def namespace_terminating(self) -> bool:
        return self.has_cause("NamespaceTerminating")

    @property
    def quota_exceeded(self) -> bool:
        return self.reason == "QuotaExceeded"


class Gone(ApiError):
    """410: the requested resourceVersion is too old (`Expired`) or the resource went away."""


class TooManyRequests(ApiError):
    """429: throttled. `retry_after` is the server's hint in seconds (header or `details.retryAfterSeconds`)."""

    def __init__(
        self, status: int, reason: str, message: str, body: Any = None, retry_after: float | None = None
    ) -> None:
        super().__init__(status, reason, message, body)
        self.retry_after = retry_after


class ServerError(ApiError):
    """5xx: the API server failed. `retry_after` is set when it asked to be asked again (`Retry-After`)."""

    def __init__(
        self, status: int, reason: str, message: str, body: Any = None, retry_after: float | None = None
    ) -> None:
        super().__init__(status, reason, message, body)
        self.retry_after = retry_after


_BY_STATUS: dict[int, type[ApiError]] = {409: Conflict, 404: NotFound, 403: Forbidden, 410: Gone}


def _retry_after(headers: Mapping[str, str], body: Any) -> float | None:
    value = headers.get("Retry-After")
    if value is not None:
        try:
            return max(0.0, float(value))
        except ValueError:
            pass
    if isinstance(body, Mapping):
        details = body.get("details")
        if isinstance(details, Mapping):
            seconds = details.get("retryAfterSeconds")
            if isinstance(seconds, int | float) and not isinstance(seconds, bool):
                return max(0.0, float(seconds))
    return None


def error_from_response(status: int, body: Any, headers: Mapping[str, str], text: str = "") -> ApiError:
    """The `ApiError` subclass for a failure answer; `body` is the parsed JSON (a `Status`) or None."""
    reason, message = "", ""
    if isinstance(body, Mapping):
        reason = str(body.get("reason") or "")
        message = str(body.get("message") or "")
    if not message:
        message = text.strip()[:500] or f"HTTP {status}"
    if not reason:
        reason = f"HTTP{status}"
    if status == 429:
        return TooManyRequests(status, reason, message, body, _retry_after(headers, body))
    if status == 409 and reason == "AlreadyExists":
        return AlreadyExists(status, reason, message, body)
    if status >= 500:
        return ServerError(status, reason, message, body, _retry_after(headers, body))
    return _BY_STATUS.get(status, ApiError)(status, reason, message, body)

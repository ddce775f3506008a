"""kube: the API edge. One async client for every read and write (rate limited, cancellable), the write gate,
fenced binding writes, Events and the Lease elector. See docs/kube.md."""

from .bindings import APPLIED_PLACEMENT, BindingRef, patch_schedule_result, patch_status, schedule_result_patch
from .client import ApiClient, RequestObserver, resource_path
from .connection import ConfigError, Connection, load_connection
from .errors import (
    AlreadyExists,
    ApiError,
    Conflict,
    Forbidden,
    Gone,
    KubeError,
    NotFound,
    ServerError,
    TooManyRequests,
    TransportError,
)
from .events import EventRecorder
from .gate import WriteGate, WriteGateClosed
from .lease import LeaseElector
from .ratelimit import TokenBucket

__all__ = [
    "APPLIED_PLACEMENT",
    "AlreadyExists",
    "ApiClient",
    "ApiError",
    "BindingRef",
    "ConfigError",
    "Conflict",
    "Connection",
    "EventRecorder",
    "Forbidden",
    "Gone",
    "KubeError",
    "LeaseElector",
    "NotFound",
    "RequestObserver",
    "ServerError",
    "TokenBucket",
    "TooManyRequests",
    "TransportError",
    "WriteGate",
    "WriteGateClosed",
    "load_connection",
    "patch_schedule_result",
    "patch_status",
    "resource_path",
    "schedule_result_patch",
]

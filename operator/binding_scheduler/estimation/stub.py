"""A real estimator server for tests and the demo: Karmada's Estimator service over grpc.aio.

It answers from fixed numbers or from a Cluster's resource summary (through the general estimator's rules,
`binding_scheduler.algorithm.general_estimator`: a real estimator counts nodes, the stub only has the summary),
and can misbehave on purpose:

- `ok`: answer (after `latency` seconds, when set);
- `hang`: never answer; the call ends only when the client cancels or its deadline passes;
- `error`: fail with status UNKNOWN and `error_message` (how Karmada's estimator reports every error);
- `garbage`: answer with bytes that are not a protobuf message.

A fixed answer outside the int32 range is sent as a wider varint, to play a server answering absurd numbers.
Like Karmada's server it rejects a request for another cluster:
`cluster name does not match, got: X, desire: Y` (UNKNOWN). Every call is recorded, with its raw bytes, its
metadata and how it ended, so tests can check what reached the wire and that cancellation reached the server.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import grpc
import grpc.aio
from google.protobuf.message import Message

from binding_scheduler.algorithm import general_estimator
from binding_scheduler.model import Cluster, Component, Quantity, ReplicaRequirements, ResourceSummary, parse_quantity

from .pb import estimator_pb2, k8s_resource_pb2, wide_pb2
from .wire import GET_UNSCHEDULABLE_REPLICAS, INT32_MAX, MAX_AVAILABLE_COMPONENT_SETS, MAX_AVAILABLE_REPLICAS, SERVICE

GARBAGE = b"\x08"  # field 1 announced as a varint, and then nothing: not a message


class NoAnswers(ValueError):
    """A stub that answers was given nothing to answer with."""


class StubMode(StrEnum):
    OK = "ok"
    HANG = "hang"
    ERROR = "error"
    GARBAGE = "garbage"


@dataclass(frozen=True, slots=True)
class StubTls:
    """Server TLS: PEM key and certificate; with `client_ca`, client certificates are required (mTLS)."""

    private_key: bytes
    certificate_chain: bytes
    client_ca: bytes | None = None


@dataclass(slots=True)
class RecordedCall:
    method: str
    raw: bytes
    request: Message
    metadata: dict[str, str]
    outcome: str = "running"  # running | answered | failed | cancelled


def _request_of(raw: Mapping[str, bytes], legacy: Mapping[str, bytes]) -> dict[str, Quantity]:
    """Quantities of a request, from the current field, or from the pre-v1.18 one when that is all there is."""
    out = {}
    for name, data in (raw or legacy).items():
        message = k8s_resource_pb2.Quantity()
        message.ParseFromString(data)
        out[name] = parse_quantity(message.string, f"resourceRequest.{name}")
    return out


SummarySource = Cluster | ResourceSummary | Callable[[], Cluster | ResourceSummary | None]


class EstimatorStub:
    def __init__(
        self,
        cluster_name: str,
        *,
        replicas: int | None = None,
        sets: int | None = None,
        summary: SummarySource | None = None,
        unschedulable: int = 0,
        mode: StubMode | str = StubMode.OK,
        latency: float = 0.0,
        error_message: str = "estimator stub: injected failure",
        host: str = "127.0.0.1",
        port: int = 0,
        tls: StubTls | None = None,
    ) -> None:
        if replicas is None and summary is None and StubMode(mode) is StubMode.OK:
            raise NoAnswers("a stub that answers (mode ok) needs fixed answers (replicas/sets) or a resource summary "
                            "source; one that hangs or fails needs neither")
        self.cluster_name = cluster_name
        self.replicas = replicas
        self.sets = sets
        self.summary = summary
        self.unschedulable = unschedulable
        self.mode = StubMode(mode)
        self.latency = latency
        self.error_message = error_message
        self.host = host
        self.port = port
        self.tls = tls
        self.calls: list[RecordedCall] = []
        self.arrived = asyncio.Event()
        self.cancelled = asyncio.Event()
        self._server: grpc.aio.Server | None = None

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    def outcomes(self) -> list[str]:
        return [call.outcome for call in self.calls]

    async def start(self) -> int:
        """Start serving; returns the bound port (a free one when `port` is 0). A port in use is an `OSError`
        saying so, found before gRPC tries it (gRPC's own failure is a C-core log line and a vague RuntimeError)."""
        address = f"{self.host}:{self.port}"
        if self.port:
            ensure_free(self.host, self.port)
        server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])  # a second stub on the port must fail
        server.add_generic_rpc_handlers([self._handlers()])
        try:
            if self.tls is None:
                bound = server.add_insecure_port(address)
            else:
                credentials = grpc.ssl_server_credentials(
                    [(self.tls.private_key, self.tls.certificate_chain)],
                    root_certificates=self.tls.client_ca,
                    require_client_auth=self.tls.client_ca is not None,
                )
                bound = server.add_secure_port(address, credentials)
        except RuntimeError as error:
            raise OSError(f"cannot listen on {address}: {error}") from error
        if not bound:
            raise OSError(f"cannot listen on {address}")
        await server.start()
        self._server, self.port = server, bound
        return bound

    async def stop(self, grace: float | None = None) -> None:
        """Stop at once: calls in flight are cancelled. With `grace`, they get that many seconds to end first, and a
        client still connected is sent a graceful GOAWAY (after a stop at once, gRPC logs the GOAWAY's error on the
        client's side). Idempotent."""
        server, self._server = self._server, None
        if server is not None:
            await server.stop(grace)

    async def __aenter__(self) -> EstimatorStub:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    def _handlers(self) -> grpc.GenericRpcHandler[bytes, bytes]:
        def handler(method: str, message_type: Callable[[], Message], answer: Callable[[Any], int]) -> Any:
            async def behaviour(raw: bytes, context: grpc.aio.ServicerContext[bytes, bytes]) -> bytes:
                return await self._serve(method, raw, message_type, answer, context)

            return grpc.unary_unary_rpc_method_handler(behaviour)  # bytes in, bytes out

        return grpc.method_handlers_generic_handler(
            SERVICE,
            {
                "MaxAvailableReplicas": handler(
                    MAX_AVAILABLE_REPLICAS, estimator_pb2.MaxAvailableReplicasRequest, self._replicas
                ),
                "MaxAvailableComponentSets": handler(
                    MAX_AVAILABLE_COMPONENT_SETS, estimator_pb2.MaxAvailableComponentSetsRequest, self._sets
                ),
                "GetUnschedulableReplicas": handler(
                    GET_UNSCHEDULABLE_REPLICAS, estimator_pb2.UnschedulableReplicasRequest, self._unschedulable
                ),
            },
        )

    async def _serve(
        self,
        method: str,
        raw: bytes,
        message_type: Callable[[], Message],
        answer: Callable[[Any], int],
        context: grpc.aio.ServicerContext[bytes, bytes],
    ) -> bytes:
        request = message_type()
        request.ParseFromString(raw)
        metadata = {str(k): str(v) for k, v in (context.invocation_metadata() or ())}
        call = RecordedCall(method=method, raw=raw, request=request, metadata=metadata)
        self.calls.append(call)
        self.arrived.set()
        try:
            if self.latency > 0:
                await asyncio.sleep(self.latency)
            if self.mode is StubMode.HANG:
                await asyncio.Event().wait()
            cluster = getattr(request, "cluster", "")
            if cluster != self.cluster_name:
                mismatch = f"cluster name does not match, got: {cluster}, desire: {self.cluster_name}"
                await self._fail(call, context, mismatch)
            if self.mode is StubMode.ERROR:
                await self._fail(call, context, self.error_message)
            if self.mode is StubMode.GARBAGE:
                call.outcome = "answered"
                return GARBAGE
            value = answer(request)
        except asyncio.CancelledError:
            if call.outcome == "running":
                call.outcome = "cancelled"
                self.cancelled.set()
            raise
        call.outcome = "answered"
        return _encode_count(method, value)

    async def _fail(self, call: RecordedCall, context: grpc.aio.ServicerContext[bytes, bytes], text: str) -> None:
        call.outcome = "failed"
        await context.abort(grpc.StatusCode.UNKNOWN, text)

    def _cluster(self) -> Cluster:
        source = self.summary
        if callable(source):
            source = source()
        if isinstance(source, Cluster):
            return source
        return Cluster(name=self.cluster_name, resource_summary=source)

    def _replicas(self, request: estimator_pb2.MaxAvailableReplicasRequest) -> int:
        if self.replicas is not None:
            return self.replicas
        requirements = None
        if request.HasField("replicaRequirements"):
            wanted = request.replicaRequirements
            requirements = ReplicaRequirements(
                resource_request=_request_of(wanted.resourceRequestBytes, wanted.resourceRequest),
                namespace=wanted.namespace,
                priority_class_name=wanted.priorityClassName,
            )
        return general_estimator.max_available_replicas(self._cluster(), requirements)

    def _sets(self, request: estimator_pb2.MaxAvailableComponentSetsRequest) -> int:
        if self.sets is not None:
            return self.sets
        if self.replicas is not None:
            return self.replicas
        components = [
            Component(
                name=c.name,
                replicas=c.replicas,
                requirements=ReplicaRequirements(
                    resource_request=_request_of(
                        c.replicaRequirements.resourceRequestBytes, c.replicaRequirements.resourceRequest
                    ),
                    namespace=request.namespace,
                    priority_class_name=c.replicaRequirements.priorityClassName,
                ),
            )
            for c in request.components
        ]
        return general_estimator.max_available_component_sets(self._cluster(), components)

    def _unschedulable(self, request: estimator_pb2.UnschedulableReplicasRequest) -> int:
        return self.unschedulable


_RESPONSES: dict[str, Callable[[int], Message]] = {
    MAX_AVAILABLE_REPLICAS: lambda v: estimator_pb2.MaxAvailableReplicasResponse(maxReplicas=v),
    MAX_AVAILABLE_COMPONENT_SETS: lambda v: estimator_pb2.MaxAvailableComponentSetsResponse(maxSets=v),
    GET_UNSCHEDULABLE_REPLICAS: lambda v: estimator_pb2.UnschedulableReplicasResponse(unschedulableReplicas=v),
}


def _encode_count(method: str, value: int) -> bytes:
    if -(2**31) <= value <= INT32_MAX:
        return _RESPONSES[method](value).SerializeToString()
    return wide_pb2.CountResponse(value=value).SerializeToString()


def ensure_free(host: str, port: int) -> None:
    """Raise `OSError("cannot listen on HOST:PORT: <why>")` unless every address of `host` can bind `port` now."""
    try:
        addresses = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as error:
        raise OSError(f"cannot listen on {host}:{port}: {error.strerror}") from error
    for family, kind, proto, _, sockaddr in addresses:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a port in TIME_WAIT is free to gRPC too
            try:
                probe.bind(sockaddr)
            except OSError as error:
                raise OSError(f"cannot listen on {host}:{port}: {error.strerror}") from error

"""The accurate estimator: ask every candidate cluster's estimator at once, under one deadline.

Cancelling the calling task cancels every call in flight (each server sees CANCELLED) and returns once they
have all ended: nothing is left running. A cluster that fails (discovery, dial, deadline, error status, an
answer that cannot be a count) gets no answer; with `partial_failure="fallback"` the others are kept, with
`"discard"` nothing is (Karmada's behaviour: `pkg/estimator/client/accurate.go: getClusterReplicasConcurrently`
returns an error when any cluster fails, and `pkg/scheduler/core/util.go: calAvailableReplicas` then skips the
whole estimator).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence

import grpc
import grpc.aio
from prometheus_client import CollectorRegistry

from binding_scheduler.algorithm.general_estimator import AssumedWorkload
from binding_scheduler.model import Cluster, Component, ObjectReference, ReplicaRequirements

from .answer import EstimateAnswer
from .channels import ChannelPool, DialError
from .credentials import load_tls
from .discovery import DiscoveryError, ServiceLookup
from .failures import FailureReporter, Reason
from .settings import EstimatorSettings
from .wire import (
    ASSUMED_FIELD_OF_REPLICAS_REQUEST,
    ASSUMED_FIELD_OF_SETS_REQUEST,
    MAX_AVAILABLE_COMPONENT_SETS,
    MAX_AVAILABLE_REPLICAS,
    AssumedRecords,
    InvalidAnswer,
    component_sets_request_prefix,
    object_metadata,
    read_count,
    replicas_request_prefix,
    request_bytes,
)

_RPC_REASONS = {grpc.StatusCode.UNAVAILABLE: Reason.UNAVAILABLE}
_CONNECTION_CODES = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)
"""Statuses that may mean the estimator is no longer where the channel points (see `ChannelPool.call_failed`)."""


class _Failed(Exception):
    def __init__(self, reason: Reason, text: str) -> None:
        super().__init__(text)
        self.reason = reason
        self.text = text


class AccurateEstimator:
    """Karmada's `scheduler-estimator` client. Build once per configuration; `close()` at shutdown."""

    def __init__(
        self,
        settings: EstimatorSettings,
        *,
        service_lookup: ServiceLookup | None = None,
        registry: CollectorRegistry | None = None,
    ) -> None:
        self.settings = settings
        self._pool = ChannelPool(settings, service_lookup, load_tls(settings))
        self._reporter = FailureReporter(registry)
        legacy = settings.send_legacy_fields
        self._assumed_for_replicas = AssumedRecords(ASSUMED_FIELD_OF_REPLICAS_REQUEST, legacy=legacy)
        self._assumed_for_sets = AssumedRecords(ASSUMED_FIELD_OF_SETS_REQUEST, legacy=legacy)

    @property
    def connected(self) -> dict[str, str]:
        """The address of each cluster's open channel."""
        return self._pool.targets

    async def max_available_replicas(
        self,
        clusters: Sequence[Cluster],
        requirements: ReplicaRequirements | None,
        *,
        resource: ObjectReference | None = None,
        assumed: Mapping[str, Sequence[AssumedWorkload]] | None = None,
    ) -> EstimateAnswer:
        """`MaxAvailableReplicas` on every cluster's estimator, with the workloads assumed there."""
        prefix = replicas_request_prefix(requirements, legacy=self.settings.send_legacy_fields)
        held = assumed or {}
        records = self._assumed_for_replicas
        return await self._fan_out(
            clusters,
            MAX_AVAILABLE_REPLICAS,
            lambda name: request_bytes(name, prefix, records(name, held.get(name, ()))),
            resource,
        )

    async def max_available_component_sets(
        self,
        clusters: Sequence[Cluster],
        components: Sequence[Component],
        namespace: str,
        *,
        resource: ObjectReference | None = None,
        assumed: Mapping[str, Sequence[AssumedWorkload]] | None = None,
    ) -> EstimateAnswer:
        """`MaxAvailableComponentSets` on every cluster's estimator, with the workloads assumed there."""
        prefix = component_sets_request_prefix(components, namespace, legacy=self.settings.send_legacy_fields)
        held = assumed or {}
        records = self._assumed_for_sets
        return await self._fan_out(
            clusters,
            MAX_AVAILABLE_COMPONENT_SETS,
            lambda name: request_bytes(name, prefix, records(name, held.get(name, ()))),
            resource,
        )

    async def forget(self, cluster_name: str) -> None:
        """The cluster went away: close its channel."""
        self._reporter.forget(cluster_name)
        await self._pool.forget(cluster_name)

    async def close(self) -> None:
        """Close every channel (idempotent); later calls fail per cluster without dialing."""
        await self._pool.close()

    async def _fan_out(
        self,
        clusters: Sequence[Cluster],
        method: str,
        build: Callable[[str], bytes],
        resource: ObjectReference | None,
    ) -> EstimateAnswer:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.settings.timeout
        metadata = object_metadata(resource)
        failures: dict[str, _Failed] = {}
        tasks: dict[str, asyncio.Task[int | _Failed]] = {}
        async with asyncio.TaskGroup() as group:
            for cluster in clusters:
                name = cluster.name
                if name in tasks or name in failures:
                    continue
                if self.settings.disable_in_pull_mode and cluster.sync_mode == "Pull":
                    failures[name] = _Failed(Reason.SKIPPED, f"cluster {name} is in Pull mode: estimator not used")
                    continue
                tasks[name] = group.create_task(self._ask(name, method, build(name), metadata, deadline))
        replicas: dict[str, int] = {}
        for name, task in tasks.items():
            result = task.result()
            if isinstance(result, _Failed):
                failures[name] = result
            else:
                replicas[name] = result
        for name, failure in failures.items():
            self._reporter.report(name, failure.reason, failure.text)
        if failures and self.settings.partial_failure == "discard":
            replicas = {}
        return EstimateAnswer(replicas=replicas, failures={n: f.text for n, f in failures.items()})

    async def _ask(
        self,
        cluster: str,
        method: str,
        request: bytes,
        metadata: tuple[tuple[str, str], ...],
        deadline: float,
    ) -> int | _Failed:
        """One cluster's answer, or how it failed. Only cancellation propagates: a raising task would cancel
        its siblings in the task group."""
        try:
            return await self._call(cluster, method, request, metadata, deadline)
        except _Failed as failure:
            return failure

    async def _call(
        self,
        cluster: str,
        method: str,
        request: bytes,
        metadata: tuple[tuple[str, str], ...],
        deadline: float,
    ) -> int:
        short = method.rsplit("/", 1)[-1]
        channel: grpc.aio.Channel | None = None  # known once the pool gave it: a failure after that may be its own
        try:
            async with asyncio.timeout_at(deadline):
                channel = await self._pool.channel(cluster)
                call = channel.unary_unary(method, request_serializer=None, response_deserializer=None)
                remaining = max(deadline - asyncio.get_running_loop().time(), 0.0)
                data: bytes = await call(request, timeout=remaining, metadata=metadata)
            return read_count(data)
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise  # the pass is cancelled
            # Not us: gRPC ends a call this way when its channel is closed under it (forget, close).
            raise _Failed(Reason.UNAVAILABLE, f"cluster {cluster}: the channel was closed during the call") from None
        except TimeoutError:
            if channel is not None:
                self._pool.call_failed(cluster, channel)
            raise self._deadline_passed(cluster) from None
        except DiscoveryError as exc:
            raise _Failed(Reason.DISCOVERY, f"cluster {cluster}: estimator not found: {exc}") from None
        except DialError as exc:
            raise _Failed(Reason.DIAL, f"cluster {cluster}: cannot connect to the estimator: {exc}") from None
        except grpc.aio.AioRpcError as exc:
            if channel is not None and exc.code() in _CONNECTION_CODES:
                self._pool.call_failed(cluster, channel)
            if exc.code() is grpc.StatusCode.DEADLINE_EXCEEDED:  # gRPC's clock was first: same failure
                raise self._deadline_passed(cluster) from None
            reason = _RPC_REASONS.get(exc.code(), Reason.RPC_ERROR)
            text = (
                f"gRPC request cluster({cluster}) estimator error when calling {short}: "
                f"{exc.code().name}: {exc.details()}"
            )
            raise _Failed(reason, text) from None
        except InvalidAnswer as exc:
            raise _Failed(Reason.INVALID_ANSWER, f"cluster {cluster}: invalid answer to {short}: {exc}") from None
        except Exception as exc:  # anything else from gRPC or the network: a failed cluster, not a failed pass
            raise _Failed(Reason.RPC_ERROR, f"cluster {cluster}: {short} failed: {exc!r}") from None

    def _deadline_passed(self, cluster: str) -> _Failed:
        return _Failed(Reason.DEADLINE, f"cluster {cluster}: no answer within {self.settings.timeout:g}s")

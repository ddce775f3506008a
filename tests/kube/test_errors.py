"""Every error class from a real answer of the emulator."""

from __future__ import annotations

from typing import Any

import pytest

from binding_scheduler.devcluster import DevCluster
from binding_scheduler.kube import (
    AlreadyExists,
    ApiClient,
    ApiError,
    Conflict,
    Forbidden,
    Gone,
    NotFound,
    ServerError,
    TooManyRequests,
    TransportError,
    WriteGate,
    load_connection,
)
from binding_scheduler.kube.errors import error_from_response
from tests.kube.helpers import rb_body, rb_path


async def test_missing_object_is_not_found(client: ApiClient) -> None:
    with pytest.raises(NotFound) as caught:
        await client.get(rb_path("nope"))
    assert (caught.value.status, caught.value.reason) == (404, "NotFound")
    assert caught.value.message == 'resourcebindings.work.karmada.io "nope" not found'
    assert caught.value.body["kind"] == "Status"


async def test_stale_resource_version_is_conflict(client: ApiClient, rb1: dict[str, Any]) -> None:
    with pytest.raises(Conflict) as caught:
        await client.patch_merge(rb_path("rb1"), {"metadata": {"resourceVersion": "1"}, "spec": {"replicas": 9}})
    assert (caught.value.status, caught.value.reason) == (409, "Conflict")
    assert type(caught.value) is Conflict


async def test_creating_existing_object_is_already_exists(client: ApiClient, rb1: dict[str, Any]) -> None:
    with pytest.raises(AlreadyExists) as caught:
        await client.create(rb_path(), rb_body("rb1"))
    assert (caught.value.status, caught.value.reason) == (409, "AlreadyExists")
    assert isinstance(caught.value, Conflict)


async def test_terminating_namespace_write_forbidden(
    api: DevCluster, client: ApiClient
) -> None:
    api.store.ensure_namespace("doomed")
    held = rb_body("held")
    held["metadata"]["finalizers"] = ["example.com/hold"]
    await client.create(rb_path(namespace="doomed"), held)
    await client.delete("/api/v1/namespaces/doomed")
    with pytest.raises(Forbidden) as caught:
        await client.create(rb_path(namespace="doomed"), rb_body("late"))
    error = caught.value
    assert (error.status, error.reason, error.namespace_terminating, error.quota_exceeded) == (
        403, "Forbidden", True, False)
    assert error.cause_types == frozenset({"NamespaceTerminating"})
    assert error.causes[0]["message"] == "namespace doomed is being terminated"


def test_quota_exceeded_status_is_forbidden_with_that_reason() -> None:
    body = {"kind": "Status", "status": "Failure", "code": 403, "reason": "QuotaExceeded",
            "message": 'pods "p" is forbidden: exceeded quota: q'}
    error = error_from_response(403, body, {})
    assert isinstance(error, Forbidden)
    assert (error.reason, error.quota_exceeded, error.namespace_terminating) == ("QuotaExceeded", True, False)


async def test_expired_answer_is_gone(api: DevCluster, client: ApiClient) -> None:
    api.faults.add(method="GET", status=410)
    with pytest.raises(Gone) as caught:
        await client.list(rb_path())
    assert (caught.value.status, caught.value.reason) == (410, "Expired")


def test_throttling_is_too_many_requests_with_retry_after() -> None:
    error = error_from_response(429, {"reason": "TooManyRequests", "message": "slow down"}, {"Retry-After": "7"})
    assert isinstance(error, TooManyRequests)
    assert (error.status, error.reason, error.retry_after) == (429, "TooManyRequests", 7.0)


async def test_throttling_that_outlasts_retries_is_too_many_requests(
    api: DevCluster, client: ApiClient, rb1: dict[str, Any]
) -> None:
    api.faults.add(method="PATCH", status=429, retry_after=0)
    with pytest.raises(TooManyRequests) as caught:
        await client.patch_merge(rb_path("rb1"), {"spec": {"replicas": 1}})
    assert (caught.value.status, caught.value.reason, caught.value.retry_after) == (429, "TooManyRequests", 0.0)


@pytest.mark.parametrize(("code", "reason"), [(500, "InternalError"), (503, "ServiceUnavailable")])
async def test_5xx_answers_are_server_errors(api: DevCluster, client: ApiClient, code: int, reason: str) -> None:
    api.faults.add(method="GET", status=code)
    with pytest.raises(ServerError) as caught:
        await client.get(rb_path("rb1"))
    assert (caught.value.status, caught.value.reason) == (code, reason)


async def test_other_failures_are_plain_api_errors(api: DevCluster, client: ApiClient, rb1: dict[str, Any]) -> None:
    with pytest.raises(ApiError) as caught:
        await client.patch_merge(rb_path("rb1"), {"metadata": None})
    assert (type(caught.value), caught.value.status, caught.value.reason) == (ApiError, 422, "Invalid")


async def test_dropped_connection_is_transport_error(api: DevCluster, client: ApiClient) -> None:
    api.faults.add(method="GET", drop=True)
    with pytest.raises(TransportError, match=r"GET /apis/"):
        await client.get(rb_path("rb1"))


async def test_no_answer_within_request_timeout_is_transport_error(api: DevCluster) -> None:
    api.faults.add(method="GET", hang=True)
    async with ApiClient(load_connection(str(api.kubeconfig_path)), WriteGate(), request_timeout=0.05) as kube:
        with pytest.raises(TransportError, match=r"no answer within 0.05s"):
            await kube.get(rb_path("rb1"))

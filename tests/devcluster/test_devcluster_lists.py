"""Lists: their version and kind, label and field selectors, pages that are one snapshot (lists.py)."""

from __future__ import annotations

from typing import Any

import pytest

from binding_scheduler.devcluster import DevCluster
from tests.devcluster.helpers import rb_body, rb_path, status_of


async def _labelled(api: DevCluster) -> None:
    for name, labels in [("a", {"env": "prod", "tier": "1"}), ("b", {"env": "dev", "tier": "3"}),
                         ("c", {"team": "x"})]:
        body = rb_body(name)
        body["metadata"]["labels"] = labels
        assert (await api.client.create(rb_path(), body))[0] == 201


async def test_list_carries_current_resource_version_and_kind(api: DevCluster, rb1: dict[str, Any]) -> None:
    status, body = await api.client.list(rb_path())
    assert status == 200
    assert body == {"kind": "ResourceBindingList", "apiVersion": "work.karmada.io/v1alpha2",
                    "metadata": {"resourceVersion": str(api.store.resource_version), "continue": ""},
                    "items": [rb1]}


async def test_list_across_namespaces(api: DevCluster) -> None:
    await api.client.create("/api/v1/namespaces", {"metadata": {"name": "other"}})
    await api.client.create(rb_path(), rb_body("x"))
    await api.client.create(rb_path(namespace="other"), rb_body("y"))
    status, body = await api.client.list(rb_path(namespace=None))
    assert status == 200
    assert [(i["metadata"]["namespace"], i["metadata"]["name"]) for i in body["items"]] == [
        ("default", "x"), ("other", "y")]


@pytest.mark.parametrize(("selector", "names"), [
    ("env=prod", ["a"]),
    ("env==prod", ["a"]),
    ("env!=prod", ["b", "c"]),
    ("env in (prod,dev)", ["a", "b"]),
    ("env notin (prod)", ["b", "c"]),
    ("team", ["c"]),
    ("!team", ["a", "b"]),
    ("tier>2", ["b"]),
    ("tier<2", ["a"]),
    ("env,tier!=3", ["a"]),
])
async def test_list_by_label_selector(api: DevCluster, selector: str, names: list[str]) -> None:
    await _labelled(api)
    status, body = await api.client.list(rb_path(), labelSelector=selector)
    assert status == 200
    assert [i["metadata"]["name"] for i in body["items"]] == names


async def test_malformed_label_selector_is_400(api: DevCluster) -> None:
    status, body = await api.client.list(rb_path(), labelSelector="env in prod")
    assert status == 400
    assert body == status_of(400, "BadRequest", "unable to parse requirement: 'env in prod'")


async def test_list_by_field_selector_on_name(api: DevCluster) -> None:
    await _labelled(api)
    status, body = await api.client.list(rb_path(), fieldSelector="metadata.name=b")
    assert (status, [i["metadata"]["name"] for i in body["items"]]) == (200, ["b"])
    status, body = await api.client.list(rb_path(), fieldSelector="metadata.name!=b")
    assert [i["metadata"]["name"] for i in body["items"]] == ["a", "c"]


async def test_list_by_field_selector_on_namespace(api: DevCluster) -> None:
    await api.client.create("/api/v1/namespaces", {"metadata": {"name": "other"}})
    await api.client.create(rb_path(), rb_body("x"))
    await api.client.create(rb_path(namespace="other"), rb_body("y"))
    status, body = await api.client.list(rb_path(namespace=None), fieldSelector="metadata.namespace=other")
    assert (status, [i["metadata"]["name"] for i in body["items"]]) == (200, ["y"])


async def test_field_selector_on_another_field_is_400(api: DevCluster) -> None:
    status, body = await api.client.list(rb_path(), fieldSelector="spec.schedulerName=x")
    assert status == 400
    assert body == status_of(400, "BadRequest", "field label not supported: spec.schedulerName")


async def test_list_pages_with_limit_and_continue(api: DevCluster) -> None:
    await _labelled(api)
    status, first = await api.client.list(rb_path(), limit="2")
    assert status == 200
    assert [i["metadata"]["name"] for i in first["items"]] == ["a", "b"]
    assert first["metadata"]["remainingItemCount"] == 1
    status, second = await api.client.list(rb_path(), limit="2", **{"continue": first["metadata"]["continue"]})
    assert [i["metadata"]["name"] for i in second["items"]] == ["c"]
    assert second["metadata"]["continue"] == ""


async def test_next_page_past_retained_history_is_410() -> None:
    async with DevCluster(history=2) as api:
        await _labelled(api)
        status, first = await api.client.list(rb_path(), limit="2")
        assert status == 200
        for replicas in (2, 3, 4):
            assert (await api.client.patch(rb_path("c"), {"spec": {"replicas": replicas}}))[0] == 200

        status, body = await api.client.list(rb_path(), limit="2", **{"continue": first["metadata"]["continue"]})

    assert (status, body["reason"]) == (410, "Expired")
    assert body["message"].startswith("The provided continue parameter is too old")


async def test_later_pages_see_list_start() -> None:
    async with DevCluster() as api:
        await _labelled(api)  # a and b have an env label, c has none
        status, first = await api.client.list(rb_path(), limit="1", labelSelector="env")
        assert [i["metadata"]["name"] for i in first["items"]] == ["a"]
        assert (await api.client.patch(rb_path("b"), {"metadata": {"labels": {"env": None}}}))[0] == 200
        assert (await api.client.patch(rb_path("c"), {"metadata": {"labels": {"env": "prod"}}}))[0] == 200
        later = rb_body("bb")
        later["metadata"]["labels"] = {"env": "prod"}
        assert (await api.client.create(rb_path(), later))[0] == 201

        status, second = await api.client.list(rb_path(), limit="1", labelSelector="env",
                                               **{"continue": first["metadata"]["continue"]})

    assert status == 200
    assert [(i["metadata"]["name"], i["metadata"]["labels"]) for i in second["items"]] == [
        ("b", {"env": "dev", "tier": "3"})]
    assert (second["metadata"]["resourceVersion"], second["metadata"]["continue"]) == (
        first["metadata"]["resourceVersion"], "")

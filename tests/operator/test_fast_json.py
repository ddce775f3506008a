"""The API traffic's JSON (kube/jsonio.py, and Kopf's watch streams through watch_guard): orjson's speed, the
standard library's acceptance."""

from __future__ import annotations

import json
import math

import pytest
from kopf._cogs.clients import api as kopf_api

from binding_scheduler.kube import jsonio
from binding_scheduler.operator import watch_guard


def test_documents_read_back_as_standard_library_reads_them() -> None:
    text = '{"metadata":{"name":"web","generation":3},"spec":{"replicas":2,"weight":0.5,"note":"caf\\u00e9"}}'
    assert jsonio.loads(text.encode()) == json.loads(text)
    assert jsonio.loads(text) == json.loads(text)
    assert jsonio.loads(memoryview(text.encode())) == json.loads(text)


def test_integers_are_exact_to_64_bits() -> None:
    assert jsonio.loads(b'{"a": 9223372036854775807, "b": -9223372036854775808, "c": 18446744073709551615}') == {
        "a": 2**63 - 1, "b": -(2**63), "c": 2**64 - 1}


def test_what_orjson_refuses_falls_back_to_standard_library() -> None:
    assert math.isnan(jsonio.loads(b'{"x": NaN}')["x"])
    assert json.loads(jsonio.dumps({"big": 2**70})) == {"big": 2**70}
    assert json.loads(jsonio.dumps({1: "a"})) == {"1": "a"}


def test_what_is_not_json_raises_standard_error() -> None:
    with pytest.raises(json.JSONDecodeError):
        jsonio.loads(b'{"type": "MODI')


def test_bodies_are_compact_utf8() -> None:
    body = {"metadata": {"resourceVersion": "7"}, "spec": {"clusters": [{"name": "m1", "replicas": 2}]}}
    assert jsonio.dumps(body) == json.dumps(body, separators=(",", ":")).encode()


def test_kopfs_watch_streams_parse_with_it() -> None:
    watch_guard.install()
    assert kopf_api.json.loads is jsonio.loads
    assert kopf_api.json.dumps is json.dumps  # anything else stays the standard library's
    assert kopf_api.json.loads('{"type": "ADDED", "object": {}}') == {"type": "ADDED", "object": {}}


async def test_kopfs_lists_parse_with_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Kopf's `api.get` (each page of its lists) is Kopf's request, its answer read through jsonio."""
    asked: dict[str, object] = {}

    class Answer:
        async def __aenter__(self) -> Answer:
            return self

        async def __aexit__(self, *exc: object) -> None:
            return None

        async def json(self, *, loads: object) -> object:
            asked["loads"] = loads
            return {"kind": "List", "items": []}

    async def request(**kwargs: object) -> Answer:
        asked.update(kwargs)
        return Answer()

    watch_guard.install()
    monkeypatch.setattr(kopf_api, "request", request)
    answer = await kopf_api.get("/apis/x/v1/things", settings="settings", logger="logger")
    assert answer == {"kind": "List", "items": []}
    assert asked == {"method": "get", "url": "/apis/x/v1/things", "payload": None, "headers": None, "timeout": None,
                     "settings": "settings", "logger": "logger", "loads": jsonio.loads}

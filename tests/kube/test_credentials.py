"""Credentials on the wire: a bearer token, a token file (re-read as it rotates) or basic auth."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from binding_scheduler.kube import ApiClient, Connection, WriteGate
from binding_scheduler.kube import client as client_module


@pytest.fixture
async def server() -> AsyncIterator[tuple[TestServer, list[str]]]:
    seen: list[str] = []

    async def handler(request: web.Request) -> web.Response:
        seen.append(request.headers.get("Authorization", ""))
        return web.json_response({"kind": "Namespace"})

    app = web.Application()
    app.router.add_get("/api/v1/namespaces/default", handler)
    test_server = TestServer(app)
    await test_server.start_server()
    yield test_server, seen
    await test_server.close()


def url(server: TestServer) -> str:
    return str(server.make_url("")).rstrip("/")


async def test_token_is_sent_as_bearer(server: tuple[TestServer, list[str]]) -> None:
    test_server, seen = server
    async with ApiClient(Connection(url(test_server), token="abc"), WriteGate()) as kube:
        await kube.get("/api/v1/namespaces/default")
    assert seen == ["Bearer abc"]


async def test_token_file_is_read_and_re_read_after_it_rotates(
    server: tuple[TestServer, list[str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    test_server, seen = server
    token = tmp_path / "token"
    token.write_text("first\n")
    monkeypatch.setattr(client_module, "TOKEN_FILE_REFRESH", 0.0)
    async with ApiClient(Connection(url(test_server), token_file=str(token)), WriteGate()) as kube:
        await kube.get("/api/v1/namespaces/default")
        token.write_text("second")
        await kube.get("/api/v1/namespaces/default")
    assert seen == ["Bearer first", "Bearer second"]


async def test_username_and_password_are_sent_as_basic_auth(server: tuple[TestServer, list[str]]) -> None:
    test_server, seen = server
    async with ApiClient(Connection(url(test_server), username="admin", password="pw"), WriteGate()) as kube:
        await kube.get("/api/v1/namespaces/default")
    assert seen == ["Basic YWRtaW46cHc="]

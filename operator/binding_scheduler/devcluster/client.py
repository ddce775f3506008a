"""A small async HTTP client for tests: every call returns `(status, body)` with the parsed JSON body."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Mapping
from types import TracebackType
from typing import Any, Literal, NamedTuple

import aiohttp

PatchKind = Literal["merge", "json", "strategic", "apply"]
PATCH_CONTENT_TYPES: dict[str, str] = {
    "merge": "application/merge-patch+json",
    "json": "application/json-patch+json",
    "strategic": "application/strategic-merge-patch+json",
    "apply": "application/apply-patch+yaml",
}


class Reply(NamedTuple):
    """A full answer: status code, parsed body (None when empty or not JSON) and headers."""

    status: int
    body: Any
    headers: Mapping[str, str]


def resource_path(
    api_version: str, plural: str, namespace: str | None = None, name: str | None = None,
    subresource: str | None = None,
) -> str:
    """`("work.karmada.io/v1alpha2", "resourcebindings", "default", "rb1", "status")` ->
    `/apis/work.karmada.io/v1alpha2/namespaces/default/resourcebindings/rb1/status`."""
    path = f"/apis/{api_version}" if "/" in api_version else f"/api/{api_version}"
    if namespace is not None:
        path += f"/namespaces/{namespace}"
    path += f"/{plural}"
    if name is not None:
        path += f"/{name}"
    if subresource is not None:
        path += f"/{subresource}"
    return path


class WatchStream:
    """An open watch: `await stream.next()` gives the next event dict, or None once the server ended it.

    Use as `async with client.watch(path, resourceVersion="5") as stream:`; `stream.status` is the
    HTTP status (a non-200 answer is available as `stream.error`). Iterating yields events until the end.
    """

    def __init__(self, session: aiohttp.ClientSession, url: str, params: dict[str, str]) -> None:
        self._session, self._url, self._params = session, url, params
        self._response: aiohttp.ClientResponse | None = None
        self.status = 0
        self.error: Any = None

    async def __aenter__(self) -> WatchStream:
        self._response = await self._session.get(self._url, params=self._params)
        self.status = self._response.status
        if self.status != 200:
            self.error = json.loads(await self._response.read() or b"null")
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._response is not None:
            self._response.close()

    async def next(self, seconds: float = 10.0) -> dict[str, Any] | None:
        """The next event; None when the stream ended (or failed). TimeoutError after `seconds`."""
        if self._response is None or self.status != 200:
            return None
        async with asyncio.timeout(seconds):
            try:
                line = await self._response.content.readline()
            except (aiohttp.ClientPayloadError, aiohttp.ClientConnectionError):
                return None
        if not line:
            return None
        event: dict[str, Any] = json.loads(line)
        return event

    async def collect(self, seconds: float = 10.0) -> list[dict[str, Any]]:
        """Every event until the server ends the stream."""
        events = []
        while (event := await self.next(seconds)) is not None:
            events.append(event)
        return events

    def __aiter__(self) -> AsyncIterator[dict[str, Any]]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[dict[str, Any]]:
        while (event := await self.next()) is not None:
            yield event


class DevClient:
    """Raw API calls by path. Paths come from `resource_path()` or are written out in full.

    `get`/`list`/`create`/`put`/`patch`/`delete` return `(status, body)`; `request` returns a `Reply`
    with headers too; `watch` opens a `WatchStream`. Query parameters are keyword arguments
    (`await client.list(path, labelSelector="a=b")`).
    """

    def __init__(self, url: str) -> None:
        self.url = url.rstrip("/")
        self._session: aiohttp.ClientSession | None = None

    @property
    def session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None))
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        content_type: str = "application/json",
        headers: Mapping[str, str] | None = None,
        params: Mapping[str, str] | None = None,
    ) -> Reply:
        data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
        all_headers = {"Content-Type": content_type, **(headers or {})} if data is not None else dict(
            headers or {})
        async with self.session.request(
            method, self.url + path, data=data, headers=all_headers, params=params or None
        ) as response:
            raw = await response.read()
            try:
                parsed = json.loads(raw) if raw else None
            except ValueError:
                parsed = raw.decode(errors="replace")
            return Reply(response.status, parsed, dict(response.headers))

    async def get(self, path: str, **params: str) -> tuple[int, Any]:
        reply = await self.request("GET", path, params=params)
        return reply.status, reply.body

    async def list(self, path: str, **params: str) -> tuple[int, Any]:
        return await self.get(path, **params)

    async def create(self, path: str, body: Any, **params: str) -> tuple[int, Any]:
        reply = await self.request("POST", path, body, params=params)
        return reply.status, reply.body

    async def put(self, path: str, body: Any, **params: str) -> tuple[int, Any]:
        reply = await self.request("PUT", path, body, params=params)
        return reply.status, reply.body

    async def patch(self, path: str, body: Any, kind: PatchKind = "merge", **params: str) -> tuple[int, Any]:
        """`kind`: "merge" (RFC 7386), "json" (RFC 6902), "strategic" (415 on custom resources) or "apply"
        (server-side apply: pass `fieldManager=`)."""
        reply = await self.request("PATCH", path, body, content_type=PATCH_CONTENT_TYPES[kind],
                                   params=params)
        return reply.status, reply.body

    async def delete(self, path: str, body: Any = None, **params: str) -> tuple[int, Any]:
        reply = await self.request("DELETE", path, body, params=params)
        return reply.status, reply.body

    def watch(self, path: str, **params: str) -> WatchStream:
        return WatchStream(self.session, self.url + path, {"watch": "true", **params})

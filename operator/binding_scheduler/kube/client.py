"""The one API client every read and write of ours goes through.

Async and cancellable end to end: one aiohttp session (created on first use), no threads and no synchronous
HTTP. Cancelling the calling task aborts its request at once (aiohttp closes that connection). Every request
takes a token from one shared bucket (qps/burst); every write (create, put, patch, delete) passes the write
gate twice: once before waiting for a token (a closed gate fails fast) and once, counted as in flight, right
before the request is sent. The one retry here is the one the server asks for, as client-go does: a 429 or
5xx answer with `Retry-After` is sent again after that delay (at most `RETRY_AFTER_ATTEMPTS` times, each wait
capped at `RETRY_AFTER_CAP`, cancellable, the write gate checked again). Every other retry policy is the
caller's. A `RequestObserver` given to the client hears every request as client-go's metrics hear theirs.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

import aiohttp

from . import jsonio
from .connection import ConfigError, Connection
from .errors import ServerError, TooManyRequests, TransportError, error_from_response, outcome_unknown
from .gate import LeadershipInDoubt, WriteGate
from .ratelimit import TokenBucket
from .tls import ssl_context

MERGE_PATCH = "application/merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"
JSON = "application/json"
USER_AGENT = "binding-scheduler"
TOKEN_FILE_REFRESH = 60.0  # seconds; projected service-account tokens rotate, so the file is re-read
RETRY_AFTER_ATTEMPTS = 10  # client-go's default for answers carrying Retry-After
RETRY_AFTER_CAP = 30.0
NO_RESPONSE = "<error>"  # client-go's status code label for an attempt that got no answer

logger = logging.getLogger(__name__)


def resource_path(
    group: str,
    version: str,
    plural: str,
    namespace: str | None = None,
    name: str | None = None,
    subresource: str | None = None,
) -> str:
    """`("work.karmada.io", "v1alpha2", "resourcebindings", "default", "rb1", "status")` ->
    `/apis/work.karmada.io/v1alpha2/namespaces/default/resourcebindings/rb1/status`; group "" is the core API."""
    path = f"/apis/{group}/{version}" if group else f"/api/{version}"
    if namespace:
        path += f"/namespaces/{namespace}"
    path += f"/{plural}"
    if name is not None:
        path += f"/{name}"
    if subresource is not None:
        if name is None:
            raise ValueError("a subresource needs an object name")
        path += f"/{subresource}"
    return path


Params = Mapping[str, str | int | bool]


class RequestObserver(Protocol):
    """Hears the requests of an `ApiClient`, with the labels client-go gives its metrics
    (`k8s.io/client-go/tools/metrics`: `RequestResult` and `RequestLatency`). `method` is the HTTP method
    (GET, POST, PUT, PATCH, DELETE) and `host` the server's `host[:port]` as its URL spells it."""

    def request_result(self, code: str, method: str, host: str) -> None:
        """One attempt sent to the server got its answer's headers (`code` its status, "201") or failed without
        one (`NO_RESPONSE`: refused, timed out, cancelled). Each Retry-After attempt is one result."""

    def request_latency(self, method: str, host: str, seconds: float) -> None:
        """One request that sent at least one attempt ended: from the call (its wait for a rate limit token and
        its Retry-After waits included) to its answer read, or to its failure."""


def server_host(server: str) -> str:
    """`https://10.0.0.1:6443/prefix` -> `10.0.0.1:6443`: Go's `url.URL.Host`, client-go's `host` label."""
    return urlsplit(server).netloc.rpartition("@")[2] or "none"


class ApiClient:
    """Requests to one API server. Use `async with ApiClient(...)` or call `await close()` at the end."""

    def __init__(
        self,
        connection: Connection,
        gate: WriteGate,
        *,
        qps: float = 40,
        burst: int = 60,
        request_timeout: float = 30,
        user_agent: str = USER_AGENT,
        observer: RequestObserver | None = None,
    ) -> None:
        self.connection = connection
        self.host = server_host(connection.server)
        self.observer = observer
        self.user_agent = user_agent
        self.gate = gate
        self.limiter = TokenBucket(qps, burst)
        self.request_timeout = request_timeout
        self._session: aiohttp.ClientSession | None = None
        self._closed = False
        self._token: str | None = connection.token
        self._token_read_at = float("-inf")
        self.leadership_doubt: Callable[[], str | None] | None = None
        """Asked right before each write is sent; a reason refuses the write (`LeadershipInDoubt`)."""

    async def __aenter__(self) -> ApiClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    # ---- verbs --------------------------------------------------------------------------------------

    async def get(self, path: str, params: Params | None = None) -> dict[str, Any]:
        return await self._request("GET", path, params=params)

    async def list(self, path: str, params: Params | None = None) -> dict[str, Any]:
        """A list; with a `limit`, every page is fetched (following `continue`) and the items joined."""
        first = await self._request("GET", path, params=params)
        if not params or "limit" not in params:
            return first
        items = list(first.get("items") or [])
        token = (first.get("metadata") or {}).get("continue")
        while token:
            page = await self._request("GET", path, params={**params, "continue": token})
            items.extend(page.get("items") or [])
            token = (page.get("metadata") or {}).get("continue")
        first["items"] = items
        first.setdefault("metadata", {}).pop("continue", None)
        return first

    async def create(self, path: str, body: Mapping[str, Any]) -> dict[str, Any]:
        return await self._request("POST", path, body=body, write=True)

    async def put(self, path: str, body: Mapping[str, Any]) -> dict[str, Any]:
        return await self._request("PUT", path, body=body, write=True)

    async def patch_merge(self, path: str, body: Mapping[str, Any], *, answer: bool = True) -> dict[str, Any]:
        """A JSON merge patch; the patched object, or `{}` when `answer` is False (the caller does not read it:
        a binding's status write answers with the whole binding, whose parse was ~1 % of a binding's CPU)."""
        return await self._request("PATCH", path, body=body, content_type=MERGE_PATCH, write=True, answer=answer)

    async def apply(self, path: str, body: Mapping[str, Any], *, field_manager: str) -> dict[str, Any]:
        """Server-side apply (created when missing), taking over fields other managers own (`force`), as
        `kubectl apply --server-side --force-conflicts` does; through a `/status` path it applies the status."""
        params: Params = {"fieldManager": field_manager, "force": True}
        return await self._request("PATCH", path, params=params, body=body, content_type=APPLY_PATCH, write=True)

    async def delete(self, path: str) -> dict[str, Any]:
        return await self._request("DELETE", path, write=True)

    async def close(self) -> None:
        """Close the HTTP session (requests still running are aborted). The client cannot be used after."""
        self._closed = True
        if self._session is not None:
            session, self._session = self._session, None
            await session.close()

    # ---- plumbing -----------------------------------------------------------------------------------

    async def _request(
        self,
        method: str,
        path: str,
        *,
        params: Params | None = None,
        body: Mapping[str, Any] | None = None,
        content_type: str = JSON,
        write: bool = False,
        answer: bool = True,
    ) -> dict[str, Any]:
        attempt = 1
        sent = _Progress()  # how far the request got: an attempt went out; a write went out (outcome unknown)
        doubtful = False
        started = time.monotonic()
        try:
            while True:
                try:
                    return await self._attempt(method, path, params, body, content_type, write, answer, sent)
                except (TooManyRequests, ServerError) as error:
                    doubtful = doubtful or outcome_unknown(error)
                    if error.retry_after is None or attempt >= RETRY_AFTER_ATTEMPTS:
                        raise
                    delay = min(error.retry_after, RETRY_AFTER_CAP)
                    logger.info(
                        "%s %s answered %d %s (Retry-After %gs): attempt %d of %d in %gs",
                        method, path, error.status, error.reason, error.retry_after, attempt + 1,
                        RETRY_AFTER_ATTEMPTS, delay,
                    )
                    await asyncio.sleep(delay)
                    attempt += 1
        except BaseException as error:
            if sent.sent and (doubtful or outcome_unknown(error)):
                self.gate.in_doubt += 1  # once per request, however many attempts
            raise
        finally:
            if sent.asked and self.observer is not None:
                self.observer.request_latency(method, self.host, time.monotonic() - started)

    async def _attempt(
        self,
        method: str,
        path: str,
        params: Params | None,
        body: Mapping[str, Any] | None,
        content_type: str,
        write: bool,
        answer: bool,
        progress: _Progress,
    ) -> dict[str, Any]:
        if write:
            self.gate.check()
        await self.limiter.acquire()
        if not write:
            return await self._send(method, path, params, body, content_type, answer, progress)
        async with self.gate.writing():
            doubt = self.leadership_doubt() if self.leadership_doubt is not None else None
            if doubt is not None:
                raise LeadershipInDoubt(doubt)
            progress.sent = True
            return await self._send(method, path, params, body, content_type, answer, progress)

    async def _send(
        self,
        method: str,
        path: str,
        params: Params | None,
        body: Mapping[str, Any] | None,
        content_type: str,
        answer: bool,
        progress: _Progress,
    ) -> dict[str, Any]:
        session = self._get_session()
        headers = {"Accept": JSON, "User-Agent": self.user_agent}
        authorization = self._authorization()
        if authorization:
            headers["Authorization"] = authorization
        data: bytes | None = None
        if body is not None:
            data = jsonio.dumps(body)
            headers["Content-Type"] = content_type
        query = {key: _query_value(value) for key, value in params.items()} if params else None
        url = self.connection.server + path
        code = NO_RESPONSE
        progress.asked = True
        try:
            async with session.request(
                method, url, params=query, data=data, headers=headers,
                timeout=aiohttp.ClientTimeout(total=self.request_timeout, sock_connect=self.request_timeout),
            ) as response:
                code = str(response.status)  # counted when the headers arrive, as client-go counts
                raw = await response.read()
                status, answer_headers = response.status, response.headers
        except aiohttp.ConnectionTimeoutError as exc:  # before TimeoutError, which it is too: nothing was sent
            raise TransportError(f"{method} {path}: no connection within {self.request_timeout:g}s",
                                 maybe_sent=False) from exc
        except TimeoutError as exc:
            raise TransportError(f"{method} {path}: no answer within {self.request_timeout:g}s") from exc
        except aiohttp.ClientConnectorError as exc:
            raise TransportError(f"{method} {path}: {type(exc).__name__}: {exc}", maybe_sent=False) from exc
        except aiohttp.ClientError as exc:
            raise TransportError(f"{method} {path}: {type(exc).__name__}: {exc}") from exc
        finally:
            if self.observer is not None:
                self.observer.request_result(code, method, self.host)
        parsed: Any = None
        if raw and (answer or status >= 400):
            try:
                parsed = jsonio.loads(raw)
            except ValueError:
                parsed = None
        if status >= 400:
            raise error_from_response(status, parsed, answer_headers, raw.decode("utf-8", "replace"))
        if parsed is None:
            return {}
        if not isinstance(parsed, dict):
            raise TransportError(f"{method} {path}: the answer is not a JSON object")
        return parsed

    def _get_session(self) -> aiohttp.ClientSession:
        if self._closed:
            raise RuntimeError("the API client is closed")
        if self._session is None:
            context = ssl_context(self.connection)
            connector = aiohttp.TCPConnector(ssl=context if context is not None else True, limit=100)
            self._session = aiohttp.ClientSession(connector=connector)
        return self._session

    def _authorization(self) -> str | None:
        connection = self.connection
        if connection.token_file and not connection.token:
            now = time.monotonic()
            if now - self._token_read_at >= TOKEN_FILE_REFRESH:
                try:
                    self._token = Path(connection.token_file).read_text(encoding="utf-8").strip()
                except OSError as exc:
                    raise ConfigError(f"cannot read the token file {connection.token_file}: {exc}") from exc
                self._token_read_at = now
        if self._token:
            return f"Bearer {self._token}"
        if connection.username is not None:
            pair = f"{connection.username}:{connection.password or ''}".encode()
            return "Basic " + base64.b64encode(pair).decode("ascii")
        return None


class _Progress:
    """How far one request got: whether an attempt of it went out (its latency is observed), and whether a write
    of it went out (a failure after that may have been applied)."""

    __slots__ = ("asked", "sent")

    def __init__(self) -> None:
        self.asked = False
        self.sent = False


def _query_value(value: str | int | bool) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)

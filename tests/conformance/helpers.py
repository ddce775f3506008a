"""Helpers of the conformance suite: the server under test, a streaming watch, and object shapes to compare."""

from __future__ import annotations

import json
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from testsupport.realcluster.kube import KubeClient, path_of

RB_API = "work.karmada.io/v1alpha2"
GENERATED = re.compile(r"[bcdfghjklmnpqrstvwxz2456789]{5}")
UID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")


@dataclass
class Server:
    """One server under test ("devcluster" or "real"), its admin client and this test's own namespace."""

    name: str
    client: KubeClient
    namespace: str

    def request(self, method: str, path: str, body: Any = None, **kwargs: Any) -> tuple[int, Any]:
        return self.client.request(method, path, body, **kwargs)

    def rb(self, name: str | None = None, sub: str | None = None, namespace: str | None = None,
           query: str = "") -> str:
        """The path of this namespace's ResourceBindings (or of one of them, or its subresource)."""
        path = path_of("ResourceBinding", name, namespace or self.namespace, sub)
        return f"{path}?{query}" if query else path

    def path(self, kind: str, name: str | None = None, query: str = "") -> str:
        """The path of a kind in this namespace (cluster-scoped kinds: the cluster-wide path)."""
        path = path_of(kind, name, self.namespace)
        return f"{path}?{query}" if query else path

    def create_rb(self, name: str, **spec: Any) -> dict[str, Any]:
        status, body = self.request("POST", self.rb(), rb_body(name, **spec))
        assert status == 201, f"creating {name}: {status} {body}"
        return dict(body)

    def new_namespace(self, suffix: str) -> str:
        name = f"{self.namespace}-{suffix}"
        status, body = self.request("POST", "/api/v1/namespaces", {"metadata": {"name": name}})
        assert status == 201, f"creating namespace {name}: {status} {body}"
        return name

    def watch(self, path: str, **params: str) -> WatchStream:
        return WatchStream(self.client, path, {"watch": "1", **params})

    def call(self, method: str, path: str, body: Any = None, *, accept: str = "application/json",
             content_type: str | None = None) -> Reply:
        """A request with any body (bytes are sent as they are) and Accept header; the answer with its headers,
        its body parsed as JSON where it is JSON."""
        data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.client.server + path, data=data, method=method)
        request.add_header("Accept", accept)
        if data is not None:
            request.add_header("Content-Type", content_type or "application/json")
        if self.client.token:
            request.add_header("Authorization", f"Bearer {self.client.token}")
        try:
            with urllib.request.urlopen(request, timeout=30, context=self.client.context) as answer:
                status, headers, raw = answer.status, answer.headers, answer.read()
        except urllib.error.HTTPError as error:
            status, headers, raw = error.code, error.headers, error.read()
        try:
            parsed: Any = json.loads(raw) if raw else None
        except ValueError:
            parsed = raw
        return Reply(status, parsed, {key.lower(): value for key, value in headers.items()}, raw,
                     list(headers.get_all("Warning") or ()))


@dataclass
class Reply:
    status: int
    body: Any
    headers: dict[str, str]
    raw: bytes
    warnings: list[str]


def rb_body(name: str | None, labels: dict[str, str] | None = None, finalizers: list[str] | None = None,
            **spec: Any) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name} if name else {}
    if labels:
        metadata["labels"] = labels
    if finalizers:
        metadata["finalizers"] = finalizers
    return {"apiVersion": RB_API, "kind": "ResourceBinding", "metadata": metadata,
            "spec": {"resource": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, **spec}}


def rv(obj: dict[str, Any]) -> int:
    return int(obj["metadata"]["resourceVersion"])


def names(listing: dict[str, Any]) -> list[str]:
    return [item["metadata"]["name"] for item in listing["items"]]


def shape(obj: dict[str, Any]) -> dict[str, Any]:
    """`obj` without what differs between any two servers by nature: managedFields (server-side apply
    bookkeeping, not emulated), and uid/timestamps/resourceVersion replaced by what they look like."""
    result = json.loads(json.dumps(obj))
    metadata = result.get("metadata") or {}
    metadata.pop("managedFields", None)
    for key, pattern in (("uid", UID), ("creationTimestamp", TIMESTAMP), ("deletionTimestamp", TIMESTAMP)):
        if key in metadata:
            assert pattern.fullmatch(metadata[key]), f"{key}: {metadata[key]!r}"
            metadata[key] = f"<{key}>"
    if "resourceVersion" in metadata:
        assert str(metadata["resourceVersion"]).isdigit(), metadata["resourceVersion"]
        metadata["resourceVersion"] = "<rv>"
    return result


def causes(status: dict[str, Any]) -> set[tuple[str, str, str]]:
    """The (field, reason, message) of each cause of a failure Status (kube-apiserver may repeat one)."""
    return {(c.get("field", ""), c["reason"], c["message"]) for c in status["details"]["causes"]}


class WatchStream:
    """A watch request read line by line: `next()` is the next event, None once the server ended the stream."""

    def __init__(self, client: KubeClient, path: str, params: dict[str, str]) -> None:
        self.client = client
        self.url = f"{client.server}{path}?{urllib.parse.urlencode(params)}"
        self.status = 0
        self.error: Any = None
        self._answer: Any = None
        self.opened = 0.0

    def __enter__(self) -> WatchStream:
        request = urllib.request.Request(self.url, headers={"Accept": "application/json"})
        if self.client.token:
            request.add_header("Authorization", f"Bearer {self.client.token}")
        self.opened = time.monotonic()
        try:
            self._answer = urllib.request.urlopen(request, timeout=10, context=self.client.context)
            self.status = self._answer.status
        except urllib.error.HTTPError as error:
            self.status, self.error = error.code, json.loads(error.read() or b"null")
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._answer is not None:
            self._answer.close()

    def next(self) -> dict[str, Any] | None:
        """The next event (socket.timeout after 10 s without one)."""
        assert self._answer is not None, f"the watch was refused: {self.status} {self.error}"
        line = self._answer.readline()
        return json.loads(line) if line else None

    def take(self, count: int) -> list[dict[str, Any]]:
        events = []
        for _ in range(count):
            event = self.next()
            assert event is not None, f"the stream ended after {events}"
            events.append(event)
        return events

    def rest(self) -> list[dict[str, Any]]:
        """Every event until the server ends the stream (use with timeoutSeconds)."""
        events = []
        while (event := self.next()) is not None:
            events.append(event)
        return events


def summary(events: list[dict[str, Any]]) -> list[tuple[str, str | None]]:
    return [(e["type"], e["object"].get("metadata", {}).get("name")) for e in events]



# ---- protobuf bodies, as client-go sends built-in kinds ---------------------------------------------------------


def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def pb(*fields: tuple[int, int | str | bytes]) -> bytes:
    """A protobuf message from (number, value) pairs: ints as varints, str and bytes (nested messages) as
    length-delimited fields, in the order given (repeat a number for a repeated field)."""
    out = bytearray()
    for number, value in fields:
        if isinstance(value, bool | int):
            out += _varint(number << 3) + _varint(int(value))
        else:
            data = value.encode() if isinstance(value, str) else value
            out += _varint(number << 3 | 2) + _varint(len(data)) + data
    return bytes(out)


def k8s_pb(api_version: str, kind: str, message: bytes) -> bytes:
    """The `k8s\\x00` envelope (runtime.Unknown) around a message, as client-go sends it."""
    return b"k8s\x00" + pb((1, pb((1, api_version), (2, kind))), (2, message), (3, ""), (4, ""))


PROTOBUF = "application/vnd.kubernetes.protobuf"


def json_diff(left: Any, right: Any, path: str = "", limit: int = 12) -> list[str]:
    """Where two JSON values differ, as `path: left != right` lines (at most `limit`)."""
    found: list[str] = []

    def walk(a: Any, b: Any, where: str) -> None:
        if len(found) >= limit:
            return
        if isinstance(a, dict) and isinstance(b, dict):
            for key in sorted(set(a) | set(b)):
                if key not in a or key not in b:
                    found.append(f"{where}/{key}: {'missing' if key not in a else 'present'} in the first, "
                                 f"{'missing' if key not in b else 'present'} in the second")
                else:
                    walk(a[key], b[key], f"{where}/{key}")
        elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
            for index, (x, y) in enumerate(zip(a, b, strict=True)):
                walk(x, y, f"{where}/{index}")
        elif a != b:
            found.append(f"{where}: {json.dumps(a)[:200]} != {json.dumps(b)[:200]}")

    walk(left, right, path)
    return found

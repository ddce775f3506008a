"""The HTTP layer: one catch-all aiohttp handler that routes like kube-apiserver, journals every request and
applies the faults. What only kubectl asks (Tables, OpenAPI, protobuf bodies, field managers and validation, the
review kinds) it hands to the kubectl package, or, without it, to `plain` (handoff.py)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml
from aiohttp import web
from multidict import CIMultiDict

from . import discovery, errors, jsontext
from .bodies import Undecoded, parse_body
from .errors import ApiError, bad_request, invalid_options
from .faults import Fault, Faults
from .handoff import kubectl
from .journal import Journal, JournalEntry
from .lists import delete_collection, list_page
from .patch import APPLY_PATCH, MERGE_PATCH
from .resources import Registry, ResourceType
from .selectors import make_matcher
from .store import Store
from .watch import Watch, expired_event, parse_rv

_JSON = "application/json"
_NOT_FOUND = "the server could not find the requested resource"


_REP = web.RequestKey("rep", kubectl.Representation)  # the representation the Accept header asked for
_JSON_REP = kubectl.Representation()
_dumps = jsontext.dumps


Headers = Mapping[str, str] | Sequence[tuple[str, str]] | None


def _event_line(event: dict[str, Any]) -> bytes:
    return _dumps(event) + b"\n"


def _json_response(status: int, body: Any, headers: Headers = None) -> web.Response:
    return web.Response(status=status, body=_dumps(body), content_type=_JSON,
                        headers=CIMultiDict(headers) if headers else None)


def _response(rep: kubectl.Representation, status: int, body: Any, headers: Headers = None) -> web.Response:
    if rep.encoding == "yaml":
        text = yaml.safe_dump(body, default_flow_style=False, sort_keys=True)
        return web.Response(status=status, body=text.encode(), content_type="application/yaml",
                            headers=CIMultiDict(headers) if headers else None)
    return _json_response(status, body, headers)


@dataclass(frozen=True)
class Route:
    """A parsed resource URL."""

    rtype: ResourceType
    namespace: str | None
    name: str | None
    subresource: str | None


class _Dropped(Exception):
    """The connection was cut on purpose (a `drop` fault)."""


def _drop(request: web.BaseRequest) -> None:
    transport = request.transport
    if transport is not None:
        transport.abort()
    raise _Dropped


class ApiServer:
    """Routes requests to the store, journals them and applies the faults."""

    def __init__(
        self, store: Store, journal: Journal, faults: Faults, *, bookmark_interval: float = 30.0
    ) -> None:
        self.store = store
        self.registry: Registry = store.registry
        self.journal = journal
        self.faults = faults
        self.bookmark_interval = bookmark_interval
        self.closing = False
        self.server_address = "127.0.0.1:0"
        self.openapi = kubectl.OpenAPIEndpoint(self.registry)

    def make_server(self) -> web.Server:
        """A low-level aiohttp server: every request goes to `handle` (no router, no middlewares)."""
        return web.Server(self.handle, access_log=None, handler_cancellation=True)

    # ---- the request pipeline ---------------------------------------------------------------------

    async def handle(self, request: web.BaseRequest) -> web.StreamResponse:
        raw = await request.read() if request.can_read_body else b""
        content_type = request.content_type if "Content-Type" in request.headers else ""
        body, body_error = parse_body(raw, content_type)
        query = dict(request.query)
        entry = self.journal.record(
            JournalEntry(time.monotonic(), request.method, request.path, query,
                         None if isinstance(body, Undecoded) else body,
                         user_agent=request.headers.get("User-Agent", ""))
        )
        try:
            response = await self._handle(request, entry, body, body_error, raw)
        except _Dropped:
            entry.status = 0
            entry.finished = time.monotonic()
            self.journal.notify()
            raise asyncio.CancelledError from None
        except ApiError as exc:
            response = _response(request.get(_REP, _JSON_REP), exc.code, exc.body, exc.headers)
        if not entry.status:
            entry.status = response.status
        entry.finished = time.monotonic()
        self.journal.notify()
        return response

    async def _handle(
        self, request: web.BaseRequest, entry: JournalEntry, body: Any, body_error: str | None, raw: bytes,
    ) -> web.StreamResponse:
        fault = self.faults.take(request.method, request.path, request.query_string, entry.is_watch)
        if fault is not None:
            if fault.delay:
                await asyncio.sleep(fault.delay)
            if fault.hang:
                await fault.wait_released()
            if fault.drop:
                _drop(request)
            error = fault.error()
            if error is not None:
                raise error
        if body_error is not None:
            raise bad_request(body_error)
        path = request.path
        if path in ("/healthz", "/readyz", "/livez"):
            return web.Response(text="ok")
        discovered = self._discovery(path)
        if discovered is not None:
            return _json_response(200, discovered)
        if path == "/openapi/v2" or path.startswith("/openapi/v3"):
            return self.openapi.answer(request)
        route = self._route(path)
        if route is None:
            return self._not_found(path)
        rep = kubectl.negotiate(request.headers.get("Accept"), watch=entry.is_watch and request.method == "GET",
                                builtin=not route.rtype.custom)
        request[_REP] = rep
        response = await self._dispatch(request, entry, route, body, fault, rep, raw)
        if fault is not None and fault.lose_answer:
            _drop(request)  # the request took effect; its answer never arrives
        return response

    # ---- routing ----------------------------------------------------------------------------------

    def _discovery(self, path: str) -> dict[str, Any] | None:
        segments = [s for s in path.split("/") if s]
        match segments:
            case ["version"]:
                return dict(discovery.VERSION_INFO)
            case ["api"]:
                return discovery.api_versions(self.server_address)
            case ["api", version]:
                return discovery.api_resource_list(self.registry, "", version)
            case ["apis"]:
                return discovery.api_group_list(self.registry)
            case ["apis", group]:
                return discovery.api_group(self.registry, group)
            case ["apis", group, version]:
                return discovery.api_resource_list(self.registry, group, version)
        return None

    def _route(self, path: str) -> Route | None:
        segments = [s for s in path.split("/") if s]
        if len(segments) >= 3 and segments[0] == "api":
            group, version, rest = "", segments[1], segments[2:]
        elif len(segments) >= 4 and segments[0] == "apis":
            group, version, rest = segments[1], segments[2], segments[3:]
        else:
            return None
        namespace = None
        if rest[0] == "namespaces" and len(rest) >= 3:
            candidate = self.registry.get(group, version, rest[2])
            if candidate is not None and candidate.namespaced:
                namespace, rest = rest[1], rest[2:]
        if len(rest) > 3:
            return None
        rtype = self.registry.get(group, version, rest[0])
        if rtype is None:
            return None
        name = rest[1] if len(rest) > 1 else None
        subresource = rest[2] if len(rest) > 2 else None
        if rtype.namespaced and name is not None and namespace is None:
            return None
        return Route(rtype, namespace, name, subresource)

    def _not_found(self, path: str) -> web.Response:
        """What kube-apiserver answers for a path it serves nothing at: a 404 Status under `/api` and the built-in
        groups (their handlers answer it), the Go mux's plain `404 page not found` elsewhere (custom resource
        groups and versions included)."""
        segments = [s for s in path.split("/") if s]
        builtin_groups = {rt.group for rt in self.registry if not rt.custom}
        if segments[:1] == ["api"] or (segments[:1] == ["apis"] and len(segments) > 1
                                        and segments[1] in builtin_groups):
            raise ApiError(404, _NOT_FOUND, "NotFound", {})
        return web.Response(status=404, text="404 page not found\n", content_type="text/plain",
                            headers={"X-Content-Type-Options": "nosniff"})

    # ---- verbs ------------------------------------------------------------------------------------

    def _refusal(self, request: web.BaseRequest, route: Route, is_watch: bool) -> web.Response | None:
        """What kube-apiserver answers to a verb the route does not take (raised, or the plain 404 returned);
        None when it takes it."""
        rt, name, method = route.rtype, route.name, request.method
        if route.subresource is not None and not (route.subresource == "status" and rt.has_status):
            if rt.custom:  # (kube's custom resource handler says the object is not found)
                raise errors.not_found(rt.plural, rt.group, name or "")
            raise ApiError(404, _NOT_FOUND, "NotFound", {})
        if rt.review and name is not None:
            raise ApiError(404, _NOT_FOUND, "NotFound", {})
        if name is None and method in ("PUT", "PATCH") and rt.custom:
            raise bad_request("name must be provided")
        unnamespaced_create = name is None and method == "POST" and rt.namespaced and route.namespace is None
        if unnamespaced_create and rt.custom:
            return self._not_found(request.path)
        if _verb(method, name, is_watch) not in rt.verbs or unnamespaced_create:
            raise _not_allowed()
        return None

    async def _dispatch(
        self, request: web.BaseRequest, entry: JournalEntry, route: Route, body: Any, fault: Fault | None,
        rep: kubectl.Representation, raw: bytes = b"",
    ) -> web.StreamResponse:
        refused = self._refusal(request, route, entry.is_watch)
        if refused is not None:
            return refused
        rt, method = route.rtype, request.method
        if isinstance(body, Undecoded):
            body = entry.body = kubectl.decode_body(body.content_type, body.raw, rt, method)
        dry_run = _dry_run(request, body) if method in _OPTIONS_KINDS else False
        if rt.review:
            return _response(rep, 201, kubectl.answer_review(rt, body))
        if method in ("POST", "PUT", "PATCH"):
            return self._write(request, route, body, rep, dry_run, kubectl.WriteOptions.read(request, rt, body, raw))
        if route.name is None:
            return await self._collection(request, entry, route, fault, rep, dry_run)
        return self._item(request, route, route.name, body, rep, dry_run)

    async def _collection(
        self, request: web.BaseRequest, entry: JournalEntry, route: Route, fault: Fault | None,
        rep: kubectl.Representation, dry_run: bool,
    ) -> web.StreamResponse:
        """A watch, list or deletecollection."""
        rt, namespace, query = route.rtype, route.namespace, request.query
        if request.method == "GET" and entry.is_watch:
            return await self._watch(request, entry, route, fault, rep)
        if request.method == "GET":
            listing = list_page(self.store, rt, namespace, query)
            return _response(rep, 200, rep.of_list(rt, listing, _include_object(request)))
        if request.method == "DELETE":
            return _response(rep, 200, delete_collection(self.store, rt, namespace, query, dry_run))
        raise _not_allowed()

    def _item(
        self, request: web.BaseRequest, route: Route, name: str, body: Any, rep: kubectl.Representation, dry_run: bool,
    ) -> web.Response:
        """A get or delete of one object."""
        rt = route.rtype
        if request.method == "GET":
            return _response(rep, 200, rep.of_object(rt, self.store.get(rt, name, route.namespace),
                                                     _include_object(request)))
        if request.method == "DELETE" and route.subresource is None:
            preconditions = body.get("preconditions") if isinstance(body, dict) else None
            obj, gone = self.store.delete_outcome(rt, name, route.namespace, preconditions, dry_run=dry_run)
            return _response(rep, 200, _deleted_status(rt, obj) if gone else obj)
        raise _not_allowed()

    def _write(
        self, request: web.BaseRequest, route: Route, body: Any, rep: kubectl.Representation, dry_run: bool,
        options: kubectl.WriteOptions,
    ) -> web.Response:
        """A create (POST), update (PUT) or patch (PATCH, server-side applies included)."""
        rt, ns, name, sub = route.rtype, route.namespace, route.name, route.subresource
        store, method, headers = self.store, request.method, options.headers
        if name is None and method == "POST":
            obj = store.create(rt, body, ns, dry_run=dry_run, manager=options.manager)
            return _response(rep, 201, obj, headers())
        if name is None or method == "POST":
            raise _not_allowed()
        if method == "PUT":
            obj = store.update(rt, name, body, namespace=ns, subresource=sub, dry_run=dry_run, manager=options.manager)
            return _response(rep, 200, obj, headers())
        content_type = request.content_type or MERGE_PATCH
        if content_type == APPLY_PATCH:
            obj, created = store.apply(rt, name, body, namespace=ns, subresource=sub, manager=options.manager,
                                       force=options.force, dry_run=dry_run)
            return _response(rep, 201 if created else 200, obj, headers())
        obj = store.patch(rt, name, body, namespace=ns, subresource=sub, content_type=content_type, dry_run=dry_run,
                          field_validation=options.validation, manager=options.manager)
        return _response(rep, 200, obj, headers())

    async def _watch(
        self, request: web.BaseRequest, entry: JournalEntry, route: Route, fault: Fault | None,
        rep: kubectl.Representation = _JSON_REP,
    ) -> web.StreamResponse:
        query = request.query
        matcher = make_matcher(query.get("labelSelector"), query.get("fieldSelector"), route.rtype.fields)
        since = parse_rv(query.get("resourceVersion"))
        timeout = float(query["timeoutSeconds"]) if query.get("timeoutSeconds") else None
        bookmarks = query.get("allowWatchBookmarks") in ("true", "1")
        send_initial = query.get("sendInitialEvents") in ("true", "1")
        watch = Watch(self.store, route.rtype, route.namespace, matcher, since, bookmarks, send_initial)
        encode = rep.watch_encoder(route.rtype, _include_object(request)) or _event_line
        response = web.StreamResponse(status=200, headers={"Content-Type": _JSON})
        entry.status = 200
        try:
            try:
                initial = watch.initial()
            except ApiError as exc:
                initial = [expired_event(exc)]
                fault = None
                timeout = 0.0
            await response.prepare(request)
            for event in initial:
                await response.write(encode(event))
            if fault is not None and fault.streaming:
                await self._end_stream(request, response, fault)
                return response
            await self._stream(request, response, watch, timeout, encode)
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            watch.close()
        return response

    async def _stream(
        self, request: web.BaseRequest, response: web.StreamResponse, watch: Watch, duration: float | None,
        encode: Callable[[dict[str, Any]], bytes],
    ) -> None:
        """Live events until `duration` (timeoutSeconds) ends the stream. With bookmarks allowed: one BOOKMARK
        2 s before the end if the store has moved past the watch's start by then (kube-apiserver's pre-timeout
        bookmark; none for watches of 2 s or less), and one after every `bookmark_interval` without events."""
        loop = asyncio.get_running_loop()
        started = loop.time()
        deadline = started + duration if duration is not None else None
        pre_timeout = deadline - 2.0 if deadline is not None and duration is not None and duration > 2.0 else None
        next_idle = started + self.bookmark_interval
        while not self.closing:
            wake = [deadline]
            if watch.bookmarks:
                wake += [next_idle, pre_timeout]
            times = [t for t in wake if t is not None]
            wait = max(min(times) - loop.time(), 0.0) if times else None
            try:
                async with asyncio.timeout(wait):
                    event = await watch.next()
            except TimeoutError:
                now = loop.time()
                if deadline is not None and now >= deadline:
                    for pending in watch.pending():
                        await response.write(encode(pending))
                    return
                if pre_timeout is not None and now >= pre_timeout:
                    pre_timeout = None
                    if self.store.resource_version > watch.start_rv:
                        await response.write(encode(watch.bookmark()))
                elif now >= next_idle:
                    await response.write(encode(watch.bookmark()))
                    next_idle = now + self.bookmark_interval
                continue
            if event is None:
                fault = self.faults.take(request.method, request.path, request.query_string, True,
                                         streaming=True)
                if fault is not None and fault.drop:
                    _drop(request)
                if fault is not None:
                    await self._end_stream(request, response, fault)
                    return
                continue
            next_idle = loop.time() + self.bookmark_interval
            await response.write(encode(event))

    async def _end_stream(self, request: web.BaseRequest, response: web.StreamResponse, fault: Fault) -> None:
        """How a streaming fault ends a watch: an ERROR event, half an event and a cut, or just the end."""
        if fault.watch_error is not None:
            status = ApiError(fault.watch_error, fault.message or f"injected watch error {fault.watch_error}").body
            await response.write(_dumps({"type": "ERROR", "object": status}) + b"\n")
        elif fault.cut_event:
            await response.write(b'{"type":"MODIFIED","object":{"kind":"Resou')
            _drop(request)

    def stop_watches(self) -> None:
        """End every open watch stream (used on shutdown)."""
        self.closing = True
        self.store.poke_all()


_OPTIONS_KINDS = {"POST": "CreateOptions", "PUT": "UpdateOptions", "PATCH": "PatchOptions", "DELETE": "DeleteOptions"}


def _include_object(request: web.BaseRequest) -> str:
    """What the rows of a Table carry (`includeObject`: None, Metadata or Object)."""
    return request.query.get("includeObject", "Metadata")


def _not_allowed() -> ApiError:
    return ApiError(405, "the server does not allow this method on the requested resource", "MethodNotAllowed", {})


def _verb(method: str, name: str | None, watch: bool) -> str:
    """The API verb of a request (what a type's discovery `verbs` list)."""
    if name is None:
        return {"GET": "watch" if watch else "list", "POST": "create", "DELETE": "deletecollection"}.get(
            method, method.lower())
    return {"GET": "get", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}.get(method, method.lower())


def _dry_run(request: web.BaseRequest, body: Any = None) -> bool:
    """`?dryRun=All` (the only value kube-apiserver accepts; anything else is a 422 naming the options kind), or
    for a delete `dryRun: [All]` in its DeleteOptions body (where kubectl puts it)."""
    values = request.query.getall("dryRun", [])
    if request.method == "DELETE" and isinstance(body, dict) and not values:
        given = body.get("dryRun") or []
        values = [str(value) for value in given] if isinstance(given, list) else [str(given)]
    if any(value != "All" for value in values):
        shown = ", ".join(json.dumps(value) for value in values)
        raise invalid_options(_OPTIONS_KINDS[request.method], [{
            "reason": "FieldValueNotSupported", "field": "dryRun",
            "message": f'Unsupported value: [{shown}]: supported values: "All"'}])
    return bool(values)


def _deleted_status(rt: ResourceType, obj: dict[str, Any]) -> dict[str, Any]:
    """What kube-apiserver answers to a delete that removed the object at once."""
    metadata = obj["metadata"]
    details: dict[str, Any] = {"name": metadata["name"]}
    if rt.group:
        details["group"] = rt.group
    details["kind"] = rt.plural
    details["uid"] = metadata.get("uid", "")
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details}



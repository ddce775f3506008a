"""Which representation an `Accept` header asks for, as kube-apiserver negotiates it (406 `NotAcceptable` when
there is none), and the answers in the forms kubectl asks: `as=Table` (kubectl get, also as a watch) and
`as=PartialObjectMetadata(List)`. devcluster answers JSON or YAML, never protobuf."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import ApiError
from ..resources import ResourceType
from .printers import printer_for
from .tables import partial, table

_ENCODER = json.JSONEncoder(separators=(",", ":"))

_RESOURCE_TYPES = "application/json, application/yaml, application/vnd.kubernetes.protobuf"
_WATCH_TYPES = "application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch"


@dataclass(frozen=True)
class Representation:
    """What to answer: `json` or `yaml` encoding of the object, a `Table`, or `PartialObjectMetadata`."""

    encoding: str = "json"  # json | yaml
    form: str = "object"  # object | Table | PartialObjectMetadata | PartialObjectMetadataList
    version: str = "v1"  # of meta.k8s.io, for Table and PartialObjectMetadata

    def of_object(self, rt: ResourceType, obj: dict[str, Any], include_object: str) -> dict[str, Any]:
        """A GET's object as asked: itself, its Table (`includeObject`: None, Metadata or Object), or its
        PartialObjectMetadata."""
        if self.form == "Table":
            return table(printer_for(rt), [obj], {"resourceVersion": obj["metadata"].get("resourceVersion", "")},
                         version=self.version, include_object=include_object)
        if self.form.startswith("PartialObjectMetadata"):
            return partial(obj, self.version)
        return obj

    def of_list(self, rt: ResourceType, listing: dict[str, Any], include_object: str) -> dict[str, Any]:
        """A list as asked: itself, a Table, or a PartialObjectMetadataList."""
        if self.form == "object":
            return listing
        metadata = {key: value for key, value in listing["metadata"].items() if value not in ("", None)}
        if self.form == "Table":
            return table(printer_for(rt), listing["items"], metadata, version=self.version,
                         include_object=include_object)
        return {"kind": "PartialObjectMetadataList", "apiVersion": f"meta.k8s.io/{self.version}",
                "metadata": metadata, "items": [partial(obj, self.version) for obj in listing["items"]]}

    def watch_encoder(self, rt: ResourceType, include_object: str) -> Callable[[dict[str, Any]], bytes] | None:
        """For a Table watch (kubectl get -w), event lines as kube-apiserver sends them: each object a one-row
        Table, the first with the column definitions, the later ones with `columnDefinitions: null`; ERROR and
        BOOKMARK events unchanged. None for any other watch (its events are sent as they are)."""
        if self.form != "Table":
            return None
        printer = printer_for(rt)
        first = [True]

        def encode(event: dict[str, Any]) -> bytes:
            if event.get("type") in ("ERROR", "BOOKMARK"):
                return _ENCODER.encode(event).encode() + b"\n"
            obj = event["object"]
            converted = table(printer, [obj], {"resourceVersion": obj["metadata"].get("resourceVersion", "")},
                              version=self.version, include_object=include_object, headers=first[0])
            first[0] = False
            return _ENCODER.encode({"type": event["type"], "object": converted}).encode() + b"\n"

        return encode


JSON = Representation()


def _media_ranges(accept: str) -> list[tuple[str, dict[str, str]]]:
    ranges: list[tuple[float, int, str, dict[str, str]]] = []
    for index, clause in enumerate(accept.split(",")):
        parts = [part.strip() for part in clause.split(";")]
        if not parts[0]:
            continue
        params: dict[str, str] = {}
        for part in parts[1:]:
            key, _, value = part.partition("=")
            params[key.strip().lower()] = value.strip().strip('"')
        try:
            quality = float(params.pop("q", "1"))
        except ValueError:
            quality = 1.0
        if quality > 0:
            ranges.append((-quality, index, parts[0].lower(), params))
    return [(media, params) for _, _, media, params in sorted(ranges)]


def negotiate(accept: str | None, *, watch: bool = False, builtin: bool = False) -> Representation:
    """The representation kube-apiserver would choose for an `Accept` header (406 `NotAcceptable` if none). JSON
    and YAML only: a client that accepts nothing but protobuf gets the 406 a custom resource gets."""
    if not accept:
        return JSON
    asked_for_form = False
    for media, params in _media_ranges(accept):
        form = params.get("as")
        if form is not None:
            asked_for_form = True
            if (media in ("application/json", "application/yaml") and not watch
                    and form in ("Table", "PartialObjectMetadata", "PartialObjectMetadataList")
                    and params.get("g") == "meta.k8s.io" and params.get("v") in ("v1", "v1beta1")):
                return Representation(media.split("/")[1], form, params["v"])
            if (media == "application/json" and watch and form == "Table"
                    and params.get("g") == "meta.k8s.io" and params.get("v") in ("v1", "v1beta1")):
                return Representation("json", form, params["v"])
            continue
        if media in ("application/json", "*/*", "application/*"):
            return JSON
        if media == "application/yaml" and not watch:
            return Representation("yaml")
    if watch:
        raise ApiError(406, f"only the following media types are accepted: {_WATCH_TYPES}", "NotAcceptable")
    if builtin and not asked_for_form:
        raise ApiError(406, f"406: Not Acceptable\n\nAvailable representations: {_RESOURCE_TYPES}, {_WATCH_TYPES}",
                       "NotAcceptable", {})
    raise ApiError(406, f"only the following media types are accepted: {_RESOURCE_TYPES}", "NotAcceptable")

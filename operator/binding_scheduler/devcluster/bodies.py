"""Request bodies: JSON, or YAML (`application/yaml` and apply patches); a body in another media type waits for
the route, for the kubectl package to decode (protobuf bodies of the built-in kinds) or refuse (415)."""

from __future__ import annotations

from typing import Any

import yaml

from .jsontext import loads
from .patch import APPLY_PATCH, JSON_PATCH, MERGE_PATCH, STRATEGIC_PATCH


class Undecoded:
    """A body whose decoding waits for the route: the kubectl package decodes protobuf bodies of built-in kinds and
    refuses the rest (415, worded by verb and kind as kube-apiserver words it)."""

    def __init__(self, content_type: str, raw: bytes) -> None:
        self.content_type, self.raw = content_type, raw


_JSON_BODIES = ("", "application/json", MERGE_PATCH, JSON_PATCH, STRATEGIC_PATCH)


def parse_body(raw: bytes, content_type: str) -> tuple[Any, str | None]:
    """The request body as JSON values (YAML for `application/yaml` and apply patches), or why it is not one.
    A body in another media type is kept for the kubectl package to decode once the route is known."""
    if not raw:
        return None, None
    if content_type not in (*_JSON_BODIES, "application/yaml", APPLY_PATCH):
        return Undecoded(content_type, raw), None
    try:
        return loads(raw), None
    except ValueError as exc:
        if content_type not in ("application/yaml", APPLY_PATCH):
            return None, f"the body of the request could not be decoded as JSON: {exc}"
    except RecursionError:  # kube-apiserver limits nesting too, and answers 400
        return None, "the body of the request could not be decoded as JSON: nested too deeply"
    try:
        return yaml.safe_load(raw), None
    except yaml.YAMLError as exc:
        return None, f"the body of the request could not be decoded as YAML: {exc}"

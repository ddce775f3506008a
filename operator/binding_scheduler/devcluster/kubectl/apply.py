"""Server-side apply (`PATCH` with `application/apply-patch+yaml`): the checks of the configuration, then a create
or an update of the store whose managedFields the apply has set."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..errors import ApiError, bad_request, not_found
from ..objects import now_rfc3339
from ..resources import ResourceType
from . import managed

if TYPE_CHECKING:
    from ..store import Obj, Store


def _check(rt: ResourceType, name: str, config: Any) -> None:
    """kube-apiserver's refusals of a configuration: not this kind (400), another name (400), fields the schema
    does not declare (500, as its typed patch fails)."""
    if not isinstance(config, Mapping):
        raise bad_request("invalid object type: /, Kind=")
    group, _, version = str(config.get("apiVersion") or "").rpartition("/")
    if (config.get("apiVersion"), config.get("kind")) != (rt.api_version, rt.kind):
        raise bad_request(f"invalid object type: {group}/{version}, Kind={config.get('kind') or ''}")
    body_name = (config.get("metadata") or {}).get("name")
    if body_name is not None and body_name != name:
        raise bad_request(f"the name of the object ({body_name}) does not match the name on the URL ({name})")
    unknown = rt.schema.unknown_fields(config) if rt.schema is not None else []
    if unknown:
        where = f"{(config.get('metadata') or {}).get('namespace') or ''}/{name}; {rt.group}/{rt.version}, " \
                f"Kind={rt.kind}"
        problems = [f".{path}: field not declared in schema" for path in unknown]
        detail = problems[0] if len(problems) == 1 else "\n".join(["errors:", *(f"  {p}" for p in problems)])
        raise ApiError(500, f"failed to create typed patch object ({where}): {detail}", "InternalError")


def apply(
    store: Store, rt: ResourceType, name: str, config: Any, *, namespace: str | None, subresource: str | None,
    manager: str, force: bool, dry_run: bool,
) -> tuple[Obj, bool]:
    """Apply `config` as `manager`: the object, and whether it was created. 409 on conflicts with other managers
    unless `force`."""
    _check(rt, name, config)
    old = store.find(rt, name, namespace)
    now = now_rfc3339()
    if old is None:
        if subresource is not None:
            raise not_found(rt.plural, rt.group, name)
        new = managed.apply(rt, None, config, manager, "", force, now)
        new.setdefault("metadata", {})["name"] = name
        owned = new["metadata"].pop("managedFields", [])
        return store.create(rt, new, namespace, dry_run=dry_run, managed_fields=owned), True
    new = managed.apply(rt, old, config, manager, subresource or "", force, now)
    return store.write_applied(rt, old, new, subresource, dry_run=dry_run), False

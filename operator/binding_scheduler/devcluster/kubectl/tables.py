"""What kube-apiserver answers to `Accept: application/json;as=Table;v=v1;g=meta.k8s.io` (kubectl get): a
`meta.k8s.io` Table of a printer's columns (for a CRD its `additionalPrinterColumns`, evaluated with kube's
JSONPath, dates shown as ages), and the PartialObjectMetadata of `as=PartialObjectMetadata`."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from .jsonpath import go_text, jsonpath

Obj = Mapping[str, Any]

NAME_DESCRIPTION = (
    "Name must be unique within a namespace. Is required when creating resources, although some resources may "
    "allow a client to request the generation of an appropriate name automatically. Name is primarily intended for "
    "creation idempotence and configuration definition. Cannot be updated. More info: "
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
)
CREATED_DESCRIPTION = (
    "CreationTimestamp is a timestamp representing the server time when this object was created. It is not "
    "guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It "
    "is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More "
    "info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"
)

# ---- ages and cells ----------------------------------------------------------------------------------------------


def human_duration(seconds: float) -> str:
    """apimachinery's `duration.HumanDuration`."""
    whole = int(seconds)
    if whole < -1:
        return "<invalid>"
    if whole < 0:
        return "0s"
    if whole < 120:
        return f"{whole}s"
    minutes = whole // 60
    if minutes < 10:
        rest = whole % 60
        return f"{minutes}m" if rest == 0 else f"{minutes}m{rest}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = whole // 3600
    if hours < 8:
        rest = minutes % 60
        return f"{hours}h" if rest == 0 else f"{hours}h{rest}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        rest = hours % 24
        return f"{hours // 24}d" if rest == 0 else f"{hours // 24}d{rest}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        rest = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if rest == 0 else f"{hours // 24 // 365}y{rest}d"
    return f"{hours // 24 // 365}y"


def _parse_time(text: Any) -> datetime | None:
    if not isinstance(text, str) or not text:
        return None
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def age(timestamp: Any) -> str:
    """A timestamp as kube's printers show it: the time since then, `<unknown>` when absent."""
    parsed = _parse_time(timestamp)
    if parsed is None:
        return "<unknown>"
    return human_duration((datetime.now(UTC) - parsed).total_seconds())




def _cell(column_type: str, value: Any) -> Any:
    """The apiextensions table convertor's cell for a non-string column."""
    if value is None:
        return None
    if column_type == "integer" and isinstance(value, int | float) and not isinstance(value, bool):
        return int(value)
    if column_type == "number" and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if column_type == "boolean" and isinstance(value, bool):
        return value
    if column_type == "date" and isinstance(value, str):
        return "<invalid>" if _parse_time(value) is None else age(value)
    return None


# ---- columns ------------------------------------------------------------------------------------------------------


def column(name: str, description: str, *, type_: str = "string", format_: str = "", priority: int = 0) -> dict[
        str, Any]:
    return {"name": name, "type": type_, "format": format_, "description": description, "priority": priority}


@dataclass(frozen=True)
class Printer:
    """The columns of a kind and how one object becomes its cells."""

    columns: Sequence[dict[str, Any]]
    cells: Callable[[Obj], list[Any]]


def crd_printer(columns: Sequence[Mapping[str, Any]]) -> Printer:
    """The apiextensions table convertor for a CRD version's `additionalPrinterColumns` (kube-apiserver serves
    an `Age` column when a CRD declares none)."""
    if not columns:
        columns = [{"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp",
                    "description": CREATED_DESCRIPTION}]
    headers = [column("Name", NAME_DESCRIPTION, format_="name")]
    headers += [column(str(c["name"]), str(c.get("description") or
                                           f"Custom resource definition column (in JSONPath format): {c['jsonPath']}"),
                       type_=str(c.get("type", "string")), format_=str(c.get("format", "")),
                       priority=int(c.get("priority", 0))) for c in columns]
    paths = [(str(c["jsonPath"]), str(c.get("type", "string"))) for c in columns]

    def cells(obj: Obj) -> list[Any]:
        row: list[Any] = [obj["metadata"]["name"]]
        for path, column_type in paths:
            results = jsonpath(obj, path)
            if not results:
                row.append(None)
            elif column_type == "string":
                row.append(go_text(results[0]))
            else:
                row.append(_cell(column_type, results[0]))
        return row

    return Printer(headers, cells)


DEFAULT_PRINTER = Printer(
    [column("Name", NAME_DESCRIPTION, format_="name"), column("Created At", CREATED_DESCRIPTION, type_="date")],
    lambda obj: [obj["metadata"]["name"], obj["metadata"].get("creationTimestamp")],
)



# ---- tables -----------------------------------------------------------------------------------------------------


def partial(obj: Obj, version: str) -> dict[str, Any]:
    return {"kind": "PartialObjectMetadata", "apiVersion": f"meta.k8s.io/{version}",
            "metadata": dict(obj.get("metadata") or {})}


def table(
    printer: Printer, objects: Sequence[Obj], metadata: Mapping[str, Any], *, version: str = "v1",
    include_object: str = "Metadata", headers: bool = True,
) -> dict[str, Any]:
    """A `Table` of `objects` (`includeObject`: `None`, `Metadata` (default) or `Object`)."""
    rows = []
    for obj in objects:
        row: dict[str, Any] = {"cells": printer.cells(obj)}
        if include_object == "Object":
            row["object"] = obj
        elif include_object == "None":
            row["object"] = None
        else:
            row["object"] = partial(obj, version)
        rows.append(row)
    return {"kind": "Table", "apiVersion": f"meta.k8s.io/{version}", "metadata": dict(metadata),
            "columnDefinitions": list(printer.columns) if headers else None, "rows": rows}

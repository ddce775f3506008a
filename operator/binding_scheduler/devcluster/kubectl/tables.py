"""What kube-apiserver answers to `Accept: application/json;as=Table;v=v1;g=meta.k8s.io` (kubectl get): a
`meta.k8s.io` Table whose columns are, for custom resources, the CRD's `additionalPrinterColumns` (evaluated
with kube's JSONPath, dates shown as ages), and for built-in kinds the columns of kube-apiserver's own printers
(Namespace, Event, Service, Lease) or its default (Name, Created At); and `as=PartialObjectMetadata`."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from ..resources import ResourceType

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

# ---- ages and JSONPath ------------------------------------------------------------------------------------------


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


_TOKEN = re.compile(
    r"""\.\.(?P<deep>[A-Za-z0-9_-]+)|\.(?P<field>[A-Za-z0-9_-]+)|\[\s*'(?P<quoted>[^']*)'\s*\]"""
    r"""|\[\s*(?P<index>-?\d+)\s*\]|\[\s*\*\s*\]|\[\?\((?P<filter>.*?)\)\]"""
)
_FILTER = re.compile(r"""\s*@((?:\.[A-Za-z0-9_-]+)*)\s*(==|!=|<=|>=|<|>)\s*(?:"([^"]*)"|'([^']*)'|(\S+))\s*""")


def _walk(value: Any, fields: str) -> list[Any]:
    node = value
    for key in [part for part in fields.split(".") if part]:
        if not isinstance(node, Mapping) or key not in node:
            return []
        node = node[key]
    return [node]


def _descend(value: Any, key: str) -> list[Any]:
    found = []
    if isinstance(value, Mapping):
        if key in value:
            found.append(value[key])
        for item in value.values():
            found.extend(_descend(item, key))
    elif isinstance(value, list):
        for item in value:
            found.extend(_descend(item, key))
    return found


def _compare(left: Any, operator: str, literal: str, quoted: bool) -> bool:
    right: Any = literal
    if not quoted:
        try:
            right = json.loads(literal)
        except ValueError:
            right = literal
    try:
        return bool({"==": left == right, "!=": left != right}.get(operator) if operator in ("==", "!=") else
                    {"<": left < right, ">": left > right, "<=": left <= right, ">=": left >= right}[operator])
    except TypeError:
        return False


def jsonpath(obj: Any, expression: str) -> list[Any]:
    """kube's JSONPath (with missing keys allowed) for the simple paths printer columns use: `.a.b`, `['a.b']`,
    `[0]`, `[*]`, `..a` and filters `[?(@.type=="Ready")]`. Returns every result, in order."""
    path = expression.strip()
    if path.startswith("{") and path.endswith("}"):
        path = path[1:-1]
    if path.startswith("$"):
        path = path[1:]
    current = [obj]
    position = 0
    while position < len(path):
        match = _TOKEN.match(path, position)
        if match is None:
            return []
        position = match.end()
        following: list[Any] = []
        for value in current:
            if match.group("deep") is not None:
                following.extend(_descend(value, match.group("deep")))
            elif match.group("field") is not None or match.group("quoted") is not None:
                key = match.group("field") if match.group("field") is not None else match.group("quoted")
                if isinstance(value, Mapping) and key in value:
                    following.append(value[key])
            elif match.group("index") is not None:
                index = int(match.group("index"))
                if isinstance(value, list) and -len(value) <= index < len(value):
                    following.append(value[index])
            elif match.group("filter") is not None:
                condition = _FILTER.fullmatch(match.group("filter"))
                if condition is None or not isinstance(value, list):
                    continue
                fields, operator, double, single, bare = condition.groups()
                literal = double if double is not None else single if single is not None else bare
                for item in value:
                    if any(_compare(found, operator, literal, bare is None) for found in _walk(item, fields)):
                        following.append(item)
            elif isinstance(value, list):  # [*]
                following.extend(value)
            elif isinstance(value, Mapping):
                following.extend(value.values())
        current = following
    return current


def _go_text(value: Any) -> str:
    """How kube's JSONPath prints one result: strings bare, numbers and booleans as Go prints them, maps and
    lists as compact JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e21 else repr(value)
    if value is None:
        return "<nil>"
    if isinstance(value, dict | list):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


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
                row.append(_go_text(results[0]))
            else:
                row.append(_cell(column_type, results[0]))
        return row

    return Printer(headers, cells)


DEFAULT_PRINTER = Printer(
    [column("Name", NAME_DESCRIPTION, format_="name"), column("Created At", CREATED_DESCRIPTION, type_="date")],
    lambda obj: [obj["metadata"]["name"], obj["metadata"].get("creationTimestamp")],
)


def _namespace_cells(obj: Obj) -> list[Any]:
    return [obj["metadata"]["name"], (obj.get("status") or {}).get("phase", ""),
            age(obj["metadata"].get("creationTimestamp"))]


def _lease_cells(obj: Obj) -> list[Any]:
    return [obj["metadata"]["name"], (obj.get("spec") or {}).get("holderIdentity") or "",
            age(obj["metadata"].get("creationTimestamp"))]


def _service_external_ip(spec: Mapping[str, Any], status: Mapping[str, Any]) -> str:
    kind = spec.get("type", "")
    external = list(spec.get("externalIPs") or ())
    if kind in ("ClusterIP", "NodePort"):
        return ",".join(external) if external else "<none>"
    if kind == "LoadBalancer":
        ingress = (status.get("loadBalancer") or {}).get("ingress") or ()
        balancers = sorted({i.get("ip") or i.get("hostname") for i in ingress if i.get("ip") or i.get("hostname")})
        if external:
            return ",".join([*balancers, *external])
        return ",".join(balancers) if balancers else "<pending>"
    if kind == "ExternalName":
        return str(spec.get("externalName", ""))
    return "<unknown>"


def _service_cells(obj: Obj) -> list[Any]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    cluster_ips = spec.get("clusterIPs") or ()
    ports = []
    for port in spec.get("ports") or ():
        protocol = port.get("protocol", "")
        node_port = port.get("nodePort")
        ports.append(f"{port.get('port')}:{node_port}/{protocol}" if node_port else f"{port.get('port')}/{protocol}")
    selector = spec.get("selector") or {}
    return [obj["metadata"]["name"], spec.get("type", ""), cluster_ips[0] if cluster_ips else "<none>",
            _service_external_ip(spec, status), ",".join(ports) or "<none>",
            age(obj["metadata"].get("creationTimestamp")),
            ",".join(f"{key}={selector[key]}" for key in sorted(selector)) or "<none>"]


def _event_cells(obj: Obj) -> list[Any]:
    first = age(obj.get("firstTimestamp")) if obj.get("firstTimestamp") else age(obj.get("eventTime"))
    last = age(obj.get("lastTimestamp")) if obj.get("lastTimestamp") else first
    count = obj.get("count") or 0
    series = obj.get("series")
    if series:
        last, count = age(series.get("lastObservedTime")), series.get("count") or 0
    elif count == 0:
        count = 1
    involved = obj.get("involvedObject") or {}
    kind = str(involved.get("kind", "")).lower()
    target = f"{kind}/{involved['name']}" if involved.get("name") else kind
    source = obj.get("source") or {}
    component = source.get("component") or obj.get("reportingComponent") or ""
    instance = source.get("host") or obj.get("reportingInstance") or ""
    return [last, obj.get("type", ""), obj.get("reason", ""), target, involved.get("fieldPath", ""),
            f"{component}, {instance}" if instance else component, str(obj.get("message", "")).strip(), first,
            int(count), obj["metadata"]["name"]]


_AGE = column("Age", CREATED_DESCRIPTION)
_NAME = column("Name", NAME_DESCRIPTION, format_="name")

BUILTIN_PRINTERS: dict[tuple[str, str], Printer] = {
    ("", "namespaces"): Printer([_NAME, column("Status", "The status of the namespace"), _AGE], _namespace_cells),
    ("coordination.k8s.io", "leases"): Printer([_NAME, column(
        "Holder", "holderIdentity contains the identity of the holder of a current lease. If Coordinated Leader "
                  "Election is used, the holder identity must be equal to the elected LeaseCandidate.metadata.name "
                  "field."), _AGE], _lease_cells),
    ("", "services"): Printer([
        _NAME,
        column("Type", "type determines how the Service is exposed. Defaults to ClusterIP. Valid options are "
                       "ExternalName, ClusterIP, NodePort, and LoadBalancer. \"ClusterIP\" allocates a "
                       "cluster-internal IP address for load-balancing to endpoints. Endpoints are determined by the "
                       "selector or if that is not specified, by manual construction of an Endpoints object or "
                       "EndpointSlice objects. If clusterIP is \"None\", no virtual IP is allocated and the endpoints "
                       "are published as a set of endpoints rather than a virtual IP. \"NodePort\" builds on "
                       "ClusterIP and allocates a port on every node which routes to the same endpoints as the "
                       "clusterIP. \"LoadBalancer\" builds on NodePort and creates an external load-balancer (if "
                       "supported in the current cloud) which routes to the same endpoints as the clusterIP. "
                       "\"ExternalName\" aliases this service to the specified externalName. Several other fields do "
                       "not apply to ExternalName services. More info: https://kubernetes.io/docs/concepts/"
                       "services-networking/service/#publishing-services-service-types"),
        column("Cluster-IP", "clusterIP is the IP address of the service and is usually assigned randomly. If an "
                             "address is specified manually, is in-range (as per system configuration), and is not in "
                             "use, it will be allocated to the service; otherwise creation of the service will fail. "
                             "This field may not be changed through updates unless the type field is also being "
                             "changed to ExternalName (which requires this field to be blank) or the type field is "
                             "being changed from ExternalName (in which case this field may optionally be specified, "
                             "as describe above).  Valid values are \"None\", empty string (\"\"), or a valid IP "
                             "address. Setting this to \"None\" makes a \"headless service\" (no virtual IP), which is "
                             "useful when direct endpoint connections are preferred and proxying is not required.  "
                             "Only applies to types ClusterIP, NodePort, and LoadBalancer. If this field is specified "
                             "when creating a Service of type ExternalName, creation will fail. This field will be "
                             "wiped when updating a Service to type ExternalName. More info: https://kubernetes.io/"
                             "docs/concepts/services-networking/service/#virtual-ips-and-service-proxies"),
        column("External-IP", "externalIPs is a list of IP addresses for which nodes in the cluster will also accept "
                              "traffic for this service.  These IPs are not managed by Kubernetes.  The user is "
                              "responsible for ensuring that traffic arrives at a node with this IP.  A common example "
                              "is external load-balancers that are not part of the Kubernetes system."),
        column("Port(s)", "The list of ports that are exposed by this service. More info: https://kubernetes.io/docs/"
                          "concepts/services-networking/service/#virtual-ips-and-service-proxies"),
        _AGE,
        column("Selector", "Route service traffic to pods with label keys and values matching this selector. If "
                           "empty or not present, the service is assumed to have an external process managing its "
                           "endpoints, which Kubernetes will not modify. Only applies to types ClusterIP, NodePort, "
                           "and LoadBalancer. Ignored if type is ExternalName. More info: https://kubernetes.io/docs/"
                           "concepts/services-networking/service/", priority=1),
    ], _service_cells),
    ("", "events"): Printer([
        column("Last Seen", "The time at which the most recent occurrence of this event was recorded."),
        column("Type", "Type of this event (Normal, Warning), new types could be added in the future"),
        column("Reason", "This should be a short, machine understandable string that gives the reason for the "
                         "transition into the object's current status."),
        column("Object", "The object that this event is about."),
        column("Subobject", "If referring to a piece of an object instead of an entire object, this string should "
                            "contain a valid JSON/Go field access statement, such as "
                            "desiredState.manifest.containers[2]. For example, if the object reference is to a "
                            "container within a pod, this would take on a value like: \"spec.containers{name}\" "
                            "(where \"name\" refers to the name of the container that triggered the event) or if no "
                            "container name is specified \"spec.containers[2]\" (container with index 2 in this "
                            "pod). This syntax is chosen only to have some well-defined way of referencing a part of "
                            "an object.", priority=1),
        column("Source", "The component reporting this event. Should be a short machine understandable string.",
               priority=1),
        column("Message", "A human-readable description of the status of this operation."),
        column("First Seen", "The time at which the event was first recorded. (Time of server receipt is in "
                             "TypeMeta.)", priority=1),
        column("Count", "The number of times this event has occurred.", priority=1),
        column("Name", NAME_DESCRIPTION, format_="name", priority=1),
    ], _event_cells),
}


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


def printer_for(rt: ResourceType) -> Printer:
    """The columns of `kubectl get` for a type: its CRD's, or kube-apiserver's own for a built-in kind."""
    if rt.custom:
        return crd_printer(rt.printer_columns)
    return BUILTIN_PRINTERS.get(rt.storage_key, DEFAULT_PRINTER)

"""The printer of each served type: its CRD's `additionalPrinterColumns`, or for the built-in kinds the columns of
kube-apiserver's own printers (Namespace, Event, Service, Lease) or its default (Name, Created At)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..resources import ResourceType
from .tables import CREATED_DESCRIPTION, DEFAULT_PRINTER, NAME_DESCRIPTION, Obj, Printer, age, column, crd_printer


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


def printer_for(rt: ResourceType) -> Printer:
    """The columns of `kubectl get` for a type: its CRD's, or kube-apiserver's own for a built-in kind."""
    if rt.custom:
        return crd_printer(rt.printer_columns)
    return BUILTIN_PRINTERS.get(rt.storage_key, DEFAULT_PRINTER)

"""Where a cluster's estimator listens: static endpoints first, then Karmada's Service rule
(`pkg/estimator/client/service.go: resolveCluster` and `findServicePort`; the Service name is
`pkg/util/names/names.go: GenerateEstimatorServiceName`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from .settings import EstimatorSettings

ServiceLookup = Callable[[str, str], Awaitable[Mapping[str, Any] | None]]
"""`(namespace, name) -> Service object as a dict, or None when the API server answers NotFound`."""


class DiscoveryError(Exception):
    """The estimator of a cluster cannot be located."""


def service_name(settings: EstimatorSettings, cluster: str) -> str:
    return f"{settings.service_prefix}-{cluster}"


def dns_targets(settings: EstimatorSettings, cluster: str) -> tuple[str, ...]:
    name, namespace, port = service_name(settings, cluster), settings.service_namespace, settings.port
    return (f"{name}.{namespace}.svc.cluster.local:{port}", f"{name}.{namespace}.svc:{port}")


def external_name_target(settings: EstimatorSettings, name: str, service: Mapping[str, Any]) -> str:
    """The one address an `ExternalName` Service points at, with Karmada's error texts otherwise."""
    spec = service.get("spec") or {}
    kind = spec.get("type") or "ClusterIP"
    if kind != "ExternalName":
        raise DiscoveryError(f'unsupported service type "{kind}"')
    for port in spec.get("ports") or ():
        if port.get("port") != settings.port:
            continue
        target_port = port.get("targetPort", settings.port)
        if isinstance(target_port, bool) or not isinstance(target_port, int):
            raise DiscoveryError(f'targetPort {target_port!r} of service "{name}" is not a port number')
        return f"{spec.get('externalName', '')}:{target_port}"
    raise DiscoveryError(f'no service port {settings.port} found for service "{name}"')


async def candidate_targets(
    settings: EstimatorSettings, cluster: str, lookup: ServiceLookup | None
) -> tuple[str, ...]:
    """The addresses to dial for `cluster`, in order; the first that connects wins.

    Without a `lookup` (no API server to ask) the Service is treated as not found.
    """
    static = settings.endpoints.get(cluster)
    if static:
        return (static,)
    if lookup is None:
        return dns_targets(settings, cluster)
    name = service_name(settings, cluster)
    try:
        service = await lookup(settings.service_namespace, name)
    except DiscoveryError:
        raise
    except Exception as exc:
        raise DiscoveryError(f'cannot get service "{settings.service_namespace}/{name}": {exc}') from exc
    if service is None:
        return dns_targets(settings, cluster)
    return (external_name_target(settings, name, service),)

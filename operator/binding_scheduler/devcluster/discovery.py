"""Discovery documents: /version, /api, /api/v1, /apis, /apis/GROUP, /apis/GROUP/VERSION."""

from __future__ import annotations

import sys
from typing import Any

from .resources import SUBRESOURCE_VERBS, Registry, ResourceType

# The Kubernetes release whose behaviour devcluster is held to (tests/conformance runs against it), with the
# build metadata a distribution adds (as k3s does: v1.35.4+k3s1): kubectl 1.34 to 1.36 see no version skew.
VERSION_INFO: dict[str, str] = {
    "major": "1",
    "minor": "35",
    "emulationMajor": "1",
    "emulationMinor": "35",
    "minCompatibilityMajor": "1",
    "minCompatibilityMinor": "34",
    "gitVersion": "v1.35.4+devcluster",
    "gitCommit": "0000000000000000000000000000000000000000",
    "gitTreeState": "clean",
    "buildDate": "1970-01-01T00:00:00Z",
    "goVersion": f"python{sys.version_info.major}.{sys.version_info.minor}",
    "compiler": "gc",
    "platform": "linux/amd64",
}


def api_versions(server_address: str) -> dict[str, Any]:
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
    }


def _group_doc(name: str, versions: list[str]) -> dict[str, Any]:
    entries = [{"groupVersion": f"{name}/{v}", "version": v} for v in versions]
    return {"name": name, "versions": entries, "preferredVersion": entries[0]}


def api_group_list(registry: Registry) -> dict[str, Any]:
    groups = [_group_doc(g, vs) for g, vs in registry.groups().items() if g]
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def api_group(registry: Registry, group: str) -> dict[str, Any] | None:
    versions = registry.groups().get(group)
    if not group or not versions:
        return None
    return {"kind": "APIGroup", "apiVersion": "v1", **_group_doc(group, versions)}


def _resource_entry(rtype: ResourceType) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": rtype.plural,
        "singularName": rtype.singular,
        "namespaced": rtype.namespaced,
        "kind": rtype.kind,
        "verbs": list(rtype.verbs),
    }
    if rtype.short_names:
        entry["shortNames"] = list(rtype.short_names)
    if rtype.categories:
        entry["categories"] = list(rtype.categories)
    return entry


def api_resource_list(registry: Registry, group: str, version: str) -> dict[str, Any] | None:
    types = registry.in_group_version(group, version)
    if not types:
        return None
    resources: list[dict[str, Any]] = []
    for rtype in sorted(types, key=lambda t: t.plural):
        resources.append(_resource_entry(rtype))
        if rtype.has_status:
            resources.append({
                "name": f"{rtype.plural}/status",
                "singularName": "",
                "namespaced": rtype.namespaced,
                "kind": rtype.kind,
                "verbs": list(SUBRESOURCE_VERBS),
            })
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": f"{group}/{version}" if group else version,
        "resources": resources,
    }

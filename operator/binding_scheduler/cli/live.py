"""Reading a live plane for `simulate`, `explain` and `placements`: every Cluster, ResourceBinding and
ClusterResourceBinding of karmada-apiserver, through the reader files go through. Read-only by construction:
the client's write gate is closed before the first request, so a write would raise before it reached the
network; no Lease is taken."""

from __future__ import annotations

import sys
from typing import Any

from ..kube.client import ApiClient
from ..kube.connection import ConfigError, load_connection
from ..kube.errors import ApiError, KubeError, NotFound
from ..kube.gate import WriteGate
from .inputs import InputReader, Inputs

USER_AGENT = "binding-scheduler-cli"
PAGE = 500

LIVE_KINDS = (
    ("cluster.karmada.io/v1alpha1", "Cluster", "clusters"),
    ("work.karmada.io/v1alpha2", "ResourceBinding", "resourcebindings"),
    ("work.karmada.io/v1alpha2", "ClusterResourceBinding", "clusterresourcebindings"),
)


class LiveReadError(Exception):
    """The plane could not be read; the message names the server and what failed."""


async def read_live(kubeconfig: str | None, context: str | None = None, *, strict: bool = False) -> Inputs:
    """Every Cluster and binding the API server `kubeconfig` points at serves, listed in pages."""
    try:
        connection = load_connection(kubeconfig, context)
    except ConfigError as error:
        raise LiveReadError(str(error)) from None
    gate = WriteGate()
    gate.close("simulate, explain and placements only read")
    reader = InputReader(strict=strict)
    async with ApiClient(connection, gate, user_agent=USER_AGENT) as client:
        for api_version, kind, plural in LIVE_KINDS:
            items = await _list(client, api_version, plural)
            reader.add(connection.server, (_with_kind(item, api_version, kind) for item in items))
    return reader.inputs


async def _list(client: ApiClient, api_version: str, plural: str) -> list[Any]:
    server = client.connection.server
    path = f"/apis/{api_version}/{plural}"
    try:
        answer = await client.list(path, {"limit": PAGE})
    except NotFound:
        raise LiveReadError(f"{server} does not serve {api_version} {plural} (is --kubeconfig karmada-apiserver's? "
                            "The host cluster's kubeconfig, or ~/.kube/config, is not)") from None
    except ApiError as error:
        raise LiveReadError(f"{server}: GET {path}: {error}") from None
    except KubeError as error:
        raise LiveReadError(f"cannot read {server}: {error}") from None
    items = answer.get("items")
    return items if isinstance(items, list) else []


def _with_kind(item: Any, api_version: str, kind: str) -> Any:
    """A list's item as the object it is: the API server leaves kind and apiVersion out of list items."""
    if not isinstance(item, dict):
        return item
    return {"apiVersion": api_version, "kind": kind, **item}


async def live_or_exit(kubeconfig: str | None, context: str | None, *, strict: bool = False) -> Inputs:
    """`read_live` as a command's step: a failure is one `error:` line and exit 1 (a run-time failure)."""
    try:
        return await read_live(kubeconfig, context, strict=strict)
    except LiveReadError as error:
        print(f"error: {error}", file=sys.stderr)
        raise SystemExit(1) from None

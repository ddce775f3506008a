"""What `run` checks on the API server before it takes the Lease: that it is karmada-apiserver (it serves Karmada's
clusters and bindings), that our SchedulerConfiguration CRD is installed when `--config` names one, and that the
Lease's namespace exists. Read-only: discovery documents and one namespace, nothing written.

Without these checks a kubeconfig for the host cluster (or the default `~/.kube/config`) took a Lease there and
ended seconds later in a double traceback (`404 page not found`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..kube.client import ApiClient
from ..kube.errors import ApiError, Forbidden, KubeError, NotFound, TransportError

KARMADA_APIS = (
    ("cluster.karmada.io", "v1alpha1", "clusters"),
    ("work.karmada.io", "v1alpha2", "resourcebindings"),
)
CONFIG_API = ("config.binding-scheduler.io", "v1alpha1", "schedulerconfigurations")


class PreflightError(Exception):
    """The API server is not one the scheduler can run against; the message says what is missing and why."""


async def preflight(client: ApiClient, *, namespace: str, config_name: str | None) -> None:
    """Raise `PreflightError` naming the first thing missing, else return. Only GETs."""
    server = client.connection.server
    for group, version, plural in KARMADA_APIS:
        if not await _serves(client, group, version, plural):
            raise PreflightError(f"{server} does not serve {group}/{version} {plural} (is --kubeconfig "
                                 "karmada-apiserver's? The host cluster's kubeconfig, or ~/.kube/config, is not)")
    if config_name and not await _serves(client, *CONFIG_API):
        raise PreflightError(f"{server} has no SchedulerConfiguration CRD ({CONFIG_API[2]}.{CONFIG_API[0]}), so "
                             f"--config {config_name} cannot be read: install it with `kubectl apply -f crds/` "
                             "against karmada-apiserver (the chart does it too), or start with --config-file")
    await _namespace_exists(client, namespace)


async def _serves(client: ApiClient, group: str, version: str, plural: str) -> bool:
    try:
        document = await _get(client, f"/apis/{group}/{version}")
    except NotFound:
        return False
    except Forbidden:
        return True  # discovery refused: nothing to tell from it, the watches will say
    return any(isinstance(r, Mapping) and r.get("name") == plural for r in document.get("resources") or ())


async def _namespace_exists(client: ApiClient, namespace: str) -> None:
    """A missing namespace is an error; one we may not read (the chart's rules grant no namespaces) is assumed."""
    try:
        await _get(client, f"/api/v1/namespaces/{namespace}")
    except NotFound:
        raise PreflightError(f"namespace {namespace} (--namespace, where the Lease and the configuration live) does "
                             f"not exist on {client.connection.server}: create it, or name another") from None
    except Forbidden:
        return


async def _get(client: ApiClient, path: str) -> dict[str, Any]:
    """`path`'s document; NotFound and Forbidden pass through, every other failure is a `PreflightError`."""
    server = client.connection.server
    try:
        return await client.get(path)
    except (NotFound, Forbidden):
        raise
    except TransportError as error:
        raise PreflightError(f"cannot reach {server}: {error}") from None
    except ApiError as error:
        if error.status == 401:
            raise PreflightError(f"{server} refused the credentials of --kubeconfig (401 Unauthorized)") from None
        raise PreflightError(f"{server} answered GET {path} with {error}") from None
    except KubeError as error:
        raise PreflightError(f"{server}: GET {path}: {error}") from None

"""What `run` checks on the API server before it takes the Lease: that it is karmada-apiserver (it serves Karmada's
clusters and bindings), and that our SchedulerConfiguration CRD is installed when `--config` names one. Read-only:
discovery documents, which every authenticated user may read; nothing written.

Only a definite answer refuses the start (a discovery 404, a 401). An API server that does not answer yet, or
answers 5xx or 429 (Karmada's aggregated API server still starting during an install), is asked again with a
backoff, as the standby would wait for it anyway: a pod must not crash-loop through an outage.

Without these checks a kubeconfig for the host cluster (or the default `~/.kube/config`) took a Lease there and
ended seconds later in a double traceback (`404 page not found`)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any

from ..kube.client import ApiClient
from ..kube.errors import ApiError, Forbidden, KubeError, NotFound, ServerError, TooManyRequests, TransportError

logger = logging.getLogger(__name__)

RETRY_BACKOFFS = (1.0, 2.0, 4.0, 8.0, 16.0)
RETRY_CAP = 30.0

KARMADA_APIS = (
    ("cluster.karmada.io", "v1alpha1", "clusters"),
    ("work.karmada.io", "v1alpha2", "resourcebindings"),
)
CONFIG_API = ("config.binding-scheduler.io", "v1alpha1", "schedulerconfigurations")


class PreflightError(Exception):
    """The API server is not one the scheduler can run against; the message says what is missing and why."""


async def preflight(client: ApiClient, *, config_name: str | None) -> None:
    """Raise `PreflightError` naming the first thing missing, else return. Only GETs; a server that does not
    answer (or answers 5xx/429) is asked again until it does, for as long as it takes (cancellable)."""
    server = client.connection.server
    for group, version, plural in KARMADA_APIS:
        if not await _serves(client, group, version, plural):
            raise PreflightError(f"{server} does not serve {group}/{version} {plural} (is --kubeconfig "
                                 "karmada-apiserver's? The host cluster's kubeconfig, or ~/.kube/config, is not)")
    if config_name and not await _serves(client, *CONFIG_API):
        raise PreflightError(f"{server} has no SchedulerConfiguration CRD ({CONFIG_API[2]}.{CONFIG_API[0]}), so "
                             f"--config {config_name} cannot be read: install it with `kubectl apply -f crds/` "
                             "against karmada-apiserver (the chart does it too), or start with --config-file")


async def _serves(client: ApiClient, group: str, version: str, plural: str) -> bool:
    try:
        document = await _get(client, f"/apis/{group}/{version}")
    except NotFound:
        return False
    except Forbidden:
        return True  # discovery refused: nothing to tell from it, the watches will say
    return any(isinstance(r, Mapping) and r.get("name") == plural for r in document.get("resources") or ())


async def _get(client: ApiClient, path: str) -> dict[str, Any]:
    """`path`'s document; NotFound and Forbidden pass through, a 401 is a `PreflightError`, and no answer, a 5xx
    or a 429 is asked again after a backoff (one WARNING line each time)."""
    server = client.connection.server
    attempt = 0
    while True:
        try:
            return await client.get(path)
        except (NotFound, Forbidden):
            raise
        except (TransportError, ServerError, TooManyRequests) as error:
            delay = RETRY_BACKOFFS[attempt] if attempt < len(RETRY_BACKOFFS) else RETRY_CAP
            cause = f"cannot reach {server}: {error}" if isinstance(error, TransportError) else (
                f"{server} answered GET {path} with {error}")
            logger.warning("before taking the lease: %s; asking again in %gs", cause, delay)
            attempt += 1
            await asyncio.sleep(delay)
        except ApiError as error:
            if error.status == 401:
                raise PreflightError(f"{server} refused the credentials of --kubeconfig (401 Unauthorized)") from None
            raise PreflightError(f"{server} answered GET {path} with {error}") from None
        except KubeError as error:
            raise PreflightError(f"{server}: GET {path}: {error}") from None

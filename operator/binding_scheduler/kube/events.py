"""Kubernetes Events (core/v1) recorded by our own client, best effort.

An event that cannot be posted is logged (the first failure of each event reason at WARNING, with the involved
object; later ones at DEBUG) and dropped: an event never fails a pass. A closed write gate and cancellation do
propagate, so shutdown stays write-free and prompt.
"""

from __future__ import annotations

import datetime
import logging
import socket
from collections.abc import Mapping
from typing import Any, Literal

from .client import ApiClient, resource_path
from .errors import KubeError

logger = logging.getLogger(__name__)

EventType = Literal["Normal", "Warning"]


def now_rfc3339() -> str:
    """Seconds precision, UTC, as metav1.Time is serialized."""
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def event_body(
    involved: Mapping[str, str], type_: EventType, reason: str, message: str, component: str, host: str,
    timestamp: str,
) -> dict[str, Any]:
    """A core/v1 Event about `involved`, named `<name>.<random>` by the server (generateName)."""
    namespace = involved.get("namespace") or "default"
    reference = {key: involved[key] for key in ("apiVersion", "kind", "namespace", "name", "uid")
                 if involved.get(key)}
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"generateName": f"{involved.get('name', '')}.", "namespace": namespace},
        "involvedObject": reference,
        "reason": reason,
        "message": message,
        "type": type_,
        "source": {"component": component, "host": host},
        "reportingComponent": component,
        "reportingInstance": host,
        "firstTimestamp": timestamp,
        "lastTimestamp": timestamp,
        "count": 1,
    }


class EventRecorder:
    """Posts Events with `source.component = component` (Karmada: the scheduler name)."""

    def __init__(self, client: ApiClient, component: str) -> None:
        self.client = client
        self.component = component
        self.host = socket.gethostname()
        self._logged_reasons: set[str] = set()
        self.failures = 0

    async def record(self, involved: Mapping[str, str], type: EventType, reason: str, message: str) -> None:
        """Post one Event; API and transport failures are logged and swallowed."""
        body = event_body(involved, type, reason, message, self.component, self.host, now_rfc3339())
        namespace = body["metadata"]["namespace"]
        try:
            await self.client.create(resource_path("", "v1", "events", namespace), body)
        except KubeError as exc:
            self.failures += 1
            what = (f"{involved.get('kind', '?')} {involved.get('namespace', '')}/{involved.get('name', '?')}"
                    .replace(" /", " "))
            level = logging.DEBUG if reason in self._logged_reasons else logging.WARNING
            self._logged_reasons.add(reason)
            logger.log(level, "could not record event %s (%s) on %s: %s", reason, type, what, exc)

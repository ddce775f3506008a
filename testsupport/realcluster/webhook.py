"""Faults on the real API server's side: a validating admission webhook the test serves and registers.

A write that matches a fault is held inside kube-apiserver (the webhook answers only when the test releases
it, at most `HOLD_LIMIT` seconds later) or refused with a status code of the test's choosing. The write is in
flight at the server the whole time, as a slow or failing API server would have it. The audit log still
records every request, so it stays the journal.
"""

from __future__ import annotations

import asyncio
import base64
import ssl
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from testsupport.realcluster.controlplane import ControlPlane, free_port
from testsupport.realcluster.kube import path_of

HOLD_LIMIT = 25.0  # kube-apiserver waits at most 30 s for a webhook


@dataclass
class Fault:
    """Writes whose `operation`/`resource`/`subresource`/`name` match (None matches anything)."""

    resource: str
    name: str | None = None
    subresource: str = ""
    operation: str = "UPDATE"
    hold: bool = False
    deny_code: int = 0
    times: int = 1
    hits: int = 0
    released: threading.Event = field(default_factory=threading.Event)
    _seen: threading.Condition = field(default_factory=threading.Condition)

    def matches(self, request: dict[str, Any]) -> bool:
        return (
            self.hits < self.times
            and request["operation"] == self.operation
            and request["resource"]["resource"] == self.resource
            and request.get("subResource", "") == self.subresource
            and (self.name is None or request.get("name") == self.name)
        )

    def hit(self) -> None:
        with self._seen:
            self.hits += 1
            self._seen.notify_all()

    def wait_hit(self, timeout: float = 20.0) -> None:
        with self._seen:
            assert self._seen.wait_for(lambda: self.hits > 0, timeout), "the write never reached the server"

    def release(self) -> None:
        self.released.set()


class AdmissionFaults:
    """The webhook server (in its own thread and loop) and its registration on the control plane."""

    def __init__(self, plane: ControlPlane, namespace: str) -> None:
        self.plane = plane
        self.namespace = namespace
        self.faults: list[Fault] = []
        self.port = free_port()
        self.name = f"faults-{uuid.uuid4().hex[:8]}"
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True, name="admission-faults")
        self._runner: web.AppRunner | None = None

    def add(self, fault: Fault) -> Fault:
        self.faults.append(fault)
        return fault

    async def _admit(self, request: web.Request) -> web.Response:
        review = await request.json()
        admission = review["request"]
        response: dict[str, Any] = {"uid": admission["uid"], "allowed": True}
        for fault in self.faults:
            if fault.matches(admission):
                fault.hit()
                if fault.hold:
                    await asyncio.to_thread(fault.released.wait, HOLD_LIMIT)
                if fault.deny_code:
                    response = {"uid": admission["uid"], "allowed": False,
                                "status": {"code": fault.deny_code, "message": f"injected fault {fault.deny_code}"}}
                break
        return web.json_response({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                                  "response": response})

    async def _serve(self) -> None:
        app = web.Application()
        app.router.add_post("/admit", self._admit)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        pki = self.plane.state / "pki"
        context.load_cert_chain(pki / "apiserver.crt", pki / "apiserver.key")
        await web.TCPSite(self._runner, "127.0.0.1", self.port, ssl_context=context).start()

    def _configuration(self) -> dict[str, Any]:
        ca = (self.plane.state / "pki" / "ca.crt").read_bytes()
        return {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": self.name},
            "webhooks": [{
                "name": "faults.binding-scheduler.test",
                "clientConfig": {"url": f"https://127.0.0.1:{self.port}/admit",
                                 "caBundle": base64.b64encode(ca).decode()},
                "rules": [
                    {
                        "operations": ["CREATE", "UPDATE", "DELETE"],
                        "apiGroups": ["work.karmada.io", "coordination.k8s.io"],
                        "apiVersions": ["*"],
                        "resources": ["resourcebindings", "resourcebindings/status", "leases"],
                        "scope": "Namespaced",
                    },
                    {
                        "operations": ["UPDATE"],
                        "apiGroups": ["work.karmada.io"],
                        "apiVersions": ["*"],
                        "resources": ["clusterresourcebindings", "clusterresourcebindings/status"],
                        "scope": "Cluster",
                    },
                ],
                # Namespaced objects: this test's namespace only (cluster-scoped ones: matched by Fault.name).
                "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": self.namespace}},
                "failurePolicy": "Fail",
                "sideEffects": "None",
                "timeoutSeconds": 30,
                "admissionReviewVersions": ["v1"],
            }],
        }

    def start(self) -> AdmissionFaults:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._serve(), self._loop).result(10)
        self.plane.admin().ok(
            "POST", path_of("ValidatingWebhookConfiguration"), self._configuration()
        )
        self._wait_active()
        return self

    def _wait_active(self) -> None:
        """kube-apiserver picks a new webhook configuration up a moment later: probe until it calls us."""
        kube = self.plane.admin()
        probe = self.add(Fault(resource="leases", name=f"{self.name}-probe", operation="CREATE", times=1))
        body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                "metadata": {"name": f"{self.name}-probe", "namespace": self.namespace}}
        for _ in range(200):
            kube.request("POST", path_of("Lease", namespace=self.namespace), body)
            if probe.hits:
                break
            kube.request("DELETE", path_of("Lease", f"{self.name}-probe", self.namespace))
            threading.Event().wait(0.05)
        assert probe.hits, "the fault webhook never became active"
        kube.request("DELETE", path_of("Lease", f"{self.name}-probe", self.namespace))
        self.faults.remove(probe)

    def stop(self) -> None:
        for fault in self.faults:
            fault.release()
        self.plane.admin().request("DELETE", path_of("ValidatingWebhookConfiguration", self.name))
        if self._runner is not None:
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)


@contextmanager
def admission_faults(plane: ControlPlane, namespace: str) -> Iterator[AdmissionFaults]:
    faults = AdmissionFaults(plane, namespace).start()
    try:
        yield faults
    finally:
        faults.stop()

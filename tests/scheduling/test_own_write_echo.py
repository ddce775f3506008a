"""Our own spec write must not trigger a second pass even when its watch event reaches intake before the
PATCH response reaches the pass: the pass has not recorded the
generation it produced yet when intake sees it."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from binding_scheduler.algorithm.registry import build_plugins
from binding_scheduler.model import parse_cluster
from binding_scheduler.scheduling.lifecycle.runtime import Scheduler
from binding_scheduler.scheduling.observability.metrics import SchedulerMetrics
from binding_scheduler.scheduling.passes.context import PassContext, PassSettings
from binding_scheduler.scheduling.state.queue import SchedulingQueue
from binding_scheduler.scheduling.state.stores import BindingStore, ClusterStore
from testsupport.builders import binding, cluster

KEY = "default/web"
LABELS = {"propagationpolicy.karmada.io/permanent-id": "p1"}


class EchoingClient:
    """Applies each patch to a copy of the body and delivers it to intake (the watch event) before it
    answers (the response)."""

    def __init__(self, body: dict[str, Any]) -> None:
        self.body = body
        self.scheduler: Scheduler | None = None
        self.sent: list[str] = []

    async def patch_merge(self, path: str, patch: Mapping[str, Any], *, answer: bool = True) -> dict[str, Any]:
        self.sent.append(path)
        body = copy.deepcopy(self.body)
        metadata = body["metadata"]
        metadata["resourceVersion"] = str(int(metadata["resourceVersion"]) + 1)
        if path.endswith("/status"):
            body["status"] = {**(body.get("status") or {}), **patch["status"]}
        else:
            metadata["generation"] += 1
            metadata.setdefault("annotations", {}).update(patch["metadata"].get("annotations") or {})
            body["spec"]["clusters"] = patch["spec"]["clusters"]
        self.body = body
        assert self.scheduler is not None
        self.scheduler.on_binding(copy.deepcopy(body))  # the watch event wins the race
        return copy.deepcopy(body)


class Events:
    async def record(self, involved: Mapping[str, str], type: str, reason: str, message: str) -> None:
        return None


async def test_early_echo_of_own_write_needs_no_pass() -> None:
    body = binding(placement={}, clusters=None)  # a Duplicated non-workload: every pass that runs writes
    body["metadata"]["labels"] = dict(LABELS)
    client = EchoingClient(body)
    fleet = ClusterStore()
    fleet.upsert(parse_cluster(cluster("m1")))
    metrics = SchedulerMetrics()
    ctx = PassContext(client=client, events=Events(), bindings=BindingStore(), clusters=fleet, metrics=metrics)
    queue = SchedulingQueue()
    scheduler = Scheduler(
        ctx, PassSettings(scheduler_name="default-scheduler", plugins=build_plugins()), queue=queue, metrics=metrics
    )
    client.scheduler = scheduler
    scheduler.on_binding(copy.deepcopy(body))

    info = queue.pop_nowait()
    assert info is not None and info.key == KEY
    await scheduler._run_one(info)
    queue.done(info)

    assert [path.rsplit("/", 1)[-1] for path in client.sent] == ["web", "status"]
    assert client.body["spec"]["clusters"] == [{"name": "m1"}]
    assert queue.where(KEY) is None, "our own write queued another pass"

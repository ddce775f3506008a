"""Event writes for one binding that fails in a loop, per simulated hour: with client-go's correlation, and as before.

    .venv/bin/python -m benchmarks.event_volume [--hours 2] [--interval 5]

Each failed pass records the same Warning `ScheduleBindingFailed` Event on the binding and on its resource
template (the pair the issue saw, 37 + 37 Events in a few minutes). The failures follow a schedule on a fake
clock (nothing sleeps) and are recorded against the embedded devcluster:

- `backoff`: the queue's retry backoff, 1 s doubling to 10 s (Karmada's), so every 10 s once capped;
- `every Ns`: a fixed retry interval (`--interval`).

Each schedule runs with one message repeated (the usual failure loop) and with a message that changes on every
failure (e.g. a count in it), which exercises aggregation. For each it prints, per simulated hour, the Event
write requests (POST, PATCH) and the Event objects about the binding and its template with the correlator
(`EventRecorder`), and the POSTs of the old behaviour (one new Event per failure, replayed with the same body).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
from collections.abc import Iterator
from typing import Any

from binding_scheduler.devcluster import DevCluster
from binding_scheduler.kube import ApiClient, EventRecorder, WriteGate, load_connection, resource_path
from binding_scheduler.kube.events import event_body, rfc3339

EPOCH = 1_700_000_000.0
HOUR = 3600.0
EVENTS = resource_path("", "v1", "events", "default")
MESSAGE = "0/3 clusters are available: 3 cluster(s) did not have enough resource."


class FakeClock:
    def __init__(self) -> None:
        self.now = EPOCH

    def __call__(self) -> float:
        return self.now


def backoff_schedule() -> Iterator[float]:
    """Seconds after the first failure: delays 1, 2, 4, 8, then 10 s (scheduling/state/queue.py's backoff_for)."""
    at = 0.0
    for attempt in itertools.count(1):
        yield at
        at += min(1.0 * 2.0 ** (attempt - 1), 10.0)


def fixed_schedule(interval: float) -> Iterator[float]:
    return (i * interval for i in itertools.count())


def involved(prefix: str) -> tuple[dict[str, str], dict[str, str]]:
    binding = {"apiVersion": "work.karmada.io/v1alpha2", "kind": "ResourceBinding", "namespace": "default",
               "name": f"{prefix}-deployment", "uid": f"{prefix}-rb"}
    template = {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "default", "name": prefix,
                "uid": f"{prefix}-d"}
    return binding, template


def message(failure: int, varying: bool) -> str:
    return f"{MESSAGE} (attempt {failure + 1})" if varying else MESSAGE


def hours_of(times: list[float], hours: int) -> list[int]:
    return [sum(1 for t in times if h * HOUR <= t < (h + 1) * HOUR) for h in range(hours)]


async def run(api: DevCluster, client: ApiClient, label: str, schedule: Iterator[float], varying: bool,
              hours: int) -> dict[str, Any]:
    failures = list(itertools.takewhile(lambda t: t < hours * HOUR, schedule))
    prefix = label.replace(" ", "-").replace("/", "")
    binding, template = involved(prefix)
    clock = FakeClock()
    recorder = EventRecorder(client, "default-scheduler", clock=clock, wall_clock=clock)
    posts: list[float] = []
    patches: list[float] = []
    for i, at in enumerate(failures):
        clock.now = EPOCH + at
        before = (recorder.created, recorder.patched)
        for obj in (binding, template):
            await recorder.record(obj, "Warning", "ScheduleBindingFailed", message(i, varying))
        posts += [at] * (recorder.created - before[0])
        patches += [at] * (recorder.patched - before[1])
    ours = {binding["name"], template["name"]}
    objects = [e for e in api.store.list("events", namespace="default") if e["involvedObject"]["name"] in ours]

    old_binding, old_template = involved(prefix + "-old")  # the old recorder: one POST per Event, always
    old_posts = 0
    for i, at in enumerate(failures):
        for obj in (old_binding, old_template):
            body = event_body(obj, "Warning", "ScheduleBindingFailed", message(i, varying), "default-scheduler",
                              recorder.host, rfc3339(EPOCH + at))
            await client.create(EVENTS, body)
            old_posts += 1
    old_names = {old_binding["name"], old_template["name"]}
    old_objects = sum(1 for e in api.store.list("events", namespace="default")
                      if e["involvedObject"]["name"] in old_names)
    if recorder.failures:
        raise SystemExit(f"{label}: {recorder.failures} Event writes failed")
    return {
        "failures": hours_of(failures, hours),
        "old": [2 * n for n in hours_of(failures, hours)],
        "old_total": old_posts,
        "old_objects": old_objects,
        "post": hours_of(posts, hours),
        "patch": hours_of(patches, hours),
        "dropped": recorder.dropped,
        "objects": len(objects),
        "counts": sorted(e["count"] for e in objects),
    }


def counts_text(counts: list[int]) -> str:
    ones = sum(1 for c in counts if c == 1)
    rest = [str(c) for c in counts if c != 1]
    return ", ".join(([f"{ones} x 1"] if ones else []) + rest)


async def report(api: DevCluster, client: ApiClient, interval: float, hours: int) -> None:
    scenarios = [
        ("backoff", backoff_schedule, False),
        ("backoff", backoff_schedule, True),
        (f"every {interval:g}s", lambda: fixed_schedule(interval), False),
        (f"every {interval:g}s", lambda: fixed_schedule(interval), True),
    ]
    print(f"one binding failing in a loop, its Event on the binding and on its template, {hours} simulated hour(s)")
    print(f"{'schedule':<10} {'message':<8} {'hour':>4} {'failures':>8} | {'old POST':>8} | "
          f"{'POST':>4} {'PATCH':>5} {'writes':>6}")
    for label, schedule, varying in scenarios:
        kind = "varying" if varying else "same"
        api.journal.clear()
        result = await run(api, client, f"{label} {kind}", schedule(), varying, hours)
        for hour in range(hours):
            post, patch = result["post"][hour], result["patch"][hour]
            print(f"{label:<10} {kind:<8} {hour + 1:>4} {result['failures'][hour]:>8} | {result['old'][hour]:>8} | "
                  f"{post:>4} {patch:>5} {post + patch:>6}")
        print(f"{'':<19} Event objects: old {result['old_objects']}, now {result['objects']} "
              f"(counts {counts_text(result['counts'])}); not written (spam filter): {result['dropped']}")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hours", type=int, default=2, help="simulated hours (default 2)")
    parser.add_argument("--interval", type=float, default=5.0, help="the fixed retry interval (default 5 s)")
    args = parser.parse_args()
    # no client-side rate limit (qps=0; 40 by default): it changes the wall time, not the counts
    async with DevCluster() as api, ApiClient(load_connection(str(api.kubeconfig_path)), WriteGate(), qps=0) as client:
        await report(api, client, args.interval, args.hours)


if __name__ == "__main__":
    asyncio.run(main())

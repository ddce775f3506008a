"""The binding queue: Karmada's priority-queue semantics (pkg/scheduler/internal/queue/scheduling_queue.go:
prioritySchedulingQueue)."""

from __future__ import annotations

import asyncio

import pytest

from binding_scheduler.scheduling.state.queue import CONFLICT_FALLBACK, QueuedBinding, QueueDepth, SchedulingQueue


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def queue(clock: Clock) -> SchedulingQueue:
    return SchedulingQueue(clock=clock)


def drain(queue: SchedulingQueue) -> list[str]:
    keys = []
    while (info := queue.pop_nowait()) is not None:
        keys.append(info.key)
        queue.done(info)
    return keys


def test_higher_priority_is_handed_out_first_then_older(queue: SchedulingQueue, clock: Clock) -> None:
    queue.push("ns/low", priority=0)
    clock.now += 1
    queue.push("ns/high", priority=10)
    clock.now += 1
    queue.push("ns/low-later", priority=0)
    assert drain(queue) == ["ns/high", "ns/low", "ns/low-later"]


def test_key_waiting_in_active_queue_is_not_added_twice(queue: SchedulingQueue) -> None:
    queue.push("ns/a")
    queue.push("ns/a", priority=100)
    assert drain(queue) == ["ns/a"]


def test_key_pushed_during_pass_comes_again(queue: SchedulingQueue) -> None:
    queue.push("ns/a")
    first = queue.pop_nowait()
    assert first is not None
    queue.push("ns/a")
    assert queue.pop_nowait() is None
    queue.done(first)
    again = queue.pop_nowait()
    assert again is not None
    assert (again.key, again.attempts) == ("ns/a", 2)


def test_one_pass_per_key_at_time(queue: SchedulingQueue) -> None:
    queue.push("ns/a")
    queue.push("ns/b")
    first = queue.pop_nowait()
    queue.push("ns/a")
    second = queue.pop_nowait()
    assert first is not None and second is not None
    assert (first.key, second.key) == ("ns/a", "ns/b")
    assert queue.pop_nowait() is None


@pytest.mark.parametrize(
    ("attempts", "seconds"), [(0, 0.0), (1, 1.0), (2, 2.0), (3, 4.0), (4, 8.0), (5, 10.0), (9, 10.0)]
)
def test_backoff_doubles_from_one_second_to_ten(queue: SchedulingQueue, attempts: int, seconds: float) -> None:
    assert queue.backoff_for(attempts) == seconds


def test_backoff_expires_from_when_key_last_entered_active_queue(queue: SchedulingQueue, clock: Clock) -> None:
    queue.push("ns/a")
    info = queue.pop_nowait()
    assert info is not None
    clock.now += 0.6
    queue.done(info)
    queue.push_backoff(info)
    clock.now += 0.5
    assert queue.flush_backoff() == 1
    assert queue.where("ns/a") == "active"


def test_backoff_holds_key_until_it_expires(queue: SchedulingQueue, clock: Clock) -> None:
    queue.push("ns/a")
    info = queue.pop_nowait()
    assert info is not None
    queue.done(info)
    queue.push_backoff(info)
    clock.now += 0.9
    assert queue.flush_backoff() == 0
    assert queue.where("ns/a") == "backoff"


def test_backoff_is_ignored_while_key_waits_in_active_queue(queue: SchedulingQueue) -> None:
    queue.push("ns/a")
    info = queue.pop_nowait()
    assert info is not None
    queue.push("ns/a")
    queue.push_backoff(info)
    assert queue.depth() == QueueDepth(active=1, backoff=0, unschedulable=0)


def test_unschedulable_keys_return_after_five_minutes(queue: SchedulingQueue, clock: Clock) -> None:
    queue.push("ns/a")
    info = queue.pop_nowait()
    assert info is not None
    queue.done(info)
    queue.push_unschedulable(info)
    clock.now += 299
    assert queue.flush_unschedulable() == 0
    clock.now += 2
    assert queue.flush_unschedulable() == 1
    assert queue.where("ns/a") == "active"


def test_event_moves_unschedulable_key_back_to_active_at_once(queue: SchedulingQueue) -> None:
    queue.push("ns/a")
    info = queue.pop_nowait()
    assert info is not None
    queue.done(info)
    queue.push_unschedulable(info)
    queue.push("ns/a")
    assert queue.where("ns/a") == "active"
    assert queue.depth() == QueueDepth(active=1, backoff=0, unschedulable=0)


def test_event_moves_backed_off_key_back_to_active_at_once(queue: SchedulingQueue) -> None:
    queue.push("ns/a")
    info = queue.pop_nowait()
    assert info is not None
    queue.done(info)
    queue.push_backoff(info)
    queue.push("ns/a")
    assert queue.where("ns/a") == "active"


def test_forget_drops_backoff(queue: SchedulingQueue) -> None:
    queue.push("ns/a")
    info = queue.pop_nowait()
    assert info is not None
    queue.done(info)
    queue.push_backoff(info)
    queue.forget("ns/a")
    assert queue.where("ns/a") is None


def test_requeue_hands_key_out_again_at_once(queue: SchedulingQueue) -> None:
    queue.push("ns/a")
    info = queue.pop_nowait()
    assert info is not None
    queue.done(info)
    queue.requeue(info)
    again = queue.pop_nowait()
    assert again is not None and again.key == "ns/a"


def handed_out(queue: SchedulingQueue, key: str) -> QueuedBinding:
    queue.push(key)
    info = queue.pop_nowait()
    assert info is not None
    queue.done(info)
    return info


def test_after_409_key_waits_for_newer_cached_version(queue: SchedulingQueue) -> None:
    info = handed_out(queue, "ns/a")
    queue.requeue_when_newer(info, refused_version="7", cached_version="7")
    assert queue.pop_nowait() is None
    queue.cache_updated("ns/a", "7")
    assert queue.pop_nowait() is None
    queue.cache_updated("ns/a", "9")
    again = queue.pop_nowait()
    assert again is not None and again.key == "ns/a"


def test_after_409_key_runs_at_once_when_cache_is_newer_already(queue: SchedulingQueue) -> None:
    info = handed_out(queue, "ns/a")
    queue.requeue_when_newer(info, refused_version="7", cached_version="8")
    again = queue.pop_nowait()
    assert again is not None and again.key == "ns/a"


def test_after_409_with_no_newer_version_key_runs_after_fallback(
    queue: SchedulingQueue, clock: Clock
) -> None:
    info = handed_out(queue, "ns/a")
    queue.requeue_when_newer(info, refused_version="7", cached_version="7")
    clock.now += CONFLICT_FALLBACK - 0.01
    assert queue.flush_conflicted() == 0
    clock.now += 0.01
    assert queue.flush_conflicted() == 1
    again = queue.pop_nowait()
    assert again is not None and again.key == "ns/a"


def test_event_for_key_waiting_after_409_activates_it(queue: SchedulingQueue) -> None:
    info = handed_out(queue, "ns/a")
    queue.requeue_when_newer(info, refused_version="7", cached_version="7")
    assert queue.push("ns/a")
    again = queue.pop_nowait()
    assert again is not None and again.key == "ns/a"
    queue.done(again)
    queue.cache_updated("ns/a", "9")
    assert queue.pop_nowait() is None


def test_deleted_key_leaves_every_waiting_place(queue: SchedulingQueue, clock: Clock) -> None:
    for key in ("ns/backoff", "ns/unschedulable", "ns/conflict"):
        handed_out(queue, key)
    queue.push_backoff(QueuedBinding("ns/backoff", attempts=1))
    queue.push_unschedulable(QueuedBinding("ns/unschedulable"))
    queue.requeue_when_newer(QueuedBinding("ns/conflict"), refused_version="1", cached_version="1")
    for key in ("ns/backoff", "ns/unschedulable", "ns/conflict"):
        queue.discard(key)
    clock.now += 3600
    assert (queue.flush_backoff(), queue.flush_unschedulable(), queue.flush_conflicted()) == (0, 0, 0)
    assert queue.depth() == QueueDepth(active=0, backoff=0, unschedulable=0)


async def test_pop_waits_for_push() -> None:
    queue = SchedulingQueue()
    waiter = asyncio.create_task(queue.pop())
    await asyncio.sleep(0)
    assert not waiter.done()
    queue.push("ns/a")
    info = await waiter
    assert info is not None and info.key == "ns/a"


async def test_close_wakes_waiters_and_stops_intake() -> None:
    queue = SchedulingQueue()
    waiter = asyncio.create_task(queue.pop())
    await asyncio.sleep(0)
    queue.close()
    assert await waiter is None
    assert queue.push("ns/a") is False
    assert await queue.pop() is None

"""testsupport/processes.py: a remembered pid is signalled only while /proc still shows the process recorded (its start
time and command), and the tiers' stops (`dev.py cluster down`, `dev.py karmada down`, a plane's `stop`) go
through that check. Each test starts `sleep`s in their own sessions and kills what is left at its end."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

from testsupport import processes
from testsupport.karmada import plane as karmada_plane
from testsupport.processes import Identity, exit_status, mismatch, record, signal_group, signal_process
from testsupport.realcluster import controlplane

Spawn = Callable[..., subprocess.Popen[bytes]]


@pytest.fixture
def spawn() -> Iterator[Spawn]:
    """Popen, each process the leader of its own process group; every one killed and reaped at the end."""
    started: list[subprocess.Popen[bytes]] = []

    def start(command: Sequence[str], stdin: int | None = None) -> subprocess.Popen[bytes]:
        process = subprocess.Popen(list(command), start_new_session=True, stdin=stdin, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
        started.append(process)
        _await_command_line(process.pid)
        return process

    yield start
    for process in started:
        if process.poll() is None:
            process.kill()
        process.wait(5)
        if process.stdin is not None:
            process.stdin.close()


def _await_command_line(pid: int) -> None:
    """Popen returns once exec closed its error pipe, which the kernel does before it sets the new program's
    arguments: /proc/PID/cmdline reads empty for a moment, as an exiting process's does."""
    deadline = time.monotonic() + 5
    while not Path(f"/proc/{pid}/cmdline").read_bytes() and time.monotonic() < deadline:
        time.sleep(0.001)


def start_time(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])


def survives(process: subprocess.Popen[bytes], seconds: float = 0.2) -> bool:
    try:
        process.wait(seconds)
    except subprocess.TimeoutExpired:
        return True
    return False


def test_recorded_live_child_is_signalled(spawn: Spawn) -> None:
    child = spawn(["sleep", "30"])
    identity = record(child.pid, ["sleep", "30"])
    assert identity.start == start_time(child.pid)
    assert mismatch(identity) is None
    assert exit_status(identity) is None
    assert signal_group(identity, signal.SIGTERM, "sleeper")
    deadline = time.monotonic() + 5
    while (status := exit_status(identity)) is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert status == -signal.SIGTERM  # reaped by exit_status: a child of this process
    assert mismatch(identity) == "gone"
    assert not signal_group(identity, signal.SIGKILL)  # gone: skipped, silently


def test_wrapper_and_interpreter_still_match(
        spawn: Spawn, tmp_path: Path) -> None:
    wrapped = spawn(["env", "sleep", "30"])  # as `setpriv --pdeathsig KILL -- COMMAND` runs the tiers' processes
    identity = record(wrapped.pid, ["sleep", "30"])
    assert mismatch(identity) is None  # whether env has exec'd sleep yet or not
    deadline = time.monotonic() + 2
    while Path(f"/proc/{wrapped.pid}/cmdline").read_bytes() != b"sleep\x0030\x00" and time.monotonic() < deadline:
        time.sleep(0.005)
    assert mismatch(identity) is None

    script = tmp_path / "console-script"  # as .venv/bin/binding-scheduler: the kernel puts /bin/sh in front
    script.write_text("#!/bin/sh\nread line\n")
    script.chmod(0o755)
    interpreted = spawn([str(script), "run"], stdin=subprocess.PIPE)
    identity = record(interpreted.pid, [str(script), "run"])
    assert mismatch(identity) is None
    assert signal_process(identity, signal.SIGKILL)
    assert interpreted.wait(5) == -signal.SIGKILL


def test_pid_now_held_by_another_process_is_not_signalled(spawn: Spawn, capsys: pytest.CaptureFixture[str]) -> None:
    recorded = spawn(["sleep", "30"])
    identity = record(recorded.pid, ["sleep", "30"])
    recorded.kill()
    recorded.wait(5)
    assert not signal_group(identity, signal.SIGKILL)  # gone and reaped

    other = spawn(["sleep", "31"])  # another job's process, holding the pid the state file names
    reused = Identity(other.pid, start_time(other.pid) - 1, ("sleep", "31"))
    assert not signal_group(reused, signal.SIGKILL, "etcd")
    assert not signal_process(reused, signal.SIGKILL, "etcd")
    same_start = Identity(other.pid, start_time(other.pid), ("sleep", "30"))
    assert not signal_group(same_start, signal.SIGKILL, "kube-apiserver")
    assert survives(other)
    lines = capsys.readouterr().err.splitlines()
    assert lines == [
        f"processes: not signalling etcd (pid {other.pid}): now a process started at tick "
        f"{start_time(other.pid)}, not {start_time(other.pid) - 1}",
    ] * 2 + [
        f"processes: not signalling kube-apiserver (pid {other.pid}): now runs 'sleep 31', not 'sleep 30'",
    ]


def test_bare_pid_from_old_state_file_is_not_signalled(spawn: Spawn,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    other = spawn(["sleep", "30"])
    for old in (other.pid, str(other.pid)):
        bare = Identity.from_json(old)
        assert bare == Identity(other.pid, None)
        assert not signal_group(bare, signal.SIGKILL, "etcd")
    assert survives(other)
    assert capsys.readouterr().err.splitlines() == [
        f"processes: not signalling etcd (pid {other.pid}): a bare pid (a state file older than identities), "
        "no start time to check it by",
    ] * 2
    identity = record(other.pid, ["sleep", "30"])
    assert Identity.from_json(json.loads(json.dumps(identity.to_json()))) == identity


def test_without_proc_nothing_is_signalled(spawn: Spawn, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    other = spawn(["sleep", "30"])
    identity = record(other.pid, ["sleep", "30"])
    monkeypatch.setattr(processes, "PROC", tmp_path / "no-proc")
    assert record(other.pid, ["sleep", "30"]).start is None
    assert not signal_group(identity, signal.SIGKILL)
    assert survives(other)
    assert capsys.readouterr().err == (
        f"processes: not signalling (pid {other.pid}): /proc is missing: cannot check it\n")


def _state(tmp_path: Path, recorded: dict[str, object]) -> Path:
    state = tmp_path / "state"
    state.mkdir()
    (state / "pids.json").write_text(json.dumps(recorded))
    return state


@pytest.mark.parametrize("stop", [controlplane.stop, karmada_plane.stop], ids=["cluster-down", "karmada-down"])
def test_plane_stop_kills_own_processes_and_no_other(stop: Callable[[Path], bool], spawn: Spawn,
                                                           tmp_path: Path) -> None:
    own = spawn(["sleep", "30"])
    others = [spawn(["sleep", "31"]), spawn(["sleep", "32"])]
    state = _state(tmp_path, {
        "etcd": record(own.pid, ["sleep", "30"]).to_json(),
        "kube-apiserver": others[0].pid,  # a state file from before identities
        "kwok": Identity(others[1].pid, start_time(others[1].pid) + 1, ("sleep", "32")).to_json(),
    })
    assert stop(state)
    assert not Path(f"/proc/{own.pid}").exists()  # killed, and reaped by the stop (a child of this process)
    assert all(survives(other, 0.1) for other in others)
    assert not state.exists()


def test_plane_stop_skips_foreign_pid(spawn: Spawn, tmp_path: Path) -> None:
    other = spawn(["sleep", "30"])
    state = _state(tmp_path, {"scheduler": Identity(other.pid, start_time(other.pid), ("binding-scheduler", "run"))
                              .to_json()})
    running = karmada_plane.Processes.of(state)
    assert running.stop("scheduler", timeout=0.1) is None
    assert survives(other)
    assert json.loads((state / "pids.json").read_text()) == {}
    assert os.getpgid(other.pid) == other.pid

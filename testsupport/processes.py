"""Stopping a process the tiers started, by a pid remembered across time (a state file, another command), only
while that pid is still the same process.

A pid is reused once its process is gone, and on a shared machine another job may hold it by the time
`dev.py karmada down` or `dev.py cluster down` runs: signalling a remembered pid (or its process group) blindly
once killed another job's process. So a process is recorded when it starts, as an `Identity`: its pid, its start
time (field 22 of /proc/PID/stat, clock ticks since boot; an exec keeps it) and the command it was started with.
Before any signal, /proc/PID must still show that start time and a command line ending with that command (a
wrapper such as `setpriv ... -- COMMAND` before it execs, or an interpreter in front of a script, only adds words
in front). A process group is signalled only when its leader passes. A pid without its identity (a state file
from before identities were recorded), or a machine without /proc, cannot be checked: it is not signalled.
Skips are reported on stderr, one line each; a process that is simply gone is skipped silently.

A `subprocess.Popen` still held and not yet waited for needs none of this: its pid cannot be reused before it
is reaped."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")


@dataclass(frozen=True)
class Identity:
    """A process as it was when started. `start` is None when it could not be read (a bare pid from an old
    state file, no /proc): such a process is never signalled."""

    pid: int
    start: int | None
    command: tuple[str, ...] = ()

    def to_json(self) -> dict[str, object]:
        return {"pid": self.pid, "start": self.start, "command": list(self.command)}

    @classmethod
    def from_json(cls, value: object) -> Identity:
        """What `to_json` wrote, or a bare pid (an int) from a state file written before identities were."""
        if isinstance(value, dict):
            start = value.get("start")
            return cls(int(value["pid"]), None if start is None else int(start),
                       tuple(str(word) for word in value.get("command") or ()))
        if isinstance(value, bool) or not isinstance(value, int | str):
            raise ValueError(f"not a process identity: {value!r}")
        return cls(int(value), None)


def record(pid: int, command: Sequence[str]) -> Identity:
    """The identity of `pid`, just started (a child not yet waited for, so the pid is surely its own) to run
    `command` (the program's own argv, without any wrapper that execs it)."""
    return Identity(pid, _start_time(pid), tuple(command))


def mismatch(identity: Identity) -> str | None:
    """None while `identity.pid` is still the process recorded; otherwise what differs, in a few words."""
    if not PROC.is_dir():
        return "/proc is missing: cannot check it"
    if identity.start is None:
        return "a bare pid (a state file older than identities), no start time to check it by"
    start = _start_time(identity.pid)
    if start is None:
        return "gone"
    if start != identity.start:
        return f"now a process started at tick {start}, not {identity.start}"
    words = _cmdline(identity.pid)
    if words is None:
        return "gone"
    if not words:  # exiting (its memory, which holds the command line, released) or exited and not yet reaped
        return None
    if not identity.command or tuple(words[-len(identity.command):]) != identity.command:
        return f"now runs {_short(words)!r}, not {_short(identity.command)!r}"
    return None


def running(identity: Identity) -> bool:
    return mismatch(identity) is None


def signal_group(identity: Identity, sig: int, name: str = "") -> bool:
    """Send `sig` to the process group led by `identity.pid` if that pid is still the process recorded. True
    when sent; else False, with one line on stderr unless the process is simply gone."""
    return _signal(identity, sig, name, os.killpg)


def signal_process(identity: Identity, sig: int, name: str = "") -> bool:
    """Send `sig` to `identity.pid` alone, under the same check as `signal_group`."""
    return _signal(identity, sig, name, os.kill)


def _signal(identity: Identity, sig: int, name: str, send: Callable[[int, int], None]) -> bool:
    why = mismatch(identity)
    if why is not None:
        if why != "gone":
            label = f"{name} " if name else ""
            print(f"processes: not signalling {label}(pid {identity.pid}): {why}", file=sys.stderr, flush=True)
        return False
    try:
        send(identity.pid, sig)
    except ProcessLookupError:
        return False
    return True


def exit_status(identity: Identity) -> int | None:
    """The exit status of the recorded process once it has exited (reaping it when it is a child of this
    process; -1 when it is gone and was not), None while it runs."""
    if not running(identity):
        return -1
    try:
        done, status = os.waitpid(identity.pid, os.WNOHANG)
    except ChildProcessError:  # not our child: it runs (or is a zombie its parent has not reaped yet)
        return None
    return os.waitstatus_to_exitcode(status) if done == identity.pid else None


def wait_gone(identity: Identity, timeout: float = 10.0) -> None:
    """Until the recorded process has exited and been reaped (by this process when it is its child)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and exit_status(identity) is None:
        time.sleep(0.05)


def _start_time(pid: int) -> int | None:
    """Field 22 of /proc/PID/stat: when the process started, in clock ticks since boot; None without one."""
    try:
        text = (PROC / str(pid) / "stat").read_text()
    except OSError:  # no such process (or no /proc)
        return None
    return int(text.rsplit(")", 1)[1].split()[19])  # fields from the 3rd, after the name (which may hold ")")


def _cmdline(pid: int) -> list[str] | None:
    try:
        raw = (PROC / str(pid) / "cmdline").read_bytes()
    except OSError:
        return None
    words = raw.split(b"\0")
    if raw.endswith(b"\0"):
        words.pop()
    return [os.fsdecode(word) for word in words] if raw else []


def _short(words: Sequence[str], size: int = 120) -> str:
    text = " ".join(words)
    return text if len(text) <= size else text[: size - 3] + "..."

"""Log lines: text or one JSON object per line, at a verbosity read as Karmada's klog levels.

| verbosity (`--v`)       | binding-scheduler | Kopf, aiohttp |
|-------------------------|-------------------|---------------|
| 0-3 (default)           | INFO: a line per decision (WARNING/ERROR if failed), configuration, lifecycle | WARNING |
| 4-5                     | DEBUG: per-pass detail (filters, estimates, writes)          | WARNING |
| 6 and more, `-v`, `--verbose` | DEBUG       | DEBUG (Kopf's per-handler lines too) |
"""

from __future__ import annotations

import json
import logging
import sys
import warnings
from datetime import UTC, datetime

DEBUG_VERBOSITY = 4
EVERYTHING_VERBOSITY = 6
LOG_FORMATS = ("text", "json")
TEXT_FORMAT = "%(asctime)s %(levelname)-7s %(name)s: %(message)s"
QUIET_LIBRARIES = ("kopf", "aiohttp.access", "asyncio")


class JsonFormatter(logging.Formatter):
    """`{"ts": ..., "level": ..., "logger": ..., "msg": ...}` per line (and `error` with the traceback), plus the
    keys of a record's `fields`, a dict or a function that returns one (the decision lines carry theirs: binding,
    reason, clusters, ...; as a function, so that the text format never builds them)."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds").replace(
                "+00:00", "Z"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        fields = getattr(record, "fields", None)
        if callable(fields):
            fields = fields()
        if isinstance(fields, dict):
            entry.update({key: value for key, value in fields.items() if key not in entry})
        if record.exc_info:
            entry["error"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False, default=str)


class StopWhileStartingFilter(logging.Filter):
    """Drops Kopf's `Startup activity is only partially executed due to cancellation.`: a standby stopped while
    it waits for the Lease (our startup handler waits there) is a normal stop, and our own lines say so
    (`received SIGTERM: stopping`, then the shutdown report with `lease not held`)."""

    MESSAGE = "Startup activity is only partially executed"

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(self.MESSAGE)


class _OurHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """The one handler configure_logging owns (others, a test's capture say, stay). It writes to whatever
    `sys.stderr` is when a line is logged, not when it was made (a caller may swap stderr, then close it)."""

    def emit(self, record: logging.LogRecord) -> None:
        self.stream = sys.stderr
        super().emit(record)


def configure_logging(verbosity: int = 0, log_format: str = "text") -> None:
    """Root logging to stderr, replacing an earlier call's (a command may run more than once in a process)."""
    if log_format not in LOG_FORMATS:
        raise ValueError(f"log format {log_format!r} is not one of {', '.join(LOG_FORMATS)}")
    handler = _OurHandler()
    handler.setFormatter(JsonFormatter() if log_format == "json" else logging.Formatter(TEXT_FORMAT))
    root = logging.getLogger()
    for old in [h for h in root.handlers if isinstance(h, _OurHandler)]:
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(logging.DEBUG if verbosity >= DEBUG_VERBOSITY else logging.INFO)
    libraries = logging.DEBUG if verbosity >= EVERYTHING_VERBOSITY else logging.WARNING
    for name in QUIET_LIBRARIES:
        logging.getLogger(name).setLevel(libraries)
    # Kopf reports a startup handler that failed for good once more (ours has said why in one line), and leaves
    # its authenticator coroutine unawaited when the startup fails.
    logging.getLogger("kopf.activities.startup").setLevel(
        logging.DEBUG if verbosity >= EVERYTHING_VERBOSITY else logging.CRITICAL)
    warnings.filterwarnings("ignore", message="coroutine 'authenticator' was never awaited")
    reactor = logging.getLogger("kopf._core.reactor.running")
    for stale in [f for f in reactor.filters if isinstance(f, StopWhileStartingFilter)]:
        reactor.removeFilter(stale)
    if verbosity < EVERYTHING_VERBOSITY:
        reactor.addFilter(StopWhileStartingFilter())

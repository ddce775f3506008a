"""For `kopf run -A -m binding_scheduler.operator.kopf_main` only: importing this module registers the
scheduler's handlers in Kopf's default registry, configured from the environment (see
`options.LaunchOptions.from_env`). `kopf run` imports it and then runs what it registered; nothing else
should import it (`binding-scheduler run` builds its own registry, see `runner`)."""

from __future__ import annotations

import sys

import kopf

from .app import OperatorApp
from .handlers import register
from .options import LaunchOptions

try:
    options = LaunchOptions.from_env()
except ValueError as error:  # one line and status 1, as `binding-scheduler run` says a bad flag (no traceback)
    print(f"cannot start: {error}", file=sys.stderr)
    raise SystemExit(1) from None
app = OperatorApp(options)
register(kopf.get_default_registry(), app)

"""The Kopf adapter. `kopf run -m binding_scheduler.operator` registers the handlers in Kopf's default
registry, configured from the environment (see `options.LaunchOptions.from_env`); `binding-scheduler run`
builds its own registry instead (see `runner`)."""

from __future__ import annotations

import kopf

from .app import OperatorApp
from .handlers import register
from .options import LaunchOptions

__all__ = ["LaunchOptions", "OperatorApp", "register"]

# Registering at import is what `kopf run -m` expects; nothing runs until Kopf starts the operator.
default_app = OperatorApp(LaunchOptions.from_env())
register(kopf.get_default_registry(), default_app)

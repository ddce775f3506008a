"""The numbers of the estimators' answers (Karmada's `pkg/scheduler/core/util.go: calAvailableReplicas`); the merge
itself is `schedule.apply_estimates`, over the candidates' columns."""

from __future__ import annotations

MAX_INT32 = 2**31 - 1
UNAUTHENTIC_REPLICA = -1
"""An estimator's "I do not know" for one cluster: it takes no part in the minimum."""

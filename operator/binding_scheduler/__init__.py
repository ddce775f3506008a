"""binding-scheduler: a Karmada-compatible multi-cluster scheduler."""

__version__ = "0.1.0"

COMPATIBILITY = (
    "Decides as Karmada v1.18.2's scheduler does, proven against that release's own scheduling code and e2e "
    "suite, and follows Karmada's later behaviour as of commit 1c278577e (v1.19.0-beta.0 plus 14); a v1.18.2 user "
    "sees a difference in three places: an explicit reschedule of a binding with clusterAffinities restarts at the "
    "first term, multi-component results carry their components (karmada-io/karmada #7833), and an assumed "
    "workload's resource deduction never wraps around int64 (karmada-io/karmada #7818)."
)
"""The version story, one sentence: `--version`, the README and docs/compatibility.md say it alike."""

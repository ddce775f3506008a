"""binding-scheduler: a Karmada-compatible multi-cluster scheduler."""

__version__ = "0.1.0"

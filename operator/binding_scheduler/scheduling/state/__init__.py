"""The scheduler's state: the stores of clusters and bindings, the assumption cache (and its columns), the
workload groups and the scheduling queue."""

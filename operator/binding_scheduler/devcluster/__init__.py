"""devcluster layer."""

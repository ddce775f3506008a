"""scheduling layer."""

"""estimation layer."""

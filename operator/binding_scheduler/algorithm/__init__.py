"""algorithm layer."""

"""helm, built from its Go module."""

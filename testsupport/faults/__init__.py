"""The fault matrix's expectations and judges."""

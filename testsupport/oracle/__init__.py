"""Karmada's own scheduling code (karmada-oracle) and the differential cases drawn for it."""

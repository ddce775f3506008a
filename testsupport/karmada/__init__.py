"""A whole Karmada control plane with kwok members, and the scenarios run on it (`dev.py karmada`)."""

"""What the scheduler tells: metrics (its own, Karmada's and client-go's), their labels, and the health and
metrics endpoints."""

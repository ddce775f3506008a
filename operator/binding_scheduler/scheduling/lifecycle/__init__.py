"""The service: start, the runtime that feeds passes from events, the Lease, the stop and its report."""

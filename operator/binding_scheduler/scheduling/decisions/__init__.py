"""Decision processes: decisions computed in other processes, and the pool that hands them out."""

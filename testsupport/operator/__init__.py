"""The operator on devcluster, in a thread of the test process."""

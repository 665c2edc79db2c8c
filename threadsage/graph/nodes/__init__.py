"""One function per node. Each takes the state (and the run's context) and returns an update."""

"""The composition root and the processes: settings → the parts, and `run`, `serve`, `worker`."""

"""Runs of code in the sandbox: starting one (who it belongs to, limits, idempotency), following it
live, recording how it ended."""

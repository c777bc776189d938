"""`RUN_QUEUE=redis`: runs go through Redis to runner agents on worker hosts (app/agent),
each bridging Redis to the sandbox worker of its host.

The database stays the source of truth for a run (status, attempt, verdict, output); Redis
holds only delivery state, leases and live events, so a restart or a wipe of Redis loses no
accepted run (the web side rebuilds the job streams from `queued` rows), at most some live
output of runs in flight. Its parts: `keys` (every key name), `jobs` (the job streams and
the per-run guards), `events` (live output), `liveness` (agents' heartbeats), `results`
(how outcomes reach the database) and `queue` (the adapter itself)."""

# The details a run ends with when the fleet, not the code, ended it.
MACHINE_STOPPED = "The machine running it stopped; it was not run again."
NEVER_STARTED = "No code runner could start it (it was tried twice); run it again."
CANCELLED_WAITING = "Cancelled before it started."
CANCELLED = "Cancelled."

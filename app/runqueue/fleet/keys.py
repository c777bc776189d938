"""Every Redis key the fleet uses, in one place. Redis holds delivery state, leases and live
events only; a run's status, attempt, verdict and output live in the database."""

from __future__ import annotations

POOLS = ("cpu", "cuda")
JOB_GROUP = "agents"  # the consumer group of every job stream: the runner agents
RESULTS = "bp:results"  # started and finished reports, from the agents to the web replicas
RESULT_GROUP = "web"  # the consumer group of RESULTS: the web replicas


def jobs(pool: str) -> str:
    """The stream of `pool`'s jobs that agents have taken (each pending with its agent until
    its run ends), read as one consumer group."""
    return f"bp:jobs:{pool}"


def waiting_prefix(pool: str) -> str:
    """Where the lists of `pool`'s jobs waiting per owner begin (`waiting`)."""
    return f"bp:wait:{pool}:"


def waiting(pool: str, owner: str) -> str:
    """One owner's jobs of `pool` that no agent has taken yet, oldest first."""
    return waiting_prefix(pool) + owner


def turns(pool: str) -> str:
    """The owners with jobs of `pool` waiting, in the order of their turns (a ring)."""
    return f"bp:turns:{pool}"


def bell(pool: str) -> str:
    """Rung when a job of `pool` is added: an idle agent waits on it (BLPOP)."""
    return f"bp:bell:{pool}"


def events(run_id: str) -> str:
    """The run's live events, for every web replica's event stream."""
    return f"bp:run:{run_id}:events"


def enqueued(run_id: str) -> str:
    """Set once a job for the run is added (waiting, or in a stream): the rebuild never adds
    a second."""
    return f"bp:run:{run_id}:enqueued"


def claim(run_id: str) -> str:
    """The delivery that holds the run now (its token), with a lease its agent renews."""
    return f"bp:run:{run_id}:claim"


def began(run_id: str) -> str:
    """Set (never cleared while it might have run) once a delivery handed the run to a
    worker: a later delivery must not run it again."""
    return f"bp:run:{run_id}:began"


def cancel(run_id: str) -> str:
    """Set when someone asked to stop the run."""
    return f"bp:run:{run_id}:cancel"


def revoked(token: str) -> str:
    """Set when the database refused a delivery's start (another one had it): stop it."""
    return f"bp:delivery:{token}:revoked"


def answer(token: str, question: str) -> str:
    """The database's answer to a delivery that asked to start its run (`started`), or to
    give its start back (`unstarted`)."""
    return f"bp:delivery:{token}:{question}"


def agent(pool: str, agent_id: str) -> str:
    """An agent's heartbeat: what it offers, expiring unless renewed."""
    return f"bp:agent:{pool}:{agent_id}"


def agents(pool: str) -> str:
    """The pattern matching every heartbeat of `pool`."""
    return f"bp:agent:{pool}:*"


def durations(pool: str) -> str:
    """Recent run times of `pool`, newest first, for the back-pressure estimate."""
    return f"bp:durations:{pool}"

"""The job streams: one per pool, read by the runner agents as one consumer group, holding
the jobs agents have taken (jobs wait for an agent in waiting.py, fairly by owner).

A job is delivered to one agent; its agent acknowledges it once the run has ended. An agent
renews the entries it holds (XCLAIM of its own, which resets their idle time), so an entry
idle past the lease belongs to an agent that died or stopped, and another takes it over
(XAUTOCLAIM), reading how often it was delivered from the pending list.

Three keys per run guard what may happen to it, changed only by scripts so that each step
is one atomic decision in Redis: `enqueued` (a job for it is waiting or in a stream: adding
one is idempotent, whoever rebuilds the queue; waiting.py), `claim` (the delivery that
holds it, with a lease) and `began` (a delivery handed it to a worker: no later delivery
runs it)."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from enum import StrEnum

from redis.asyncio import Redis
from redis.exceptions import ResponseError

from app.runqueue.fleet import keys

ENQUEUED_TTL_SECONDS = 7 * 24 * 3600  # far longer than any run waits
ENDED_MARKER_TTL_SECONDS = 3600  # far longer than a rebuild pass, from its read to its writes
BEGAN_TTL_SECONDS = 24 * 3600  # far longer than any delivery of a run can come back

# KEYS: claim, began, cancel. ARGV: token, lease ms, began ttl s, may start (1 or 0).
_BEGIN = """
if redis.call('EXISTS', KEYS[3]) == 1 then return 'cancelled' end
if redis.call('EXISTS', KEYS[2]) == 1 then return 'began' end
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then return 'claimed' end
if ARGV[4] ~= '1' then return 'exhausted' end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('SET', KEYS[2], ARGV[1], 'EX', ARGV[3])
return 'begun'
"""
# KEYS: claim, began. ARGV: token. Undo a begin whose run never reached a worker.
_RELEASE = """
if redis.call('GET', KEYS[2]) == ARGV[1] then redis.call('DEL', KEYS[2]) end
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1
"""
# KEYS: claim, began. ARGV: token, lease ms, began ttl s. Renew the lease; after a wipe of
# Redis, set both again. 0 when another delivery holds the run.
_RENEW = """
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('SET', KEYS[2], ARGV[1], 'NX', 'EX', ARGV[3])
return 1
"""


class Begin(StrEnum):
    """What a delivery found when it asked to start its run."""

    BEGUN = "begun"  # it holds the run: hand it to the worker
    CANCELLED = "cancelled"  # cancelled before it started: end it `killed`
    BEGAN = "began"  # an earlier delivery handed it to a worker that is gone: never again
    CLAIMED = "claimed"  # another live delivery holds it: this one is a duplicate
    EXHAUSTED = "exhausted"  # delivered too often without starting: end it


@dataclass(frozen=True)
class Delivery:
    """One job as an agent received it."""

    pool: str
    entry_id: str
    run_id: str
    request: str  # the RunRequest, as JSON
    deliveries: int  # how often the job has been delivered, this time included
    owner: str = ""  # whose turn it took (the request's owner, or a key of its own)

    @property
    def token(self) -> str:
        """Names this delivery in the claim and began keys."""
        return f"{self.entry_id}/{self.deliveries}"


async def ensure_group(redis: Redis, stream: str, group: str) -> None:
    """The stream and its group, created if missing (after a wipe, say). From the stream's
    first entry, so entries added before the group existed are read too."""
    try:
        await redis.xgroup_create(stream, group, id="0", mkstream=True)
    except ResponseError as exc:
        if "BUSYGROUP" not in str(exc):
            raise


async def reclaim(
    redis: Redis, pool: str, consumer: str, count: int, lease_ms: int
) -> list[Delivery]:
    """Jobs whose agent has not renewed them for `lease_ms`, taken over by `consumer`."""
    stream = keys.jobs(pool)
    try:
        _, entries, *_ = await redis.xautoclaim(
            stream, keys.JOB_GROUP, consumer, lease_ms, "0-0", count=count
        )
    except ResponseError as exc:
        if "NOGROUP" not in str(exc):
            raise
        return []
    found = []
    for entry_id, fields in entries:
        pending = await redis.xpending_range(stream, keys.JOB_GROUP, entry_id, entry_id, 1)
        if fields and pending:
            found.append(
                delivery_of(pool, str(entry_id), fields, int(pending[0]["times_delivered"]))
            )
    return found


def turn_of(run_id: str, owner: str | None) -> str:
    """Whose turn a job takes: its owner's, or one of its own when it has none."""
    return owner or f"run-{run_id}"


def delivery_of(pool: str, entry_id: str, fields: dict[str, str], deliveries: int) -> Delivery:
    run_id = str(fields["run"])
    owner = turn_of(run_id, fields.get("owner"))
    return Delivery(pool, entry_id, run_id, str(fields["request"]), deliveries, owner)


async def begin(redis: Redis, delivery: Delivery, lease_ms: int, *, may_start: bool) -> Begin:
    """Claim the run for this delivery and mark it handed over, unless something forbids
    it; one atomic decision, so two deliveries of one run cannot both begin it."""
    answer = await redis.eval(
        _BEGIN,
        3,
        keys.claim(delivery.run_id),
        keys.began(delivery.run_id),
        keys.cancel(delivery.run_id),
        delivery.token,
        lease_ms,
        BEGAN_TTL_SECONDS,
        "1" if may_start else "0",
    )
    return Begin(str(answer))


async def release(redis: Redis, delivery: Delivery) -> None:
    """Undo `begin` for a run that never reached a worker: it may be delivered again."""
    await redis.eval(
        _RELEASE, 2, keys.claim(delivery.run_id), keys.began(delivery.run_id), delivery.token
    )


async def renew(redis: Redis, delivery: Delivery, consumer: str, lease_ms: int) -> bool:
    """Renew the delivery's claim and its entry's idle time; False when another delivery
    holds the claim (which one runs the run is the database's decision, not this key's)."""
    held = await redis.eval(
        _RENEW,
        2,
        keys.claim(delivery.run_id),
        keys.began(delivery.run_id),
        delivery.token,
        lease_ms,
        BEGAN_TTL_SECONDS,
    )
    with contextlib.suppress(ResponseError):  # no group: Redis was wiped, the entry is gone
        await redis.xclaim(
            keys.jobs(delivery.pool), keys.JOB_GROUP, consumer, 0, [delivery.entry_id], justid=True
        )
    return bool(held)


async def done(redis: Redis, delivery: Delivery) -> None:
    """Acknowledge the job and remove it from its stream: the run has ended (or was never
    this delivery's to run)."""
    async with redis.pipeline(transaction=False) as pipe:
        pipe.xack(keys.jobs(delivery.pool), keys.JOB_GROUP, delivery.entry_id)
        pipe.xdel(keys.jobs(delivery.pool), delivery.entry_id)
        pipe.eval(_RELEASE_CLAIM, 1, keys.claim(delivery.run_id), delivery.token)
        await pipe.execute()


_RELEASE_CLAIM = """
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1
"""


async def forget_idle_consumers(redis: Redis, stream: str, group: str, idle_ms: int) -> int:
    """Drop the group's consumers that hold nothing and have been silent for `idle_ms`: the
    agents and replicas that have gone (each process reads under a name of its own)."""
    try:
        consumers = await redis.xinfo_consumers(stream, group)
    except ResponseError:  # no stream or no group (yet)
        return 0
    gone = [c["name"] for c in consumers if c["pending"] == 0 and c["idle"] > idle_ms]
    for name in gone:
        await redis.xgroup_delconsumer(stream, group, name)
    return len(gone)

"""Jobs waiting for an agent, taken fairly: owners in turn rather than first come, first
served, and no owner's runs filling an agent while others wait.

A new job waits in its owner's list (`keys.waiting`); the owners with jobs waiting form a
ring (`keys.turns`). An agent takes jobs with one script (`take`): owners in turn, one job
each per turn, passing over those that hold as many of the agent's slots as one owner may
(`owner_cap`, which the agent passes as `cap`); the job taken goes into the pool's stream
and at once to that agent (XREADGROUP), where jobs.py takes over. Adding a job rings the
pool's bell, which idle agents wait on (BLPOP)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from redis.asyncio import Redis
from redis.exceptions import ResponseError

from app.runqueue.fleet import keys
from app.runqueue.fleet.jobs import (
    ENQUEUED_TTL_SECONDS,
    Delivery,
    delivery_of,
    ensure_group,
    turn_of,
)

BELL_RINGS = 64  # rings kept at most: more than any idle agents there are to wake
# KEYS: enqueued, turns, the owner's waiting list, bell. ARGV: run id, request, enqueued ttl
# s, owner. A job is its run id, a space, and its request (run ids hold no space).
_ENQUEUE = f"""
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'EX', ARGV[3]) then return false end
if redis.call('RPUSH', KEYS[3], ARGV[1] .. ' ' .. ARGV[2]) == 1 then
  redis.call('RPUSH', KEYS[2], ARGV[4])
end
redis.call('RPUSH', KEYS[4], '1')
redis.call('LTRIM', KEYS[4], -{BELL_RINGS}, -1)
return 1
"""
# KEYS: stream, turns, bell. ARGV: group, consumer, count, cap, waiting prefix, then pairs of
# (owner, runs of it the agent holds). The waiting lists are named from the prefix here:
# the fleet runs on one Redis, not a cluster. Answers {held back (1 or 0), entries}.
_TAKE = """
local stream, turns, bell = KEYS[1], KEYS[2], KEYS[3]
local group, consumer, prefix = ARGV[1], ARGV[2], ARGV[5]
local want, cap = tonumber(ARGV[3]), tonumber(ARGV[4])
local held = {}
for i = 6, #ARGV, 2 do held[ARGV[i]] = tonumber(ARGV[i + 1]) end
local taken = {}
local function read(count)
  local answer = redis.call('XREADGROUP', 'GROUP', group, consumer, 'COUNT', count,
                            'STREAMS', stream, '>')
  if answer then
    for _, entry in ipairs(answer[1][2]) do table.insert(taken, entry) end
  end
end
-- Jobs put in the stream itself (by a version before the owners' lists) go first.
read(want)
want = want - #taken
local added, held_back = 0, 0
while want > 0 do
  local progress = false
  for _ = 1, redis.call('LLEN', turns) do
    if want == 0 then break end
    local owner = redis.call('LPOP', turns)
    if not owner then break end
    if (held[owner] or 0) >= cap then
      redis.call('RPUSH', turns, owner)
      held_back = 1
    else
      local queue = prefix .. owner
      local job = redis.call('LPOP', queue)
      if job then
        if redis.call('LLEN', queue) > 0 then redis.call('RPUSH', turns, owner) end
        local space = string.find(job, ' ', 1, true)
        redis.call('XADD', stream, '*', 'run', string.sub(job, 1, space - 1),
                   'request', string.sub(job, space + 1), 'owner', owner)
        held[owner] = (held[owner] or 0) + 1
        added, want, progress = added + 1, want - 1, true
      end
    end
  end
  if not progress then break end
end
if added > 0 then read(added) end
if redis.call('LLEN', turns) == 0 then
  redis.call('DEL', bell)  -- nothing waits: the rings left are stale
elseif #taken == 0 and held_back == 1 and redis.call('LLEN', bell) == 0 then
  redis.call('RPUSH', bell, '1')  -- for another agent, whose runs are not that owner's
end
return {held_back, taken}
"""


async def enqueue(redis: Redis, pool: str, run_id: str, request: str, owner: str | None) -> bool:
    """Add the job, waiting for its owner's turn, unless one for the run was added already;
    whether it was added."""
    turn = turn_of(run_id, owner)
    added = await redis.eval(
        _ENQUEUE,
        4,
        keys.enqueued(run_id),
        keys.turns(pool),
        keys.waiting(pool, turn),
        keys.bell(pool),
        run_id,
        request,
        ENQUEUED_TTL_SECONDS,
        turn,
    )
    return added is not None


@dataclass(frozen=True)
class Taken:
    """What `take` found."""

    deliveries: list[Delivery]
    held_back: bool  # jobs wait whose owners hold all the asker may give them already


async def take(
    redis: Redis, pool: str, consumer: str, count: int, *, cap: int, held: Mapping[str, int]
) -> Taken:
    """Up to `count` waiting jobs for `consumer`, owners in turn, passing over those that
    hold `cap` of its runs already (`held`: its runs per owner). Does not wait."""
    pairs = [str(part) for owner, runs in held.items() for part in (owner, runs)]
    try:
        held_back, entries = await redis.eval(
            _TAKE,
            3,
            keys.jobs(pool),
            keys.turns(pool),
            keys.bell(pool),
            keys.JOB_GROUP,
            consumer,
            count,
            cap,
            keys.waiting_prefix(pool),
            *pairs,
        )
    except ResponseError as exc:
        if "NOGROUP" not in str(exc):
            raise
        await ensure_group(redis, keys.jobs(pool), keys.JOB_GROUP)
        return Taken([], held_back=False)
    found = []
    for entry_id, flat in entries:
        fields = dict(zip(flat[::2], flat[1::2], strict=True))
        found.append(delivery_of(pool, str(entry_id), fields, 1))
    return Taken(found, held_back=bool(held_back))


async def wait_for_jobs(redis: Redis, pool: str, block_ms: int) -> None:
    """Wait until a job of `pool` is added (its bell rings), `block_ms` at most."""
    await redis.blpop([keys.bell(pool)], timeout=block_ms / 1000)


# KEYS: turns. ARGV: waiting prefix, an owner. Answers {jobs waiting, the place a new job of
# that owner would take in turn order: each owner's jobs up to as many rounds as it needs}.
_WAITING = """
local n, place = 0, 1
local rounds = redis.call('LLEN', ARGV[1] .. ARGV[2]) + 1
for _, owner in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do
  local waiting = redis.call('LLEN', ARGV[1] .. owner)
  n = n + waiting
  place = place + math.min(waiting, rounds)
end
return {n, place}
"""


@dataclass(frozen=True)
class Queue:
    """What waits in a pool: how many jobs, and the place a new one of an owner takes."""

    depth: int  # jobs of the pool no agent has taken yet
    place: int  # 1: the new job is taken next


async def queue_of(redis: Redis, pool: str, owner: str) -> Queue:
    """The pool's jobs that no agent has taken: those waiting for their owner's turn, and
    any in the stream not yet read (delivered ones are in the pending list until their run
    ends; the stream keeps only jobs not yet done); and the place a new job of `owner` would
    take among them."""
    answer = await redis.eval(_WAITING, 1, keys.turns(pool), keys.waiting_prefix(pool), owner)
    waiting, place = int(answer[0]), int(answer[1])
    length = await redis.xlen(keys.jobs(pool))
    try:
        pending = await redis.xpending(keys.jobs(pool), keys.JOB_GROUP)
    except ResponseError:  # no group yet
        unread = int(length)
    else:
        unread = max(0, int(length) - int(pending["pending"]))
    return Queue(waiting + unread, place + unread)


async def depth(redis: Redis, pool: str) -> int:
    """Jobs of `pool` that no agent has taken yet (`queue_of`)."""
    return (await queue_of(redis, pool, "")).depth

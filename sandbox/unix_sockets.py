"""How many Unix sockets a run holds, read from outside it.

Why a run's Unix sockets are counted: a message queued on one is kernel memory in two
parts, its data and the buffer head (`struct sk_buff`, 256 bytes) that carries it. The
kernel charges the data to the run's memory cgroup, but not the head, on cgroup v1 (where
`memory.kmem.limit_in_bytes` is a no-op since Linux 6.1) as on v2. One-byte messages cost
512 bytes of data and 256 of head each, so a run queuing them in enough sockets holds half
its memory limit again outside it (measured: 585 MiB off the host's MemAvailable under a
512 MB limit, tests/sandbox/cases/unix_socket_hoard).

So what one socket may queue is bounded, and so is the number of sockets:
- its send buffer stays at the host's default (`net.core.wmem_default`, 208 KiB: about 280
  messages, 70 KiB of heads): seccomp answers setting SO_SNDBUF with success without
  running it (seccomp.py), as a host whose `wmem_max` is its default would clamp it;
- a run may hold at most MAX_UNIX_SOCKETS at once, which the worker checks every
  POLL_SECONDS (runner.py) and ends the run as `memory_limit` past it. A socket closed with
  messages still queued for its peer lives, and counts, until they are read.

The count is the kernel's own per-network-namespace one (the `sockets` column of
/proc/PID/net/protocols), read through any process of the run once it is in the run's
network namespace; every process of a run shares that namespace (seccomp forbids new
ones)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

MAX_UNIX_SOCKETS = 256  # at most ~18 MiB of buffer heads outside the memory cgroup
POLL_SECONDS = 0.02  # a run fills ~100 sockets in that time on two cores: ~7 MiB more


def network_namespace(pid: int | str) -> tuple[int, int]:
    """The identity of `pid`'s network namespace ("self" for this process)."""
    info = os.stat(f"/proc/{pid}/ns/net")
    return info.st_dev, info.st_ino


def unix_sockets_in(protocols: str) -> int:
    """The Unix sockets (datagram and stream) a /proc/net/protocols text counts."""
    lines = protocols.splitlines()
    column = lines[0].split().index("sockets")
    return sum(
        int(fields[column])
        for fields in (line.split() for line in lines[1:])
        if fields and fields[0] in ("UNIX", "UNIX-STREAM")
    )


class UnixSocketCount:
    """The number of Unix sockets in a run's network namespace, found through the pids of
    its cgroup."""

    def __init__(self, pids: Callable[[], list[int]]) -> None:
        self._pids = pids
        self._host = network_namespace("self")
        self._run: tuple[int, int] | None = None  # the run's namespace, once seen
        self._pid: int | None = None  # a process of the run seen in it

    def read(self) -> int | None:
        """The count now; None while no process of the run is in a namespace of its own yet
        (or none is left)."""
        for pid in self._candidates():
            try:
                namespace = network_namespace(pid)
                if namespace == self._host or self._run not in (None, namespace):
                    continue  # not yet unshared, or a pid since reused outside the run
                count = unix_sockets_in(Path(f"/proc/{pid}/net/protocols").read_text())
                if network_namespace(pid) != namespace:
                    continue  # reused while being read
            except (OSError, ValueError, IndexError):
                continue  # gone meanwhile
            self._run, self._pid = namespace, pid
            return count
        self._pid = None
        return None

    def _candidates(self) -> Iterator[int]:
        if self._pid is not None:
            yield self._pid  # the cgroup is read again only once that one has gone
        yield from self._pids()

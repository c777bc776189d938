"""Counting a run's Unix sockets from outside it (sandbox/unix_sockets.py): the kernel's
count for the run's network namespace, never the host's."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sandbox.unix_sockets import UnixSocketCount, unix_sockets_in

PROTOCOLS = """\
protocol  size sockets  memory press maxhdr  slab module     cl co di ac io in de sh ss gs se
UNIX-STREAM 1152     11      -1   NI       0   yes  kernel      y  n  n  n  n  n  n  n  n  n  n
UNIX      1152      2      -1   NI       0   yes  kernel      y  n  n  n  n  n  n  n  n  n  n
TCP       2560      4      12   no     320   yes  kernel      y  y  y  y  y  y  y  y  y  y  y
"""


def test_the_count_is_unix_stream_and_datagram_sockets_only() -> None:
    assert unix_sockets_in(PROTOCOLS) == 13
    assert unix_sockets_in(Path("/proc/self/net/protocols").read_text()) >= 0


@pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("unshare") is None, reason="needs root and unshare"
)
def test_a_process_in_a_network_namespace_of_its_own_is_counted_there_alone() -> None:
    # 30 socketpairs, one of them with its sending end closed and a message still queued:
    # that end lives (and counts) until the message is read.
    holder = (
        "import socket, sys, time\n"
        "held = [socket.socketpair() for _ in range(30)]\n"
        "held[0][0].send(b'x'); held[0][0].close()\n"
        "print('ready', flush=True)\n"
        "time.sleep(30)\n"
    )
    process = subprocess.Popen(
        ["unshare", "--net", sys.executable, "-c", holder], stdout=subprocess.PIPE
    )
    try:
        assert process.stdout is not None and process.stdout.readline() == b"ready\n"
        host = os.getpid()  # in the host's namespace: passed over
        count = UnixSocketCount(lambda: [host, process.pid])
        assert count.read() == 60
        assert UnixSocketCount(lambda: [host]).read() is None
    finally:
        process.kill()
        process.wait()
    deadline = time.monotonic() + 5
    while count.read() is not None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert count.read() is None  # its process gone: nothing to count

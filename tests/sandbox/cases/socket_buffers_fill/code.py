# Queue data in Unix socket buffers, which live in kernel memory, until something stops us:
# the run's memory cgroup must (it is charged for them), not the host running out.
import socket

SNDBUF = 1 << 30  # the kernel caps it at net.core.wmem_max (x2)
held, total = [], 0
try:
    for kind in [socket.SOCK_STREAM, socket.SOCK_DGRAM] * 2000:
        a, b = socket.socketpair(socket.AF_UNIX, kind)
        a.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SNDBUF)
        b.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, SNDBUF)
        a.setblocking(False)
        held.append((a, b))
        try:
            while True:
                total += a.send(b"x" * 65000)
        except OSError:
            pass  # this pair is full (EAGAIN, or ENOBUFS for datagrams)
except OSError as exc:
    print("stopped by", exc.errno, "after", total >> 20, "MiB in", len(held), "pairs")
print("held", total >> 20, "MiB")
if total > 300 << 20:
    print("HELD MORE THAN THE RUN'S MEMORY LIMIT")

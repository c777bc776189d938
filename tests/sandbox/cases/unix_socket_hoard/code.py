# Hoard Unix socket buffers: many socketpairs, each end's send buffer asked as large as the
# kernel allows, both directions filled with one-byte messages, in several processes (each
# has its own 1024 descriptors). Each queued message costs kernel memory: its data and the
# buffer head that carries it; the head is what a memory cgroup may not count. The parent
# watches the host's MemAvailable: it must not fall by more than the run's limit + 64 MiB.
import os
import socket
import time

LIMIT_MB, MARGIN_MB, PROCESSES = 512, 64, 4


def available_mb():
    with open("/proc/meminfo") as meminfo:
        for line in meminfo:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) >> 10
    raise RuntimeError("no MemAvailable")


def hoard():
    held, messages = [], 0
    try:
        for i in range(2000):
            kind = socket.SOCK_STREAM if i % 2 == 0 else socket.SOCK_DGRAM
            a, b = socket.socketpair(socket.AF_UNIX, kind)
            held.append((a, b))
            for end in (a, b):
                end.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 30)
                end.setblocking(False)
            for end in (a, b):
                try:
                    while True:
                        end.send(b"x")
                        messages += 1
                except OSError:
                    pass  # this direction is full
    except OSError as exc:
        print("stopped by", exc.errno, flush=True)
    print(len(held), "pairs,", messages, "messages", flush=True)
    time.sleep(30)


before = sorted(available_mb() for _ in range(9))[4]
children = []
for _ in range(PROCESSES):
    pid = os.fork()
    if pid == 0:
        hoard()
        os._exit(0)
    children.append(pid)
lowest, deadline = before, time.monotonic() + 20
while time.monotonic() < deadline:
    lowest = min(lowest, available_mb())
    if before - lowest > LIMIT_MB + MARGIN_MB:
        print("HELD MORE THAN THE RUN'S LIMIT: MemAvailable fell", before - lowest, "MiB", flush=True)
        break
    time.sleep(0.01)
print("MemAvailable fell at most", before - lowest, "MiB", flush=True)
for pid in children:
    os.kill(pid, 9)

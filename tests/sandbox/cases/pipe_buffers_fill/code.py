# Fill as many pipes as we may, each grown to the largest size allowed. Pipe buffers are
# charged to the run's memory cgroup, and beyond fs.pipe-user-pages-soft per user (each
# slot has a uid of its own) new pipes get a single page.
import fcntl
import os

F_SETPIPE_SZ = 1031
held, total = [], 0
try:
    for _ in range(1000):
        r, w = os.pipe()
        held.append((r, w))
        try:
            fcntl.fcntl(w, F_SETPIPE_SZ, 1 << 20)
        except OSError:
            pass  # over the per-user soft limit: the pipe keeps its (small) size
        os.set_blocking(w, False)
        try:
            while True:
                total += os.write(w, b"x" * 65536)
        except BlockingIOError:
            pass
except OSError as exc:
    print("stopped by", exc.errno)
print("pipes", len(held), "held", total >> 20, "MiB")
if total > 300 << 20:
    print("HELD MORE THAN THE RUN'S MEMORY LIMIT")

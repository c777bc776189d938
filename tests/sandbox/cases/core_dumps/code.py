# No core of a run may reach the host's core helper: the code is not dumpable, may not make
# itself dumpable again, and may not write a core file either. Then it crashes.
import ctypes
import os
import resource

libc = ctypes.CDLL(None, use_errno=True)
PR_GET_DUMPABLE, PR_SET_DUMPABLE = 3, 4
print("dumpable", libc.prctl(PR_GET_DUMPABLE, 0, 0, 0, 0))
if libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) == 0:
    print("MADE DUMPABLE")
else:
    print("refused PR_SET_DUMPABLE", ctypes.get_errno())
print("core limit", resource.getrlimit(resource.RLIMIT_CORE))
try:
    resource.setrlimit(resource.RLIMIT_CORE, (1 << 30, 1 << 30))
    print("RAISED CORE LIMIT")
except (OSError, ValueError) as exc:
    print("refused core limit:", type(exc).__name__)
child = os.fork()
if child == 0:
    os.abort()
_, status = os.waitpid(child, 0)
# /tmp holds the run's compile cache folder; a core file would be called core or core.N.
cores = [name for name in os.listdir("/tmp") if name.startswith("core")]
print("child core dumped:", os.WCOREDUMP(status), "files:", cores, flush=True)
os.abort()

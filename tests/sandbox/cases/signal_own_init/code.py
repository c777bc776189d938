# The jail's PID 1 must not be something the code can end, limit or fool the verdict with.
import os
import resource
import signal

for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL):
    try:
        os.kill(1, sig)
        print("sent", sig.name)
    except OSError as exc:
        print("refused", sig.name, exc.errno)
try:
    resource.prlimit(1, resource.RLIMIT_AS, (1 << 20, 1 << 20))
    print("LIMITED PID 1")
except OSError as exc:
    print("refused prlimit", exc.errno)
print("done")

import os
import signal

os.kill(-1, signal.SIGKILL)  # every process we may signal: there must be none outside
print("KILLED SOMEONE")

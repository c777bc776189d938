# The app listens on the host's loopback; the run has a network namespace of its own.
import socket

for port in (8000, 8765, 5432, 6379):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2)
        print("CONNECTED", port)
    except OSError as exc:
        print(f"blocked: {port}", exc)
with open("/proc/net/dev") as f:
    names = [line.split(":")[0].strip() for line in f.readlines()[2:]]
print("interfaces:", " ".join(names))

import socket

try:
    socket.create_connection(("1.1.1.1", 443), timeout=3)
    print("CONNECTED to 1.1.1.1")
except OSError as exc:
    print("blocked: 1.1.1.1", exc)
try:
    socket.getaddrinfo("pypi.org", 443)
    print("RESOLVED pypi.org")
except OSError as exc:
    print("blocked: dns", exc)

# Families that could reach past the run's own network namespace are refused.
import socket

for family, name in ((40, "vsock"), (16, "netlink"), (17, "packet")):
    try:
        socket.socket(family, socket.SOCK_DGRAM).close()
        print("OPENED", name)
    except OSError as exc:
        print("refused", name, exc.errno)
socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).close()
print("unix sockets still work")

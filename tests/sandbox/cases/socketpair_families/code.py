# socketpair() is checked like socket(): only AF_UNIX, refused before the kernel even looks
# the family up (which alone could load a module).
import socket

for family, name in ((2, "inet"), (10, "inet6"), (16, "netlink"), (40, "vsock"), (38, "alg")):
    try:
        socket.socketpair(family, socket.SOCK_STREAM)
        print("OPENED", name)
    except OSError as exc:
        print("refused", name, exc.errno)
a, b = socket.socketpair()
a.sendall(b"ping")
print("unix pair:", b.recv(4).decode())

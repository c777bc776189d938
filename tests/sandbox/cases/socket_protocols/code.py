# Of the inet families only plain TCP and UDP: raw and ping sockets, SCTP, DCCP, UDP-Lite and
# other types are refused (EPROTONOSUPPORT, as on a kernel without them), so none can make
# the kernel load a module or reach a less-used protocol.
import socket

refused = [
    ("raw", socket.AF_INET, socket.SOCK_RAW, 1),
    ("ping", socket.AF_INET, socket.SOCK_DGRAM, 1),
    ("sctp", socket.AF_INET, socket.SOCK_STREAM, 132),
    ("sctp-seqpacket", socket.AF_INET6, socket.SOCK_SEQPACKET, 132),
    ("dccp", socket.AF_INET, 6, 33),
    ("udplite", socket.AF_INET6, socket.SOCK_DGRAM, 136),
    ("tcp-as-dgram", socket.AF_INET, socket.SOCK_DGRAM, 6),
]
for name, family, kind, proto in refused:
    try:
        socket.socket(family, kind, proto).close()
        print("OPENED", name)
    except OSError as exc:
        print("refused", name, exc.errno)
for name, family, kind, proto in (
    ("tcp", socket.AF_INET, socket.SOCK_STREAM | socket.SOCK_NONBLOCK, 0),
    ("tcp6", socket.AF_INET6, socket.SOCK_STREAM, 6),
    ("udp", socket.AF_INET, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC, 17),
):
    socket.socket(family, kind, proto).close()
    print("allowed", name)

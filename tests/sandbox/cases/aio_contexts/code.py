# Every AIO context comes from the host-wide fs.aio-max-nr pool: taking it whole would stop
# the host's databases. io_setup answers ENOSYS, as on a kernel without AIO.
import ctypes

libc = ctypes.CDLL(None, use_errno=True)
ctx = ctypes.c_ulong(0)
for _ in range(3):
    if libc.syscall(206, 65536, ctypes.byref(ctx)) == 0:  # io_setup
        print("GOT an AIO context")
    else:
        print("refused io_setup", ctypes.get_errno())

import ctypes

libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNET = 0x40000000
SIGCHLD = 17
libc.syscall(56, CLONE_NEWNET | SIGCHLD, 0, 0, 0, 0)  # raw clone(2)
print("clone returned")

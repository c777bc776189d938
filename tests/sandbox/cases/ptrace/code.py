import ctypes

PTRACE_ATTACH = 16
ctypes.CDLL(None, use_errno=True).ptrace(PTRACE_ATTACH, 1, 0, 0)
print("ptrace returned")

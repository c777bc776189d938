# modify_ldt: per-process descriptor tables, a classic kernel attack surface. It kills.
import ctypes

print("calling modify_ldt", flush=True)
ctypes.CDLL(None).syscall(154, 0, None, 0)
print("STILL HERE")

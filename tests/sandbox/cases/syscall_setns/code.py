import ctypes
import os

fd = os.open("/proc/self/ns/net", os.O_RDONLY)
ctypes.CDLL(None, use_errno=True).setns(fd, 0)
print("setns returned")

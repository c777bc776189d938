# Huge pages come from a host-wide pool that the memory cgroup does not count: every way to
# ask for them is refused, as on a host without huge pages.
import ctypes
import mmap
import os

libc = ctypes.CDLL(None, use_errno=True)
MAP_HUGETLB, MFD_HUGETLB, SHM_HUGETLB, IPC_CREAT = 0x40000, 0x4, 0o4000, 0o1000
SIZE = 2 << 20
try:
    mmap.mmap(-1, SIZE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | MAP_HUGETLB)
    print("GOT mmap")
except OSError as exc:
    print("refused mmap", exc.errno)
try:
    os.memfd_create("huge", MFD_HUGETLB)
    print("GOT memfd")
except OSError as exc:
    print("refused memfd", exc.errno)
if libc.syscall(29, 0, SIZE, IPC_CREAT | SHM_HUGETLB | 0o600) >= 0:  # shmget
    print("GOT shm")
else:
    print("refused shmget", ctypes.get_errno())
mmap.mmap(-1, SIZE).close()
print("normal pages still work")

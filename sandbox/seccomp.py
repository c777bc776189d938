"""A seccomp deny-list, written as a classic BPF program (no libseccomp needed).

Denied calls kill the whole process (SIGSYS), which the worker reports as `killed`: they are
calls no PyTorch sample needs and that widen the attack surface of the kernel or reach
outside the jail. Everything else is allowed."""

from __future__ import annotations

import ctypes
import os
import platform
import struct

# struct seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6]
_NR, _ARCH, _ARG0 = 0, 4, 16
_AUDIT_ARCH_X86_64 = 0xC000003E
_X32_SYSCALL_BIT = 0x40000000

_BPF_LD_W_ABS = 0x20
_BPF_JEQ_K = 0x15
_BPF_JGE_K = 0x35
_BPF_JSET_K = 0x45
_BPF_RET_K = 0x06
_RET_KILL_PROCESS = 0x80000000
_RET_ERRNO = 0x00050000
_RET_ALLOW = 0x7FFF0000
_ENOSYS = 38

_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2

# x86-64 numbers of the denied calls, by name (for the README and error messages).
DENIED_X86_64: dict[str, int] = {
    "ptrace": 101,
    "syslog": 103,
    "uselib": 134,
    "vhangup": 153,
    "pivot_root": 155,
    "_sysctl": 156,
    "adjtimex": 159,
    "chroot": 161,
    "acct": 163,
    "settimeofday": 164,
    "mount": 165,
    "umount2": 166,
    "swapon": 167,
    "swapoff": 168,
    "reboot": 169,
    "sethostname": 170,
    "setdomainname": 171,
    "iopl": 172,
    "ioperm": 173,
    "create_module": 174,
    "init_module": 175,
    "delete_module": 176,
    "get_kernel_syms": 177,
    "query_module": 178,
    "quotactl": 179,
    "nfsservctl": 180,
    "lookup_dcookie": 212,
    "clock_settime": 227,
    "kexec_load": 246,
    "add_key": 248,
    "request_key": 249,
    "keyctl": 250,
    "unshare": 272,
    "perf_event_open": 298,
    "name_to_handle_at": 303,
    "open_by_handle_at": 304,
    "clock_adjtime": 305,
    "setns": 308,
    "process_vm_readv": 310,
    "process_vm_writev": 311,
    "kcmp": 312,
    "finit_module": 313,
    "kexec_file_load": 320,
    "bpf": 321,
    "userfaultfd": 323,
    "io_uring_setup": 425,
    "io_uring_enter": 426,
    "io_uring_register": 427,
    "open_tree": 428,
    "move_mount": 429,
    "fsopen": 430,
    "fsconfig": 431,
    "fsmount": 432,
    "fspick": 433,
    "mount_setattr": 442,
}
_CLONE, _CLONE3, _SOCKET = 56, 435, 41
_EAFNOSUPPORT = 97
# Socket families a sample may open: AF_UNIX, AF_INET, AF_INET6 (all inside the run's own
# network namespace). Others (vsock, netlink, packet, ...) could reach past that namespace.
_ALLOWED_FAMILIES = (1, 2, 10)
# Calls numbered from here on are newer than this filter: answer ENOSYS (as an older kernel
# would) rather than allow what nobody has reviewed.
_FIRST_UNREVIEWED = 463
# clone() may make threads and processes, never new namespaces.
_CLONE_NAMESPACE_FLAGS = (
    0x00020000  # CLONE_NEWNS
    | 0x02000000  # CLONE_NEWCGROUP
    | 0x04000000  # CLONE_NEWUTS
    | 0x08000000  # CLONE_NEWIPC
    | 0x10000000  # CLONE_NEWUSER
    | 0x20000000  # CLONE_NEWPID
    | 0x40000000  # CLONE_NEWNET
    | 0x00000080  # CLONE_NEWTIME
)


def supported() -> bool:
    """The filter is written for x86-64 Linux."""
    return platform.system() == "Linux" and platform.machine() == "x86_64"


def _insn(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("HBBI", code, jt, jf, k)


def build_filter() -> bytes:
    """The BPF program, as the kernel's array of struct sock_filter."""
    prog = [
        _insn(_BPF_LD_W_ABS, 0, 0, _ARCH),
        _insn(_BPF_JEQ_K, 1, 0, _AUDIT_ARCH_X86_64),
        _insn(_BPF_RET_K, 0, 0, _RET_KILL_PROCESS),  # another ABI: refuse outright
        _insn(_BPF_LD_W_ABS, 0, 0, _NR),
        _insn(_BPF_JGE_K, 0, 1, _X32_SYSCALL_BIT),
        _insn(_BPF_RET_K, 0, 0, _RET_KILL_PROCESS),  # the x32 ABI aliases every call
    ]
    for number in sorted(DENIED_X86_64.values()):
        prog += [_insn(_BPF_JEQ_K, 0, 1, number), _insn(_BPF_RET_K, 0, 0, _RET_KILL_PROCESS)]
    prog += [
        _insn(_BPF_JGE_K, 0, 1, _FIRST_UNREVIEWED),
        _insn(_BPF_RET_K, 0, 0, _RET_ERRNO | _ENOSYS),
    ]
    # socket(family, ...): the listed families, else EAFNOSUPPORT.
    n = len(_ALLOWED_FAMILIES)
    # Not socket: skip the load, the n checks and both returns.
    prog += [_insn(_BPF_JEQ_K, 0, n + 3, _SOCKET), _insn(_BPF_LD_W_ABS, 0, 0, _ARG0)]
    for i, family in enumerate(_ALLOWED_FAMILIES):
        prog.append(_insn(_BPF_JEQ_K, n - i, 0, family))  # match: jump to ALLOW
    prog += [
        _insn(_BPF_RET_K, 0, 0, _RET_ERRNO | _EAFNOSUPPORT),
        _insn(_BPF_RET_K, 0, 0, _RET_ALLOW),
    ]
    # clone3 passes its flags in memory BPF cannot read: answer ENOSYS and glibc falls back
    # to clone, whose flags we can check.
    prog += [_insn(_BPF_JEQ_K, 0, 1, _CLONE3), _insn(_BPF_RET_K, 0, 0, _RET_ERRNO | _ENOSYS)]
    prog += [
        _insn(_BPF_JEQ_K, 0, 3, _CLONE),
        _insn(_BPF_LD_W_ABS, 0, 0, _ARG0),  # low 32 bits of the flags hold every CLONE_NEW*
        _insn(_BPF_JSET_K, 0, 1, _CLONE_NAMESPACE_FLAGS),
        _insn(_BPF_RET_K, 0, 0, _RET_KILL_PROCESS),
        _insn(_BPF_RET_K, 0, 0, _RET_ALLOW),
    ]
    return b"".join(prog)


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def install() -> None:
    """Set no_new_privs and load the filter into this (single-threaded) process."""
    libc = ctypes.CDLL(None, use_errno=True)
    program = build_filter()
    buffer = ctypes.create_string_buffer(program)
    fprog = _SockFprog(len(program) // 8, ctypes.addressof(buffer))
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
    if libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"prctl(PR_SET_SECCOMP) failed: {os.strerror(err)}")

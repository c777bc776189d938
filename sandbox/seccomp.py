"""The jail's system-call filter: a deny-list, assembled as classic BPF (bpf.py; no libseccomp).

Three answers besides allowing a call:
- kill the whole process (SIGSYS; the verdict is `killed`): calls no PyTorch sample needs
  that widen the kernel's attack surface or reach outside the jail;
- an error, without running the call: where a library may reasonably try the call and has a
  way on without it, the answer is the one a kernel lacking the feature would give
  (ENOSYS, EAFNOSUPPORT, ...), so the library takes that way;
- success, without running the call: the sync family. Everything a run can write lives in
  tmpfs, where there is nothing to flush, so the answer is true for the run's own files,
  libraries (SQLite's fsync, say) keep working, and no run can make the host flush its
  disks (a loop of fsync on a read-only host file would, through the read-only binds).
"""

from __future__ import annotations

import ctypes
import os
import platform

from sandbox.bpf import (
    ARCH,
    JEQ_K,
    JGE_K,
    JSET_K,
    NR,
    RET_ALLOW,
    RET_KILL_PROCESS,
    Program,
    arg_low,
    errno,
)

_AUDIT_ARCH_X86_64 = 0xC000003E
_X32_SYSCALL_BIT = 0x40000000
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2
EPERM, EINVAL, ENOMEM, ENOSYS, EPROTONOSUPPORT, EAFNOSUPPORT = 1, 22, 12, 38, 93, 97

# x86-64 numbers of the calls that kill, by name (for the README and error messages).
DENIED_X86_64: dict[str, int] = {
    "ptrace": 101,
    "syslog": 103,
    "uselib": 134,
    "modify_ldt": 154,  # per-process descriptor tables: a classic kernel attack surface
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
    # Unprivileged since 5.13: it would see when other runs (and the host) open the
    # read-only files every jail shares.
    "fanotify_init": 300,
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
    "quotactl_fd": 443,
}
# Calls answered without running them: name -> (number, errno; 0 means success).
ANSWERED_X86_64: dict[str, tuple[int, int]] = {
    # Every AIO context comes from the host-wide fs.aio-max-nr pool, which one run could
    # take whole; ENOSYS is what a kernel without AIO says, and libaio users fall back.
    "io_setup": (206, ENOSYS),
    # clone3 passes its flags in memory BPF cannot read: glibc falls back to clone, whose
    # flags are checked below.
    "clone3": (435, ENOSYS),
    "sync": (162, 0),
    "syncfs": (306, 0),
    "sync_file_range": (277, 0),
    "fsync": (74, 0),
    "fdatasync": (75, 0),
}
# Calls numbered from here on are newer than this filter: answer ENOSYS (as an older kernel
# would) rather than allow what nobody has reviewed.
_FIRST_UNREVIEWED = 463

_SOCKET, _SOCKETPAIR, _CLONE, _MMAP, _MEMFD_CREATE, _SHMGET, _PRCTL = 41, 53, 56, 9, 319, 29, 157
_SETSOCKOPT = 54
SOL_SOCKET, SO_SNDBUF, SO_SNDBUFFORCE = 1, 7, 32
AF_UNIX, AF_INET, AF_INET6 = 1, 2, 10
SOCK_STREAM, SOCK_DGRAM, SOCK_TYPE_MASK = 1, 2, 0xF  # the type without NONBLOCK / CLOEXEC
IPPROTO_TCP, IPPROTO_UDP = 6, 17
MAP_HUGETLB, MFD_HUGETLB, SHM_HUGETLB = 0x40000, 0x4, 0x800
PR_SET_DUMPABLE = 4
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


def build_filter() -> bytes:
    """The BPF program, as the kernel's array of struct sock_filter."""
    p = Program()
    p.load(ARCH)
    p.jump(JEQ_K, _AUDIT_ARCH_X86_64, true="x86_64")
    p.ret(RET_KILL_PROCESS)  # another ABI: refuse outright
    p.label("x86_64")
    p.load(NR)
    p.ret_if(_X32_SYSCALL_BIT, RET_KILL_PROCESS, test=JGE_K)  # x32 aliases every call
    for number in sorted(DENIED_X86_64.values()):
        p.ret_if(number, RET_KILL_PROCESS)
    for number, code in sorted(ANSWERED_X86_64.values()):
        p.ret_if(number, errno(code))
    p.ret_if(_FIRST_UNREVIEWED, errno(ENOSYS), test=JGE_K)
    checked = {
        _SOCKET: "socket",
        _SOCKETPAIR: "socketpair",
        _CLONE: "clone",
        _MMAP: "mmap",
        _MEMFD_CREATE: "memfd_create",
        _SHMGET: "shmget",
        _PRCTL: "prctl",
        _SETSOCKOPT: "setsockopt",
    }
    for number, name in checked.items():
        p.jump(JEQ_K, number, true=name)
    p.ret(RET_ALLOW)
    _socket_checks(p)
    _flag_checks(p)
    p.label("allow")
    p.ret(RET_ALLOW)
    return p.assemble()


def _socket_checks(p: Program) -> None:
    """socket(): AF_UNIX, and of the inet families plain TCP and UDP only. The run's network
    namespace has no interface up, so these carry nothing; they are kept (rather than
    refused) so that code probing for the network gets the ordinary "network unreachable"
    it handles. Any other family, type or protocol could make the kernel load a module
    (net-pf-N, SCTP, DCCP...) or reach a less-used code path; the answer is what a kernel
    without it gives. socketpair(): AF_UNIX only, checked before the kernel looks the family
    up (which alone can load a module)."""
    p.label("socket")
    p.load(arg_low(0))
    p.jump(JEQ_K, AF_UNIX, true="allow")
    p.jump(JEQ_K, AF_INET, true="inet")
    p.jump(JEQ_K, AF_INET6, true="inet")
    p.ret(errno(EAFNOSUPPORT))
    p.label("inet")
    p.load(arg_low(1))
    p.and_(SOCK_TYPE_MASK)
    p.jump(JEQ_K, SOCK_STREAM, true="stream")
    p.jump(JEQ_K, SOCK_DGRAM, true="dgram")
    p.ret(errno(EPROTONOSUPPORT))
    for label, protocol in (("stream", IPPROTO_TCP), ("dgram", IPPROTO_UDP)):
        p.label(label)
        p.load(arg_low(2))
        p.jump(JEQ_K, 0, true="allow")
        p.jump(JEQ_K, protocol, true="allow")
        p.ret(errno(EPROTONOSUPPORT))
    p.label("socketpair")
    p.load(arg_low(0))
    p.jump(JEQ_K, AF_UNIX, true="allow")
    p.ret(errno(EAFNOSUPPORT))
    # A socket's send buffer bounds what it may queue, in kernel memory the memory cgroup
    # counts only in part (unix_sockets.py): it stays at the host's default. Setting it
    # succeeds without running, as a host whose wmem_max is its default clamps it silently.
    p.label("setsockopt")
    p.load(arg_low(1))
    p.jump(JEQ_K, SOL_SOCKET, false="allow")
    p.load(arg_low(2))
    p.jump(JEQ_K, SO_SNDBUF, true="send_buffer")
    p.jump(JEQ_K, SO_SNDBUFFORCE, true="send_buffer")
    p.ret(RET_ALLOW)
    p.label("send_buffer")
    p.ret(errno(0))


def _flag_checks(p: Program) -> None:
    """Calls refused for one flag. Huge pages come from a host-wide pool the memory cgroup
    does not count: refused as a host without huge pages would (mmap and shmget ENOMEM,
    memfd_create EINVAL), so allocators fall back to normal pages. The code may not make
    itself dumpable again (its core would go to the host's core helper)."""
    p.label("clone")
    p.load(arg_low(0))  # the low 32 bits of the flags hold every CLONE_NEW*
    p.jump(JSET_K, _CLONE_NAMESPACE_FLAGS, false="allow")
    p.ret(RET_KILL_PROCESS)
    for label, arg, flag, code in (
        ("mmap", 3, MAP_HUGETLB, ENOMEM),
        ("memfd_create", 1, MFD_HUGETLB, EINVAL),
        ("shmget", 2, SHM_HUGETLB, ENOMEM),
    ):
        p.label(label)
        p.load(arg_low(arg))
        p.jump(JSET_K, flag, false="allow")
        p.ret(errno(code))
    p.label("prctl")
    p.load(arg_low(0))
    p.jump(JEQ_K, PR_SET_DUMPABLE, false="allow")
    p.ret(errno(EPERM))


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

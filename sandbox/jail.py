"""What happens between the zygote's fork and the user's first line of code.

The forked supervisor joins the run's cgroups and unshares every namespace; its child becomes
PID 1 of a fresh PID namespace, builds a minimal read-only root with a private size-limited
/tmp, chroots into it, drops to an unprivileged user without capabilities, sets
no_new_privs and the seccomp filter, and forks the process that executes the code (with a
CPU-time limit, which the kernel would not enforce on a PID 1). When PID 1 exits, the kernel
kills everything left in its namespace: nothing outlives a run."""

from __future__ import annotations

import ctypes
import json
import os
import resource
import signal
import traceback
from dataclasses import dataclass
from pathlib import Path

from sandbox import seccomp, user_code

_libc = ctypes.CDLL(None, use_errno=True)

CLONE_NEWNS = 0x00020000
CLONE_NEWCGROUP = 0x02000000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
# Every namespace a run gets of its own (user namespaces are not needed: we start as root).
NAMESPACE_FLAGS = (
    CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP
)
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
PR_SET_PDEATHSIG, PR_CAPBSET_DROP = 1, 24
# How the jail's processes exit when they could not build the jail: no code has run.
SETUP_FAILED = 126

# Devices a PyTorch program may open; everything else in /dev stays out of reach.
DEVICES = ("null", "zero", "full", "random", "urandom")


@dataclass(frozen=True)
class JailSpec:
    """Everything the jailed process needs, sent by the worker through the zygote."""

    root_dir: str  # an empty host directory the new root is mounted on
    uid: int  # unprivileged user and group the code runs as
    init_uid: int  # another one for the jail's PID 1, so the code cannot signal or limit it
    tmp_mb: int
    cpu_seconds: float
    threads: int
    cgroup_procs: list[str]
    readonly_paths: list[str]  # host paths visible, read-only, at the same place
    cuda: bool = False
    gpu_memory_fraction: float = 0.5


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str = "") -> None:
    _check(
        _libc.mount(
            source.encode() if source else None,
            target.encode(),
            fstype.encode() if fstype else None,
            flags,
            data.encode() if data else None,
        ),
        f"mount {target}",
    )


def _bind_readonly(host_path: str, root: str) -> None:
    source = Path(host_path)
    target = Path(root + host_path)
    if source.is_symlink():
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists():
            target.symlink_to(os.readlink(source))
        return
    if source.is_dir():
        target.mkdir(parents=True, exist_ok=True)
    else:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.touch()
    _mount(str(source), str(target), None, MS_BIND)
    _mount(None, str(target), None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)


def supervise(spec: JailSpec, stdout_fd: int, stderr_fd: int, status_fd: int, code_fd: int) -> None:
    """Runs in the process the zygote forked (outside the jail); never returns. The code
    arrives in `code_fd` (a memfd) and is read only in here, after the fork: the zygote never
    holds any run's code, so no later fork of it can find one in its memory.

    Writes JSON lines to `status_fd`: {"status": wait status of the code} from inside the
    jail, then {"init": wait status of the jail's PID 1} from here."""
    code = 125
    try:
        for procs in spec.cgroup_procs:
            Path(procs).write_text(str(os.getpid()))
        _check(_libc.unshare(NAMESPACE_FLAGS), "unshare")
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # the zygote ignores it; we must wait
        init = os.fork()
        if init == 0:
            _init(spec, stdout_fd, stderr_fd, status_fd, code_fd)
        os.close(stdout_fd)
        os.close(stderr_fd)
        os.close(code_fd)
        _, status = os.waitpid(init, 0)
        report: dict[str, object] = {"init": status}
    except BaseException as exc:  # report the failure instead of dying silently
        report = {"error": f"{type(exc).__name__}: {exc}"}
    try:
        os.write(status_fd, json.dumps(report).encode() + b"\n")
        code = 0
    finally:
        os._exit(code)


def _read_code(code_fd: int) -> str:
    os.lseek(code_fd, 0, os.SEEK_SET)
    chunks = []
    while chunk := os.read(code_fd, 1 << 16):
        chunks.append(chunk)
    os.close(code_fd)
    return b"".join(chunks).decode("utf-8")


def _init(spec: JailSpec, stdout_fd: int, stderr_fd: int, status_fd: int, code_fd: int) -> None:
    """PID 1 of the new namespace: build the jail, start the code, reap, report. When this
    process exits the kernel kills whatever the code left behind."""
    try:
        _check(_libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "prctl(PDEATHSIG)")
        # PID 1 gets only the signals it has handlers for: leave it none (Python's SIGINT
        # handler would let the code end it with a KeyboardInterrupt).
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        code = _read_code(code_fd)
        _build_root(spec)
        _set_limits(spec)
        os.dup2(stdout_fd, 1)
        os.dup2(stderr_fd, 2)
        null = os.open("/dev/null", os.O_RDONLY)
        os.dup2(null, 0)
        for fd in (stdout_fd, stderr_fd, null):
            if fd > 2:
                os.close(fd)
        os.closerange(3, status_fd)
        os.closerange(status_fd + 1, 65536)
    except BaseException:
        # The jail could not be built: say so on the run's stderr and stop before any code.
        try:
            os.write(stderr_fd, b"sandbox setup failed:\n" + traceback.format_exc().encode())
        finally:
            os._exit(SETUP_FAILED)
    program = os.fork()
    if program == 0:
        try:
            os.close(status_fd)
            signal.signal(signal.SIGINT, signal.default_int_handler)
            _become(spec.uid)
            user_code.set_environment(spec.threads)
            seccomp.install()
            cpu = int(spec.cpu_seconds)
            resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 2))
        except BaseException:
            os.write(2, b"sandbox setup failed:\n" + traceback.format_exc().encode())
            os._exit(SETUP_FAILED)
        os._exit(user_code.run(code, spec.threads, spec.cuda, spec.gpu_memory_fraction))
    os.close(1)
    os.close(2)
    _become(spec.init_uid)
    seccomp.install()
    while True:  # as PID 1 we also reap the code's orphans
        pid, status = os.waitpid(-1, 0)
        if pid == program:
            break
    os.write(status_fd, json.dumps({"status": status}).encode() + b"\n")
    os._exit(0)


def _build_root(spec: JailSpec) -> None:
    root = spec.root_dir
    _mount(None, "/", None, MS_REC | MS_PRIVATE)  # nothing we mount leaks to the host
    _mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "size=16m,mode=755")
    for name in ("proc", "dev", "tmp"):
        os.makedirs(f"{root}/{name}", exist_ok=True)
    _mount("proc", f"{root}/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    # /tmp first: a read-only path that lives under /tmp (a checkout there, say) is then
    # mounted inside the private /tmp rather than hidden by it.
    _mount("tmpfs", f"{root}/tmp", "tmpfs", MS_NOSUID | MS_NODEV, f"size={spec.tmp_mb}m,mode=1777")
    for path in spec.readonly_paths:
        if os.path.lexists(path):
            _bind_readonly(path, root)
    # The host's boot command line says nothing a sample needs.
    _mount("/dev/null", f"{root}/proc/cmdline", None, MS_BIND)
    _mount("tmpfs", f"{root}/dev", "tmpfs", MS_NOSUID, "size=64k,mode=755")
    devices = list(DEVICES)
    if spec.cuda:
        devices += [d for d in os.listdir("/dev") if d.startswith("nvidia")]
    for name in devices:
        if os.path.exists(f"/dev/{name}"):
            Path(f"{root}/dev/{name}").touch()
            _mount(f"/dev/{name}", f"{root}/dev/{name}", None, MS_BIND)
    os.makedirs(f"{root}/dev/shm")
    _mount("tmpfs", f"{root}/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "size=64m,mode=1777")
    for name, target in (
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
    ):
        os.symlink(target, f"{root}/dev/{name}")
    # The root itself becomes read-only once its mount points exist.
    _mount(None, root, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
    os.chroot(root)
    os.chdir("/tmp")


def _set_limits(spec: JailSpec) -> None:
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))
    # One file may not outgrow /tmp itself (a cheap guard should /dev/shm be larger).
    resource.setrlimit(resource.RLIMIT_FSIZE, ((spec.tmp_mb + 1) * 1024 * 1024,) * 2)
    for cap in range(64):  # empty the bounding set while we still may
        if _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            break


def _become(uid: int) -> None:
    """From root to an unprivileged user and group: every capability goes."""
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)

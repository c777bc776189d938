"""What happens between the zygote's fork and the user's first line of code.

The forked supervisor ties its life to the zygote's, joins the run's cgroups and unshares
every namespace; its child becomes PID 1 of a fresh PID namespace, takes the host name
`sandbox`, builds a minimal read-only root with a private size-limited /tmp and an /etc of
its own (mounts.py), chroots into it, drops to an unprivileged user without capabilities,
sets no_new_privs, makes itself undumpable, loads the seccomp filter, and forks the process
that executes the code (with a CPU-time limit, which the kernel would not enforce on a
PID 1). When PID 1 exits, the kernel kills everything left in its namespace: nothing
outlives a run."""

from __future__ import annotations

import ctypes
import json
import os
import resource
import select
import signal
import traceback
from pathlib import Path

from sandbox import seccomp, user_code
from sandbox.jail_spec import JailSpec
from sandbox.mounts import build_root, check

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
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_CAPBSET_DROP = 1, 4, 24
# How the jail's processes exit when they could not build the jail: no code has run.
SETUP_FAILED = 126
HOSTNAME = b"sandbox"  # the jail's UTS namespace: nothing of the host's name
IDLE_NICE = 19  # the lowest priority a process can have


def supervise(
    spec: JailSpec,
    zygote: int,
    stdout_fd: int,
    stderr_fd: int,
    status_fd: int,
    code_fd: int,
    channel_fd: int = -1,
) -> None:
    """Runs in the process the zygote forked (outside the jail); never returns. The code
    arrives in `code_fd` (a memfd) and is read only in here, after the fork: the zygote never
    holds any run's code, so no later fork of it can find one in its memory.

    Writes JSON lines to `status_fd`: {"status": wait status of the code} from inside the
    jail, then {"init": wait status of the jail's PID 1} from here. `channel_fd`, in a
    graded run, is this jail's end of the socket between the learner and the grader."""
    code = 125
    try:
        # Die with the zygote (which dies with the worker, see launch.py): a jail never
        # outlives the worker that watches its clocks. Checked once set, in case the zygote
        # was already gone and we had been handed to another parent.
        check(_libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "prctl(PDEATHSIG)")
        if os.getppid() != zygote:
            raise OSError("the zygote exited before the run started")
        for procs in spec.cgroup_procs:
            Path(procs).write_text(str(os.getpid()))
        if spec.warm:
            # Warming the compile cache yields to everything else on the host: every process
            # of the jail inherits this, and the code, unprivileged, cannot raise it again.
            os.setpriority(os.PRIO_PROCESS, 0, IDLE_NICE)
        check(_libc.unshare(NAMESPACE_FLAGS), "unshare")
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # the zygote ignores it; we must wait
        # Held open by this process alone, for as long as it lives: PID 1 reads its end to
        # learn whether we are still here (see _init).
        lifeline, lifeline_w = os.pipe()
        init = os.fork()
        if init == 0:
            os.close(lifeline_w)
            _init(spec, lifeline, stdout_fd, stderr_fd, status_fd, code_fd, channel_fd)
        os.close(lifeline)
        os.close(stdout_fd)
        os.close(stderr_fd)
        os.close(code_fd)
        if channel_fd >= 0:
            os.close(channel_fd)
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


def _init(
    spec: JailSpec,
    lifeline: int,
    stdout_fd: int,
    stderr_fd: int,
    status_fd: int,
    code_fd: int,
    channel_fd: int,
) -> None:
    """PID 1 of the new namespace: build the jail, start the code, reap, report. When this
    process exits the kernel kills whatever the code left behind; it dies with the
    supervisor (so with the zygote, so with the worker)."""
    try:
        check(_libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "prctl(PDEATHSIG)")
        # PID 1 gets only the signals it has handlers for: leave it none (Python's SIGINT
        # handler would let the code end it with a KeyboardInterrupt).
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        code = _read_code(code_fd)
        check(_libc.sethostname(HOSTNAME, len(HOSTNAME)), "sethostname")
        build_root(spec)
        _set_limits(spec)
        os.dup2(stdout_fd, 1)
        os.dup2(stderr_fd, 2)
        null = os.open("/dev/null", os.O_RDONLY)
        os.dup2(null, 0)
        for fd in (stdout_fd, stderr_fd, null):
            if fd > 2:
                os.close(fd)
        _close_all_but(status_fd, lifeline, *([channel_fd] if channel_fd >= 0 else []))
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
            os.close(lifeline)
            signal.signal(signal.SIGINT, signal.default_int_handler)
            _become(spec.uid)
            _no_core_dumps()
            user_code.set_environment(spec.threads, warm=spec.warm)
            seccomp.install()
            cpu = int(spec.cpu_seconds)
            resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 2))
        except BaseException:
            os.write(2, b"sandbox setup failed:\n" + traceback.format_exc().encode())
            os._exit(SETUP_FAILED)
        os._exit(_program(spec, code, channel_fd))
    if channel_fd >= 0:
        os.close(channel_fd)  # PID 1 never talks to the other jail
    os.close(1)
    os.close(2)
    _become(spec.init_uid)
    _no_core_dumps()
    # Changing uid cleared the parent-death signal: set it again, then make sure the
    # supervisor did not die in between (its end of the lifeline would then be closed).
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if select.select([lifeline], [], [], 0)[0]:
        os._exit(SETUP_FAILED)
    os.close(lifeline)
    seccomp.install()
    while True:  # as PID 1 we also reap the code's orphans
        pid, status = os.waitpid(-1, 0)
        if pid == program:
            break
    os.write(status_fd, json.dumps({"status": status}).encode() + b"\n")
    os._exit(0)


def _program(spec: JailSpec, code: str, channel_fd: int) -> int:
    """The jail's last process, by role. The grading modules were imported by the zygote
    (the jail does not mount the sandbox package), so these imports find them loaded."""
    if spec.role == "learner":
        from sandbox.grading import learner

        return learner.run(code, channel_fd, spec.threads, spec.cuda, spec.gpu_memory_fraction)
    if spec.role == "grader":
        from sandbox.grading import grader

        return grader.run(code, channel_fd, spec.threads)
    # A plain run's channel is its phase pipe (phases.py).
    return user_code.run(code, spec.threads, spec.cuda, spec.gpu_memory_fraction, channel_fd)


def _close_all_but(*keep: int) -> None:
    """Close every descriptor from 3 on but `keep`: nothing of the zygote's reaches the code."""
    low = 3
    for fd in sorted(keep):
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, 65536)


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


def _no_core_dumps() -> None:
    """No core of a run reaches the host: RLIMIT_CORE is 0 (set in _set_limits, for core
    files) and the process is not dumpable (for a core_pattern that pipes to a helper, which
    ignores RLIMIT_CORE). Changing uid already cleared the flag where fs.suid_dumpable is 0;
    this holds whatever it is, and seccomp keeps the code from setting it back."""
    check(_libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0), "prctl(PR_SET_DUMPABLE)")

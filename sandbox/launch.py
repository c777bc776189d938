"""Start a zygote in a mount namespace of its own, where Python, the virtual environment, the
sandbox package and the jails' /etc have neutral names (neutral.py):

    python -m sandbox.launch <state-dir> <backend> <fd> <worker-pid>    (by the worker only)

/opt there is a small tmpfs holding
    /opt/python   the installation     (an overlay of it, read-only)
    /opt/venv     the virtual env      (an overlay: the worker's thin layer over it)
    /opt/lib      the sandbox package  (for the zygote's own imports; no jail mounts it)
    /opt/lab      sandbox/lab          (an overlay: the harness labs import, backprop_lab)
    /opt/etc      the built /etc       (copied; a jail binds it at /etc)
Overlays rather than bind mounts because a bind shows, in /proc/self/mountinfo, its source's
path within its file system (the checkout's); an overlay shows the lower folders as they
were named when mounting, here /proc/self/fd/N. The host's own /opt is hidden from the
zygote and its jails (none of them uses it).

Then this process becomes the zygote (exec), importing everything from the neutral paths."""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import sys
from pathlib import Path

import sandbox
from sandbox.mounts import (
    MS_BIND,
    MS_NODEV,
    MS_NOSUID,
    MS_PRIVATE,
    MS_RDONLY,
    MS_REC,
    MS_REMOUNT,
    check,
    mount,
)
from sandbox.neutral import (
    ETC_SOURCE,
    JAIL_LAB,
    JAIL_PYTHON,
    JAIL_VENV,
    ZYGOTE_LIB,
    PythonView,
    lab_source,
    zygote_python_path,
)

_libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNS = 0x00020000
PR_SET_PDEATHSIG = 1
READ_ONLY = MS_RDONLY | MS_NOSUID | MS_NODEV


def main(state_dir: Path, backend: str, control_fd: int, worker: int) -> None:
    # Die with the worker. The kernel sends this when the *thread* that forked us ends:
    # zygotes are started from the worker's event loop, in its main thread, which lives as
    # long as the worker. Kept across exec; checked once set, in case the worker is gone.
    check(_libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "prctl(PDEATHSIG)")
    if os.getppid() != worker:
        sys.exit("the worker exited while starting this zygote")
    view = PythonView.of_this_python()
    check(_libc.unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    mount(None, "/", None, MS_REC | MS_PRIVATE)  # nothing mounted here reaches the host
    # Every source opened before /opt is covered: any of them may live under the host's /opt.
    sources = {
        "base": view.base,
        "venv": view.venv,
        "layer": str(state_dir / "venv-layer"),
        "package": os.path.dirname(sandbox.__file__),
        "etc": str(state_dir / "etc"),
        "lab": str(lab_source() or ""),
    }
    fds = {k: os.open(v, os.O_PATH | os.O_DIRECTORY) for k, v in sources.items() if v}
    try:
        _populate(view, {k: f"/proc/self/fd/{fd}" for k, fd in fds.items()})
    finally:
        for fd in fds.values():
            os.close(fd)
    os.chdir("/")
    executable = view.zygote_executable()
    # The worker started this process with the zygote's whole environment (zygote_env):
    # passed on as given, so that the worker alone decides it.
    env = {**os.environ, "PYTHONPATH": zygote_python_path()}
    os.execve(executable, [executable, "-m", "sandbox.zygote", backend, str(control_fd)], env)


def _populate(view: PythonView, source: dict[str, str]) -> None:
    mount("tmpfs", "/opt", "tmpfs", MS_NOSUID | MS_NODEV, "size=16m,mode=755")
    # A read-only overlay needs two lower layers: an empty one where there is nothing to add.
    os.mkdir("/opt/.empty")
    if view.base_moved:
        _overlay(JAIL_PYTHON, source["base"], "/opt/.empty")
    if view.venv:
        _overlay(JAIL_VENV, source["layer"], source["venv"])
    if "lab" in source:
        _overlay(JAIL_LAB, source["lab"], "/opt/.empty")
    os.makedirs(f"{ZYGOTE_LIB}/sandbox")
    mount(source["package"], f"{ZYGOTE_LIB}/sandbox", None, MS_BIND)
    mount(None, f"{ZYGOTE_LIB}/sandbox", None, MS_BIND | MS_REMOUNT | READ_ONLY)
    shutil.copytree(source["etc"], ETC_SOURCE, symlinks=True)
    os.chmod(ETC_SOURCE, 0o755)
    mount(None, "/opt", None, MS_REMOUNT | READ_ONLY)


def _overlay(target: str, upper_lower: str, lower: str) -> None:
    os.mkdir(target)
    mount("overlay", target, "overlay", READ_ONLY, f"lowerdir={upper_lower}:{lower}")


if __name__ == "__main__":
    try:
        main(Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    except OSError as exc:
        with contextlib.suppress(OSError):
            print(f"sandbox: cannot start the {sys.argv[2]} zygote: {exc}", file=sys.stderr)
        sys.exit(1)

"""What this host offers the sandbox: whether it can isolate code at all, and which backends
(CPU always; CUDA when an NVIDIA GPU answers) with which device names."""

from __future__ import annotations

import ctypes
import glob
import json
import os
import platform
import subprocess
import sys

from sandbox import cgroups, seccomp
from sandbox.jail import NAMESPACE_FLAGS


def isolation_problem(layout: cgroups.Layout | None = None) -> str | None:
    """Why runs cannot be jailed here, or None when every part of the jail is available;
    `layout`: the cgroup the worker will use, when not this process's own."""
    if platform.system() != "Linux":
        return "the sandbox needs Linux (namespaces, cgroups, seccomp)"
    if not seccomp.supported():
        return f"the seccomp filter is written for x86-64; this host is {platform.machine()}"
    if os.geteuid() != 0:
        return "the sandbox worker must run as root to build each run's jail"
    problem = cgroups.check(layout)
    if problem:
        return problem
    return _namespaces_problem()


def _namespaces_problem() -> str | None:
    pid = os.fork()
    if pid == 0:
        libc = ctypes.CDLL(None, use_errno=True)
        os._exit(0 if libc.unshare(NAMESPACE_FLAGS) == 0 else 1)
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        return "cannot create namespaces (mount, PID, network, IPC, UTS, cgroup)"
    return None


def cpu_name() -> str:
    """e.g. 'AMD EPYC 7B13 (2 cores)'."""
    name = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    name = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{name} ({os.cpu_count()} cores)"


def why_no_cuda() -> str:
    """Why runs get no GPU here, in a sentence, once probe_cuda found none."""
    if not glob.glob("/dev/nvidia*"):
        return "This host has no NVIDIA GPU (no /dev/nvidia* device files)."
    return (
        "This host has NVIDIA device files, but PyTorch cannot use the GPU "
        "(torch.cuda.is_available() is false: check the driver and the CUDA build)."
    )


def probe_cuda(env: dict[str, str], timeout_seconds: float = 120) -> str | None:
    """The name of GPU 0 when CUDA works here, else None. Runs in a throwaway process so
    that no long-lived process (least of all a zygote) ever initialises CUDA."""
    if not glob.glob("/dev/nvidia*"):
        return None
    script = (
        "import json, torch\n"
        "ok = torch.cuda.is_available()\n"
        "print(json.dumps(torch.cuda.get_device_name(0) if ok else None))\n"
    )
    try:
        out = subprocess.run(
            [sys.executable, "-c", script],
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout_seconds,
            check=True,
        ).stdout
        name = json.loads(out.strip().splitlines()[-1])
    except (subprocess.SubprocessError, ValueError, IndexError):
        return None
    return name if isinstance(name, str) else None

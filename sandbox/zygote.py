"""A warm process per backend: torch, torchvision and the torch.compile machinery are already
imported, CUDA is never touched here, and each run is a fork of this process.

    python -m sandbox.zygote <backend> <fd>      (exec'd by launch.py, never by hand)

It reads requests from the SOCK_SEQPACKET socket on file descriptor <fd>: one JSON message,
with the run's stdout, stderr and status pipes and a memfd holding its code attached as file
descriptors; it answers {"pid": <supervisor pid>}. The JSON holds no code and no run id:
every jail is a fork of this process, so nothing private may ever pass through its memory.

Each supervisor it forks dies with it (jail.py), and it dies with the worker (launch.py).
When the worker closes the socket on purpose (replacing a worn zygote), it waits for the
runs it forked to end before exiting, so a replacement never cuts a run short."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import sys
import time
from types import ModuleType

from sandbox.jail import supervise
from sandbox.jail_spec import JailSpec
from sandbox.mounts import gpu_count, gpu_library_dirs
from sandbox.zygote_client import NVML_CHECK


def warm_up(backend: str) -> float:
    """Import what samples import, so a run pays none of it; returns the seconds taken."""
    started = time.perf_counter()
    import numpy  # noqa: F401
    import torch

    if backend == "cuda":
        _count_gpus_without_nvml(torch)
    import torch._dynamo
    import torch._inductor.compile_fx
    import torch.nn
    import torch.nn.functional
    import torch.optim
    import torch.utils.data
    import torchvision
    import torchvision.models
    import torchvision.transforms  # noqa: F401

    del torch
    _warm_compiler()
    # Both sides of a graded run, whose jails do not mount the sandbox package.
    import sandbox.grading
    import sandbox.grading.grader
    import sandbox.grading.learner
    import sandbox.lab.backprop_lab.stats  # noqa: F401  (the performance test's statistics)

    return time.perf_counter() - started


def _count_gpus_without_nvml(torch: ModuleType) -> None:
    """Give torch its GPU count before the imports below ask for it. Asked itself, torch counts
    through NVML (so as not to touch the CUDA runtime, zygote_client.py), which leaves the
    library loaded in every fork; inside a jail NVML cannot start, and a refused allocation
    then ended in an internal assertion instead of OutOfMemoryError (mounts.nvml_files).
    The device nodes tell the same count and load nothing. `serve` takes it back before the
    first fork, so a run counts through the CUDA runtime as usual."""
    if hasattr(torch.cuda, "_cached_device_count"):  # torch's own cache of the count
        torch.cuda._cached_device_count = gpu_count()


def nvml_loaded() -> bool:
    """Whether this process has the NVML library mapped."""
    with open("/proc/self/maps") as maps:
        return any("libnvidia-ml" in line for line in maps)


# What torch.compile imports on its first use (measured: 150 modules, 0.2 s) and what it
# hashes once per process (torch's and Triton's sources, 0.4 s). Done here, each fork starts
# with them: a compile that hits the on-disk cache then takes 0.5 s instead of 1.0 s.
COMPILER_MODULES = (
    "multiprocessing.synchronize",
    "torch._dynamo.backends.inductor",
    "torch._dynamo.repro.after_dynamo",
    "torch._functorch._aot_autograd.autograd_cache",
    "torch._higher_order_ops.passes.inline_invoke_subgraph",
    "torch._inductor.codecache",
    "torch._inductor.codegen.cpp",
    "torch._inductor.codegen.cpp_wrapper_cpu",
    "torch._inductor.codegen.memory_planning",
    "torch._inductor.compiler_bisector",
    "torch._inductor.cpp_builder",
    "torch._inductor.graph",
    "torch._inductor.hooks",
    "torch._inductor.lowering",
    "torch._inductor.output_code",
    "torch._inductor.scheduler",
    "torch._subclasses.schema_check_mode",
    "torch.export",
    "torch.fx.experimental.validator",
    "torch.utils.cpp_extension",
)


def _warm_compiler() -> None:
    """Best effort: these are torch's internals, and a version without one of them only
    makes the first compile of each run slower. Nothing here touches CUDA or the disk."""
    import importlib

    for name in COMPILER_MODULES:
        with contextlib.suppress(Exception):
            importlib.import_module(name)
    with contextlib.suppress(Exception):
        from torch._dynamo import list_backends
        from torch._inductor.codecache import torch_key, triton_key
        from torch._inductor.codegen.common import init_backend_registration

        list_backends()  # imports every registered backend, as a compile's lookup does
        init_backend_registration()
        torch_key()
        triton_key()


def forks_can_use_cuda() -> bool:
    """Whether a fork of this process may still initialise CUDA: torch refuses in a child
    whose parent touched the CUDA runtime, and every run is such a child."""
    import torch

    pid = os.fork()
    if pid == 0:
        os._exit(1 if torch._C._cuda_isInBadFork() else 0)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 0


def serve(backend: str, control_fd: int) -> None:
    control = socket.socket(fileno=control_fd)
    zygote = os.getpid()
    seconds = warm_up(backend)
    if backend == "cuda":
        if not forks_can_use_cuda():
            sys.exit("the CUDA warm process touched CUDA while warming up; runs could not use it")
        if nvml_loaded():
            # Runs still work; only a refused allocation may end in torch's assertion.
            print("the CUDA warm process loaded NVML while warming up", file=sys.stderr)
        gpu_library_dirs()  # found once here; every run forked from now on inherits it
        import torch

        torch.cuda._cached_device_count = None
    # The NVML setting (zygote_client.py) and the count given to torch kept the imports above
    # from touching the CUDA runtime. A run counts GPUs through the runtime, as torch does by
    # default: NVML cannot start in a jail (mounts.nvml_files).
    os.environ.pop(NVML_CHECK, None)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # supervisors are reaped by the kernel
    control.send(json.dumps({"ready": True, "warm_up_seconds": round(seconds, 2)}).encode())
    while True:
        # A SOCK_SEQPACKET socket: one recv is one whole request, its pipes attached.
        message, fds, _flags, _addr = socket.recv_fds(control, 1 << 16, 5)
        if not message:
            _wait_for_runs()
            return
        request = json.loads(message)
        spec = JailSpec(**request["spec"])
        # The four of every run, and a graded run's end of the learner-grader socket.
        stdout_fd, stderr_fd, status_fd, code_fd = fds[:4]
        channel_fd = fds[4] if len(fds) > 4 else -1
        del message, request  # nothing of a request outlives it here (none holds code)
        pid = os.fork()
        if pid == 0:
            control.close()
            supervise(spec, zygote, stdout_fd, stderr_fd, status_fd, code_fd, channel_fd)
        for fd in fds:
            os.close(fd)
        control.send(json.dumps({"pid": pid}).encode())


def _wait_for_runs() -> None:
    """Until every supervisor has exited (SIGCHLD is ignored, so wait() blocks until none is
    left, then fails)."""
    with contextlib.suppress(ChildProcessError):
        while True:
            os.wait()


if __name__ == "__main__":
    serve(sys.argv[1], int(sys.argv[2]))

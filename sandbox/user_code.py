"""The last process of a jail: the user's code run as __main__ of a file called sample.py,
with a clean environment and line-buffered output, ending in the exit status it chose.

Runs inside the jail, already unprivileged and under seccomp (see jail.py)."""

from __future__ import annotations

import builtins
import io
import linecache
import os
import sys
import traceback

from sandbox.compile_cache import JAIL_CACHE, WARM_ENV
from sandbox.phases import PHASE_FD_ENV

SAMPLE_FILENAME = "sample.py"


def set_environment(threads: int, warm: bool = False) -> None:
    """The whole environment the code sees: nothing of the worker's or the zygote's.
    `warm`: the trusted step filling the compile cache (compile_cache.py)."""
    os.environ.clear()
    os.environ.update(
        {
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "HOME": "/tmp",
            "TMPDIR": "/tmp",
            "LANG": "C.UTF-8",
            "OMP_NUM_THREADS": str(threads),
            "TORCHINDUCTOR_CACHE_DIR": f"{JAIL_CACHE}/inductor",
            "TRITON_CACHE_DIR": f"{JAIL_CACHE}/triton",
            # Read at import, so in the zygote's environment too (zygote_client.py).
            "TORCHINDUCTOR_CPP_CACHE_PRECOMPILE_HEADERS": "0",
            "MPLCONFIGDIR": "/tmp/.matplotlib",
            "PYTHONDONTWRITEBYTECODE": "1",
        }
    )
    if warm:
        os.environ[WARM_ENV] = "1"


def run(code: str, threads: int, cuda: bool, gpu_memory_fraction: float, phase_fd: int = -1) -> int:
    """Run the code as __main__ of a file called sample.py; return the exit status.
    `phase_fd`: where the lab harness reports compiling and running (phases.py)."""
    if phase_fd >= 0:
        os.environ[PHASE_FD_ENV] = str(phase_fd)
    sys.stdout, sys.stderr = _text_stream(1), _text_stream(2)
    sys.stdin = open(os.devnull)  # noqa: SIM115
    sys.argv = [SAMPLE_FILENAME]
    # Tracebacks then quote the sample's own lines, as if it were a file on disk.
    linecache.cache[SAMPLE_FILENAME] = (
        len(code),
        None,
        code.splitlines(keepends=True),
        SAMPLE_FILENAME,
    )
    status = 0
    try:
        import torch

        torch.set_num_threads(threads)
        if cuda:
            torch.cuda.set_per_process_memory_fraction(gpu_memory_fraction)
        program = compile(code, SAMPLE_FILENAME, "exec")
        exec(
            program, {"__name__": "__main__", "__file__": SAMPLE_FILENAME, "__builtins__": builtins}
        )
    except SystemExit as exc:
        status = _exit_status(exc)
    except BaseException:
        _print_user_traceback()
        status = 1
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError:
        pass
    return status


def _text_stream(fd: int) -> io.TextIOWrapper:
    """Line-buffered UTF-8 text on `fd`, so output reaches the page line by line."""
    return io.TextIOWrapper(
        io.FileIO(fd, "w", closefd=False),
        encoding="utf-8",
        errors="backslashreplace",
        line_buffering=True,  # each line goes out as it is printed, in one piece
    )


def _exit_status(exc: SystemExit) -> int:
    """The status sys.exit(...) asked for, as Python itself would report it."""
    status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    if exc.code is not None and not isinstance(exc.code, int):
        print(exc.code, file=sys.stderr)
    if not 0 <= status <= 255:
        # The OS keeps only the low 8 bits: sys.exit(256) would read as success.
        print(f"exit status {status} is out of range; reported as 1", file=sys.stderr)
        status = 1
    return status


def _print_user_traceback() -> None:
    """The traceback from the user's code down, without the sandbox's own frames."""
    etype, value, tb = sys.exc_info()
    while tb is not None and tb.tb_frame.f_code.co_filename != SAMPLE_FILENAME:
        tb = tb.tb_next
    traceback.print_exception(etype, value, tb, file=sys.stderr)

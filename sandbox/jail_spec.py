"""What a jailed run is given (jail.py builds it; mounts.py reads it to build the root): a
module of its own so that both sit above it and neither imports the other."""

from __future__ import annotations

from dataclasses import dataclass


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
    # [path as the zygote sees it, where the jail sees it], each read-only (neutral.py).
    binds: list[list[str]]
    cuda: bool = False
    gpu_memory_fraction: float = 0.5
    # The sealed compile cache (compile_cache.py), seen through an overlay; None: the run
    # starts from an empty cache. With warm, it is the trusted step's own writable folder.
    compile_cache: str | None = None
    warm: bool = False
    # What the jail's last process runs: "run" (the code as a sample), or one side of a
    # graded run (sandbox/README.md, "Grading"): "learner" (the code, answering the
    # grader's requests) or "grader" (the exercise's tests; the code's source is data).
    role: str = "run"

"""The receipt: what the numbers were measured on, and whether the compile cache was warm."""

from __future__ import annotations

import datetime
import os
import platform
import sys
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Final, Literal

import torch

CacheState = Literal["cold", "warm", "partly warm", "in-process", "unknown"]
CACHE_STATES: Final[tuple[CacheState, ...]] = (
    "cold",
    "warm",
    "partly warm",
    "in-process",
    "unknown",
)
Counters = dict[str, dict[str, int]]


@dataclass(frozen=True)
class Receipt:
    device: str  # "Intel(R) Xeon(R) ... (cpu)" or "NVIDIA H100 80GB HBM3 (cuda:0)"
    device_type: str  # "cpu" or "cuda"
    torch: str  # torch.__version__
    cuda: str | None  # torch.version.cuda when the run is on CUDA, else None
    python: str
    platform: str
    threads: int  # torch.get_num_threads(), the same for both sides
    inputs: list[Any]  # shape and dtype of each input
    mode: str
    compiled_by: str  # "harness" (torch.compile(fn, mode=mode)) or "caller" (compiled=)
    compile_cache: CacheState
    compile_cache_detail: str
    graphs_compiled_while_timing: int  # > 0: it recompiled after the first call
    timing_method: str
    rounds: int
    min_run_time: float
    backward: bool
    grad_enabled: bool
    date: str  # UTC, ISO 8601
    cpus: int  # os.cpu_count()
    load_average: float | None  # 1-minute load average at the end; above `cpus`: a busy machine

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo, else what `platform` knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            key, _, value = line.partition(":")
            if key.strip() in ("model name", "Model", "Hardware") and value.strip():
                return value.strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def device_name(device: torch.device) -> str:
    if device.type == "cuda":
        return f"{torch.cuda.get_device_name(device)} ({device})"
    if device.type == "cpu":
        return f"{cpu_model()} (cpu)"
    return str(device)


def describe(value: Any) -> Any:
    """Shapes and dtypes of nested inputs: {"shape": [256, 256], "dtype": "float32"}."""
    if isinstance(value, torch.Tensor):
        return {
            "shape": list(value.shape),
            "dtype": str(value.dtype).removeprefix("torch."),
            "device": str(value.device),
            "requires_grad": bool(value.requires_grad),
        }
    if isinstance(value, list | tuple):
        return [describe(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): describe(v) for k, v in value.items()}
    if isinstance(value, bool | int | float | str) or value is None:
        return {"type": type(value).__name__, "value": value}
    return {"type": type(value).__name__}


def snapshot_counters() -> Counters | None:
    """torch._dynamo's counters now (a private API: None if it is not there)."""
    try:
        from torch._dynamo.utils import counters
    except ImportError:
        return None
    return {group: {k: int(v) for k, v in c.items()} for group, c in counters.items()}


def counter_deltas(before: Counters | None, after: Counters | None) -> Counters:
    if before is None or after is None:
        return {}
    deltas: Counters = {}
    for group, values in after.items():
        old = before.get(group, {})
        changed = {k: v - old.get(k, 0) for k, v in values.items() if v != old.get(k, 0)}
        if changed:
            deltas[group] = changed
    return deltas


def cache_state(deltas: Counters, known_dynamo: bool) -> tuple[CacheState, str]:
    """Cold or warm, from what the first compiled call did to the counters.

    `known_dynamo`: the compiled callable is torch.compile's, so no new frame means that this
    process had already compiled the same code with the same guards.
    """
    if not deltas and not known_dynamo:
        return "unknown", "no torch.compile activity was seen during the first call"
    inductor = deltas.get("inductor", {})
    aot = deltas.get("aot_autograd", {})
    hits = inductor.get("fxgraph_cache_hit", 0) + aot.get("autograd_cache_hit", 0)
    misses = inductor.get("fxgraph_cache_miss", 0) + aot.get("autograd_cache_miss", 0)
    bypass = inductor.get("fxgraph_cache_bypass", 0) + aot.get("autograd_cache_bypass", 0)
    detail = (
        f"FX graph cache: {inductor.get('fxgraph_cache_hit', 0)} hit, "
        f"{inductor.get('fxgraph_cache_miss', 0)} miss, "
        f"{inductor.get('fxgraph_cache_bypass', 0)} bypass; AOTAutograd cache: "
        f"{aot.get('autograd_cache_hit', 0)} hit, {aot.get('autograd_cache_miss', 0)} miss"
    )
    if hits and not misses and not bypass:
        return "warm", f"compiled artifacts loaded from the on-disk cache ({detail})"
    if hits:
        return "partly warm", f"some graphs came from the on-disk cache ({detail})"
    if misses or bypass:
        return "cold", f"compiled from scratch ({detail})"
    frames = deltas.get("frames", {}).get("total", 0)
    if frames == 0 and known_dynamo:
        return "in-process", "this process had already compiled the same code (no new frames)"
    return "unknown", f"no cache counters moved ({detail})"


def graphs_compiled(deltas: Counters) -> int:
    return deltas.get("stats", {}).get("unique_graphs", 0)


def is_dynamo_compiled(compiled: Any) -> bool:
    """Whether `compiled` came from torch.compile (an OptimizedModule or a wrapped function)."""
    try:
        from torch._dynamo.eval_frame import OptimizedModule
    except ImportError:
        return False
    return isinstance(compiled, OptimizedModule) or hasattr(compiled, "_torchdynamo_orig_callable")


def load_average() -> float | None:
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return None


def utc_now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


def python_version() -> str:
    return sys.version.split()[0]

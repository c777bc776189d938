"""Timing one round of one side: milliseconds per call.

CPU: torch.utils.benchmark.Timer.blocked_autorange(min_run_time), whose median block time is the
round's time; the thread count is passed explicitly so both sides run with the same one.
CUDA: blocks of calls between two CUDA events, with torch.cuda.synchronize around them, until
min_run_time has passed; the median block (divided by its calls) is the round's time.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Final

import torch
import torch.utils.benchmark as benchmark

from .stats import median

Step = Callable[[], Any]
CUDA_BLOCK_SECONDS: Final = 0.01  # each CUDA block lasts about this long
MAX_CALLS_PER_BLOCK: Final = 10_000


def synchronize(device: torch.device) -> None:
    """Wait for queued device work (no-op on CPU)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def wall_clock(step: Step, device: torch.device) -> tuple[Any, float]:
    """Run `step` once, synchronized on both sides; its result and the seconds it took."""
    synchronize(device)
    start = time.perf_counter()
    result = step()
    synchronize(device)
    return result, time.perf_counter() - start


def cpu_round_ms(step: Step, min_run_time: float, threads: int) -> float:
    timer = benchmark.Timer(stmt="step()", globals={"step": step}, num_threads=threads)
    measurement = timer.blocked_autorange(min_run_time=min_run_time)
    return float(measurement.median) * 1e3


def _cuda_block_ms(step: Step, calls: int, device: torch.device) -> float:
    start = torch.cuda.Event(enable_timing=True)  # type: ignore[no-untyped-call,unused-ignore]
    end = torch.cuda.Event(enable_timing=True)  # type: ignore[no-untyped-call,unused-ignore]
    synchronize(device)
    start.record()
    for _ in range(calls):
        step()
    end.record()
    end.synchronize()
    return float(start.elapsed_time(end)) / calls


def cuda_calls_per_block(step: Step, device: torch.device) -> int:
    """How many calls make a block of about CUDA_BLOCK_SECONDS (measured on one call)."""
    one_ms = max(_cuda_block_ms(step, 1, device), 1e-6)
    calls = int(CUDA_BLOCK_SECONDS * 1e3 / one_ms)
    return max(1, min(MAX_CALLS_PER_BLOCK, calls))


def cuda_round_ms(step: Step, min_run_time: float, device: torch.device, calls: int) -> float:
    blocks: list[float] = []
    began = time.perf_counter()
    while not blocks or time.perf_counter() - began < min_run_time:
        blocks.append(_cuda_block_ms(step, calls, device))
    return median(blocks)


class RoundTimer:
    """Times rounds of one side on the device it was made for."""

    def __init__(self, step: Step, device: torch.device, min_run_time: float, threads: int):
        self.step = step
        self.device = device
        self.min_run_time = min_run_time
        self.threads = threads
        self.calls = 1

    def calibrate(self) -> None:
        """After warm-up: on CUDA, pick how many calls each timed block holds."""
        if self.device.type == "cuda":
            self.calls = cuda_calls_per_block(self.step, self.device)

    def round_ms(self) -> float:
        if self.device.type == "cuda":
            return cuda_round_ms(self.step, self.min_run_time, self.device, self.calls)
        return cpu_round_ms(self.step, self.min_run_time, self.threads)


def method_text(device: torch.device, min_run_time: float) -> str:
    if device.type == "cuda":
        return (
            "CUDA events around blocks of calls, torch.cuda.synchronize, "
            f"median block per round, >= {min_run_time:g} s per round"
        )
    return (
        "torch.utils.benchmark.Timer.blocked_autorange"
        f"(min_run_time={min_run_time:g}), median per round"
    )

"""compare(): eager against compiled, the same callable on the same inputs, measured honestly."""

from __future__ import annotations

import math
import os
import platform
from collections.abc import Callable
from typing import Any

import torch

from .correctness import check_outputs, combine, format_tolerance, tensors_in
from .phase import compiling
from .receipt import (
    Receipt,
    cache_state,
    counter_deltas,
    describe,
    device_name,
    graphs_compiled,
    is_dynamo_compiled,
    load_average,
    python_version,
    snapshot_counters,
    utc_now,
)
from .report import LabResult
from .stats import summarize
from .steps import make_steps, map_tensors, observe
from .timing import RoundTimer, method_text, synchronize
from .verdict import decide, speedup_of

CPU = torch.device("cpu")
WARM_ENV = "BACKPROP_LAB_WARM"  # set by the sandbox for the runs that warm its compile cache


def say(line: str) -> None:
    """One progress line, flushed at once so that a long lab never looks frozen."""
    print(line, flush=True)


def _resolve_device(fn: Any, inputs: tuple[Any, ...], device: str | torch.device | None) -> Any:
    """The device given, else the inputs' or the module's; None when neither has tensors."""
    if device is not None:
        return torch.device(device)
    for tensor in tensors_in(list(inputs)):
        return tensor.device
    if isinstance(fn, torch.nn.Module):
        for tensor in [*fn.parameters(), *fn.buffers()]:
            return tensor.device
    return None


def _run_has_gpu() -> bool:
    """Whether this run may use a GPU: on the sandbox's CUDA backend, yes; on its CPU backend
    the GPUs are hidden (CUDA_VISIBLE_DEVICES is empty), so no."""
    return bool(torch.cuda.is_available())  # type: ignore[no-untyped-call,unused-ignore]


def _gpu() -> torch.device:
    return torch.device("cuda", torch.cuda.current_device())


STAYED_ON_CPU = (
    "compare() moved the inputs (and an nn.Module passed as fn) to the GPU, since this run is "
    "on the CUDA backend, but fn uses a tensor that stayed on the CPU. Create that tensor on "
    "the GPU, keep it in the nn.Module, pass it as an input, or call compare(..., "
    'device="cpu") to time on the CPU.'
)


def _output_device(output: Any) -> Any:
    """For a function without tensor inputs: where its output lives, else CUDA if this
    process has used it, else the CPU."""
    for tensor in tensors_in(output):
        return tensor.device
    if torch.cuda.is_available() and torch.cuda.is_initialized():  # type: ignore[no-untyped-call,unused-ignore]
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


def compare(
    fn: Callable[..., Any],
    *inputs: Any,
    compiled: Callable[..., Any] | None = None,
    mode: str = "default",
    label: str = "",
    rounds: int = 5,
    min_run_time: float = 0.2,
    backward: bool = False,
    tolerance: float | None = None,
    device: str | torch.device | None = None,
    warmup: int = 3,
) -> LabResult:
    """Time `fn(*inputs)` eager and compiled in interleaved rounds; check that the outputs match.

    fn: a function or nn.Module. compiled: defaults to torch.compile(fn, mode=mode).
    backward: time forward + backward of the sum of the outputs (inputs are made to require
    grad when neither they nor fn's parameters do); gradients are then compared as well.
    tolerance: overrides the per-dtype table (see TOLERANCES). device: moves the inputs (and
    an nn.Module, in place) there; by default the GPU when the run has one (the CUDA
    backend) and the inputs are on the CPU, else the inputs' own device. device="cpu" times
    on the CPU on any backend.
    Prints progress, a results table and one `BACKPROP_LAB_RESULT <json>` line.
    """
    if not callable(fn):
        raise TypeError(f"fn must be callable, not {type(fn).__name__}")
    if rounds < 1 or warmup < 0 or min_run_time <= 0:
        raise ValueError("need rounds >= 1, warmup >= 0 and min_run_time > 0")
    if tolerance is not None and not tolerance >= 0.0:
        raise ValueError(f"tolerance must be >= 0 (or float('inf') to skip), not {tolerance}")
    if os.environ.get(WARM_ENV) == "1":
        # The sandbox's trusted step filling its compile cache (sandbox/compile_cache.py):
        # the same graphs get compiled; one short round is timed, nothing is kept.
        rounds, warmup, min_run_time = 1, 0, min(min_run_time, 0.05)
    dev = _resolve_device(fn, inputs, device)
    moved_to_gpu = device is None and dev is not None and dev.type == "cpu" and _run_has_gpu()
    if moved_to_gpu:
        # The labs build their tensors on the CPU so that they run on any backend; a learner
        # who runs one on the CUDA backend asked for the GPU's figures, not the CPU's.
        device = dev = _gpu()
    if dev is not None and device is not None:
        inputs = tuple(map_tensors(list(inputs), lambda t: t.to(dev)))
        if isinstance(fn, torch.nn.Module):
            fn.to(dev)
    compiled_by = "harness" if compiled is None else "caller"
    known_dynamo = compiled is None or is_dynamo_compiled(compiled)
    if compiled is None:
        compiled = torch.compile(fn, mode=mode)
    threads = int(torch.get_num_threads())

    inputs, (eager_step, eager_leaves), (compiled_step, compiled_leaves) = make_steps(
        fn, compiled, inputs, backward
    )

    say("running eager once (reference output)")
    try:
        reference, reference_grads, _ = observe(
            eager_step, eager_leaves, CPU if dev is None else dev
        )
    except RuntimeError as error:
        if moved_to_gpu and "device" in str(error):
            raise RuntimeError(STAYED_ON_CPU) from error
        raise
    if dev is None:
        dev = _output_device(reference)
        synchronize(dev)
    before = snapshot_counters()
    say("compiling (first call)…")
    with compiling():
        observed, observed_grads, compile_seconds = observe(compiled_step, compiled_leaves, dev)
    cache, cache_detail = cache_state(counter_deltas(before, snapshot_counters()), known_dynamo)
    say(f"compiled in {compile_seconds:.2f} s")
    check = check_outputs(reference, observed, tolerance)
    if backward:
        grads = check_outputs(reference_grads, observed_grads, tolerance, root="grad")
        check = combine(check, grads)

    say("warming up")
    for _ in range(warmup):
        eager_step()
        compiled_step()
    synchronize(dev)
    eager_timer = RoundTimer(eager_step, dev, min_run_time, threads)
    compiled_timer = RoundTimer(compiled_step, dev, min_run_time, threads)
    eager_timer.calibrate()
    compiled_timer.calibrate()

    timing_start = snapshot_counters()
    eager_ms: list[float] = []
    compiled_ms: list[float] = []
    for index in range(1, rounds + 1):
        say(f"timing eager, round {index}/{rounds}")
        eager_ms.append(eager_timer.round_ms())
        say(f"timing compiled, round {index}/{rounds}")
        compiled_ms.append(compiled_timer.round_ms())
    recompiled = graphs_compiled(counter_deltas(timing_start, snapshot_counters()))

    eager, compiled_stats = summarize(eager_ms), summarize(compiled_ms)
    verdict, sentence = decide(eager, compiled_stats)
    if math.isinf(check.tolerance):
        sentence += "; outputs not compared (tolerance=inf)."
    elif check.correct:
        tolerance_text = format_tolerance(check.tolerance)
        sentence += f"; outputs match within {tolerance_text} (absolute + relative)."
    else:
        sentence += f"; but the outputs DIFFER ({check.mismatch}), so the timing is moot."
    receipt = Receipt(
        device=device_name(dev),
        device_type=dev.type,
        torch=str(torch.__version__),
        cuda=str(torch.version.cuda) if dev.type == "cuda" else None,
        python=python_version(),
        platform=platform.platform(),
        threads=threads,
        inputs=[describe(value) for value in inputs],
        mode=mode,
        compiled_by=compiled_by,
        compile_cache=cache,
        compile_cache_detail=cache_detail,
        graphs_compiled_while_timing=recompiled,
        timing_method=method_text(dev, min_run_time),
        rounds=rounds,
        min_run_time=min_run_time,
        backward=backward,
        grad_enabled=bool(torch.is_grad_enabled()),
        date=utc_now(),
        cpus=os.cpu_count() or 0,
        load_average=load_average(),
    )
    result = LabResult(
        label=label,
        mode=mode,
        eager=eager,
        compiled=compiled_stats,
        compile_seconds=compile_seconds,
        speedup=speedup_of(eager, compiled_stats),
        verdict=verdict,
        verdict_text=sentence,
        correct=check.correct,
        max_abs_diff=check.max_abs_diff,
        tolerance=check.tolerance,
        mismatch=check.mismatch,
        receipt=receipt,
    )
    say(result.table())
    say(result.result_line())
    return result

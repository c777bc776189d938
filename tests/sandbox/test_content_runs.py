"""Every code sample of every deck, run in the sandbox on the CPU backend as the site runs it
(labs from the compile cache the worker warms when it starts): each ends `ok`, or says why it
cannot run here and has a runnable variant beside it that ends `ok`."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from app.importer.parse import ParsedItem, SampleSpec, parse_catalogue, parse_item
from app.labs.labs import parse_results
from sandbox.compile_cache import lab_programs, warm_programs
from tests.support.paths import CONTENT_DIR
from tests.support.sandbox_worker import WorkerHandle, needs_isolation, running_worker

# What a CPU-only, offline host cannot give a sample as printed.
NOT_HERE = {"cuda", "network", "incomplete", "broken", "long"}
# Generous, for a slow host running two samples at once; the site gives a run 60 s.
LIMITS = {"wall_seconds": 170, "cpu_seconds": 340}
# Warming compiles the labs, then the other samples that compile, one at a time at idle
# priority (sandbox/warming.py): beside a busy test pass, that takes a while, and on a machine
# whose cores other work keeps busy much longer (14 of 17 samples in 40 min beside two busy
# loops and a test pass). So the wait lasts while the warming moves on, and fails only when
# no sample has been compiled for this long: a stalled warming, not a slow one.
WARMING_STALL_SECONDS = 1800
LABS_ON_CPU = len([p for p in lab_programs(CONTENT_DIR / "labs") if p.runs_on("cpu")])


def load_items() -> list[ParsedItem]:
    catalogue = parse_catalogue(CONTENT_DIR / "decks.yml", "decks.yml")
    return [
        parse_item(p.read_text(encoding="utf-8"), p.relative_to(CONTENT_DIR).as_posix(), catalogue)
        for p in sorted(CONTENT_DIR.glob("*/*.md"))
    ]


ITEMS = load_items()
ALL = [(item, s) for item in ITEMS for s in item.samples]
RUNNABLE = [(i, s) for i, s in ALL if s.variant_of is not None or not NOT_HERE & set(s.requires)]
BLOCKED = [(i, s) for i, s in ALL if (i, s) not in RUNNABLE]


def sample_id(pair: tuple[ParsedItem, SampleSpec]) -> str:
    return f"{pair[0].slug}#{pair[1].index}"


@pytest.fixture(scope="module")
def warmed_worker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WorkerHandle]:
    """A worker started as the site starts one: once ready, it compiles every lab into its
    cache, then the other samples that compile. Waited for, so that no sample competes with
    it for the CPU. (A cold compile of a ResNet training step beside another run can outlast
    any sensible limit on two slow cores: that is what the cache is for.)"""
    base = tmp_path_factory.mktemp("content-worker")
    with running_worker(base, "--warm-labs", str(CONTENT_DIR / "labs")) as handle:
        seen, since = "", time.monotonic()
        while not (state := handle.status()["compile_cache"]["cpu"]).startswith("ready"):
            if state != seen:
                seen, since = state, time.monotonic()
            stalled = time.monotonic() - since
            assert stalled < WARMING_STALL_SECONDS, f"still {state}, unchanged for {stalled:.0f} s"
            time.sleep(1)
        yield handle


@pytest.fixture(scope="module")
def results(warmed_worker: WorkerHandle) -> dict[str, dict[str, Any]]:
    """Run every runnable sample once, as many at a time as the worker has CPU slots (one per
    core), or as CONTENT_SAMPLES_AT_ONCE says (.ci/run: one, beside its other pass)."""
    slots = int(os.environ.get("CONTENT_SAMPLES_AT_ONCE") or os.cpu_count() or 2)
    with ThreadPoolExecutor(max_workers=slots) as pool:
        futures = {
            sample_id(p): pool.submit(warmed_worker.run, p[1].code, LIMITS) for p in RUNNABLE
        }
        return {key: future.result() for key, future in futures.items()}


@needs_isolation
def test_the_worker_compiled_every_sample_that_compiles_on_a_cpu(
    warmed_worker: WorkerHandle,
) -> None:
    on_cpu = [p for p in warm_programs(CONTENT_DIR / "labs") if p.runs_on("cpu")]
    assert len(on_cpu) > LABS_ON_CPU  # the other decks' samples that compile, too
    state = warmed_worker.status()["compile_cache"]["cpu"]
    assert state == f"ready: {len(on_cpu)} of {len(on_cpu)} samples compiled"


@needs_isolation
@pytest.mark.parametrize("pair", RUNNABLE, ids=[sample_id(p) for p in RUNNABLE])
def test_sample_runs_ok(
    results: dict[str, dict[str, Any]], pair: tuple[ParsedItem, SampleSpec]
) -> None:
    result = results[sample_id(pair)]
    assert result["verdict"] == "ok", (
        f"{pair[0].path} sample {pair[1].index}: {result['verdict']} {result['detail']}\n"
        f"{result['stderr'][-1500:]}"
    )


# The labs that time code with the harness, whose result line says where compiled code came from.
TIMED_LABS = [(i, s) for i, s in RUNNABLE if i.deck == "labs" and "compare(" in s.code]


@needs_isolation
@pytest.mark.parametrize("pair", TIMED_LABS, ids=[sample_id(p) for p in TIMED_LABS])
def test_lab_samples_load_what_they_compile_from_the_warmed_cache(
    results: dict[str, dict[str, Any]], pair: tuple[ParsedItem, SampleSpec]
) -> None:
    # Read as the site reads them to keep them (app/labs/labs.py).
    lines = parse_results(results[sample_id(pair)]["stdout"])
    assert lines, "the lab printed no timing result the site would keep"
    states = [line["receipt"]["compile_cache"] for line in lines]
    # The first compile loads from the cache; later ones may reuse what this run compiled.
    assert states[0] == "warm" and set(states) <= {"warm", "in-process"}, states


@pytest.mark.parametrize("pair", BLOCKED, ids=[sample_id(p) for p in BLOCKED])
def test_sample_that_cannot_run_here_has_a_variant(pair: tuple[ParsedItem, SampleSpec]) -> None:
    item, sample = pair
    variants = [s for s in item.samples if s.variant_of == sample.index]
    assert variants, (
        f"{item.path} sample {sample.index} ({','.join(sample.requires)}) has no variant"
    )


def test_every_deck_has_samples_to_run() -> None:
    assert len(RUNNABLE) >= 40
    assert Path(CONTENT_DIR).is_dir()


# Samples that need only a GPU (and perhaps more time): as printed, on the CUDA backend.
ON_GPU = [(i, s) for i, s in ALL if "cuda" in s.requires and set(s.requires) <= {"cuda", "long"}]


@needs_isolation
@pytest.mark.parametrize("pair", ON_GPU, ids=[sample_id(p) for p in ON_GPU])
def test_gpu_sample_runs_ok_on_the_cuda_backend(
    worker: WorkerHandle, pair: tuple[ParsedItem, SampleSpec]
) -> None:
    if "cuda" not in worker.status()["backends"]:
        pytest.skip("this host's worker has no CUDA backend (no NVIDIA GPU answered)")
    result = worker.run(pair[1].code, LIMITS, backend="cuda")
    assert result["verdict"] == "ok", f"{result['detail']}\n{result['stderr'][-1500:]}"

"""Every code sample of every deck, run in the sandbox on the CPU backend: each ends `ok`, or
says why it cannot run here and has a runnable variant beside it that ends `ok`."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from app.importer.parse import ParsedItem, SampleSpec, parse_catalogue, parse_item
from tests.support.paths import CONTENT_DIR
from tests.support.sandbox_worker import WorkerHandle, needs_isolation

# What a CPU-only, offline host cannot give a sample as printed.
NOT_HERE = {"cuda", "network", "incomplete", "broken", "long"}
# Generous: a cold torch.compile of a small ResNet takes most of a minute on two cores.
LIMITS = {"wall_seconds": 170, "cpu_seconds": 340}


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
def results(worker: WorkerHandle) -> dict[str, dict[str, Any]]:
    """Run every runnable sample once, as many at a time as the worker has CPU slots."""
    slots = os.cpu_count() or 2  # the worker runs one CPU run per core at a time
    with ThreadPoolExecutor(max_workers=slots) as pool:
        futures = {sample_id(p): pool.submit(worker.run, p[1].code, LIMITS) for p in RUNNABLE}
        return {key: future.result() for key, future in futures.items()}


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

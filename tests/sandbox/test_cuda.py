"""The CUDA backend on a host with an NVIDIA GPU: runs reach the GPU, what isolates them from
each other and from the host holds, and nothing of a run stays on the GPU after it. Skipped
where the worker has no CUDA backend (every CI machine so far); docs/sandbox-and-grading.md
says where and when these ran on a GPU."""

from __future__ import annotations

import shutil
import subprocess
import threading
import time
from typing import Any

import pytest

from app.labs.labs import parse_results
from tests.support.sandbox_worker import WorkerHandle, needs_isolation

pytestmark = needs_isolation


@pytest.fixture
def gpu(worker: WorkerHandle) -> WorkerHandle:
    if "cuda" not in worker.status()["backends"]:
        pytest.skip("this host's worker has no CUDA backend (no NVIDIA GPU answered)")
    return worker


def compute_apps() -> list[str]:
    """Processes holding a CUDA context on the host's GPUs, as the driver lists them."""
    if shutil.which("nvidia-smi") is None:
        pytest.skip("nvidia-smi is not installed on this host")
    out = subprocess.run(
        ["nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv,noheader"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    return [line for line in out.splitlines() if line.strip()]


def lines(result: dict[str, Any]) -> dict[str, str]:
    """`key: value` lines a probe printed."""
    pairs = (line.split(": ", 1) for line in result["stdout"].splitlines() if ": " in line)
    return {key: value for key, value in pairs}


def test_a_cuda_run_computes_on_the_gpu_it_is_told_of(gpu: WorkerHandle) -> None:
    result = gpu.run(
        "import torch\n"
        "x = torch.randn(2048, 2048, device='cuda')\n"
        "y = x @ x\n"
        "torch.cuda.synchronize()\n"
        "print('device:', torch.cuda.get_device_name(0))\n"
        "print('count:', torch.cuda.device_count())\n"
        "print('close:', torch.allclose(y.cpu(), x.cpu() @ x.cpu(), atol=1e-1, rtol=1e-2))\n",
        backend="cuda",
    )
    assert result["verdict"] == "ok", result["stderr"]
    said = lines(result)
    assert result["backend"] == "cuda" and said["device"] in result["device"]
    assert said["count"] == "1" and said["close"] == "True"
    started = [e for e in result["events"] if e["type"] == "started"]
    assert started and started[0]["backend"] == "cuda"


def test_a_cpu_run_sees_no_gpu_device(gpu: WorkerHandle) -> None:
    result = gpu.run(
        "import os, torch\n"
        "print('nodes:', sorted(d for d in os.listdir('/dev') if d.startswith('nvidia')))\n"
        "print('available:', torch.cuda.is_available())\n",
        backend="cpu",
    )
    assert result["verdict"] == "ok", result["stderr"]
    assert lines(result) == {"nodes": "[]", "available": "False"}


def test_a_cuda_run_gets_only_the_gpu_device_nodes_beside_the_usual_ones(gpu: WorkerHandle) -> None:
    result = gpu.run(
        "import os\nprint('dev:', sorted(os.listdir('/dev')))\n"
        "print('net:', sorted(os.listdir('/sys/class/net')) if os.path.exists('/sys/class/net')"
        " else [])\n",
        backend="cuda",
    )
    assert result["verdict"] == "ok", result["stderr"]
    names = eval(lines(result)["dev"])  # a list literal the run printed
    usual = {"null", "zero", "full", "random", "urandom", "shm", "fd", "stdin", "stdout"}
    assert {n for n in names if not n.startswith("nvidia")} <= usual | {"stderr", "tty"}
    assert any(n.startswith("nvidia") for n in names)
    assert lines(result)["net"] == "[]"  # no network devices, on the GPU backend too


def test_the_default_gpu_memory_cap_stops_a_run_that_takes_most_of_the_gpu(
    gpu: WorkerHandle,
) -> None:
    result = gpu.run(
        "import torch\n"
        "total = torch.cuda.get_device_properties(0).total_memory\n"
        "x = torch.empty(int(total * 0.7), dtype=torch.uint8, device='cuda')\n"
        "print('allocated')\n",
        backend="cuda",
    )
    assert result["verdict"] == "error"
    assert "OutOfMemoryError" in result["stderr"], result["stderr"][-3000:]
    assert "allocated" not in result["stdout"]


def test_a_cuda_run_computes_without_the_nvml_library(gpu: WorkerHandle) -> None:
    """NVML cannot start in a jail: loaded, it turned a refused allocation into torch's internal
    assertion. Neither the warm process nor the run may have it (sandbox/mounts.nvml_files)."""
    result = gpu.run(
        "import ctypes, torch\n"
        "print('sum:', torch.ones(8, device='cuda').sum().item())\n"
        "print('count:', torch.cuda.device_count())\n"
        "print('mapped:', 'libnvidia-ml' in open('/proc/self/maps').read())\n"
        "try:\n"
        "    ctypes.CDLL('libnvidia-ml.so.1')\n"
        "    print('loadable: True')\n"
        "except OSError:\n"
        "    print('loadable: False')\n",
        backend="cuda",
    )
    assert result["verdict"] == "ok", result["stderr"]
    found = lines(result)
    assert found["sum"] == "8.0" and int(found["count"]) >= 1
    assert found["mapped"] == "False" and found["loadable"] == "False"


def test_a_lab_run_on_the_cuda_backend_times_on_the_gpu(gpu: WorkerHandle) -> None:
    """The labs build their tensors on the CPU; on the CUDA backend the harness times them on
    the GPU (its receipts used to be the CPU's, labelled with the CUDA backend)."""
    result = gpu.run(
        "import torch\n"
        "from backprop_lab import compare\n"
        "x = torch.randn(256, 256)\n"
        "compare(lambda t: torch.sin(t) * 2 + 1, x, rounds=1, min_run_time=0.01, warmup=0)\n",
        backend="cuda",
    )
    assert result["verdict"] == "ok", result["stderr"][-3000:]
    [lab] = parse_results(result["stdout"])  # as the site reads a lab's run
    receipt = lab["receipt"]
    assert receipt["device_type"] == "cuda" and receipt["cuda"]
    assert [i["device"] for i in receipt["inputs"]] == ["cuda:0"]


def test_gpu_memory_of_a_run_killed_mid_kernel_is_free_for_the_next(gpu: WorkerHandle) -> None:
    hog = (
        "import torch\n"
        "x = torch.empty(int(torch.cuda.get_device_properties(0).total_memory * 0.4),"
        " dtype=torch.uint8, device='cuda')\n"
        "a = torch.randn(8192, 8192, device='cuda')\n"
        "print('holding', flush=True)\n"
        "while True:\n"
        "    a = torch.tanh(a @ a)\n"
    )
    stopped = gpu.run(hog, {"wall_seconds": 8}, backend="cuda")
    assert stopped["verdict"] == "timeout" and "holding" in stopped["stdout"]
    after = gpu.run(
        "import torch\nfree, total = torch.cuda.mem_get_info()\nprint('free:', free / total)\n",
        backend="cuda",
    )
    assert after["verdict"] == "ok", after["stderr"]
    assert float(lines(after)["free"]) > 0.9  # the killed run's 40% came back
    assert compute_apps() == []  # and no process of either run holds the GPU


def test_gpu_runs_take_turns(gpu: WorkerHandle) -> None:
    """One run at a time per GPU, so a timing demo never shares the device with another."""
    code = (
        "import time, torch\n"
        "torch.zeros(1, device='cuda')\n"
        "print('start:', time.time(), flush=True)\n"
        "time.sleep(2)\n"
        "print('end:', time.time())\n"
    )
    results: list[dict[str, Any]] = []
    threads = [
        threading.Thread(target=lambda: results.append(gpu.run(code, backend="cuda")))
        for _ in range(2)
    ]
    for thread in threads:
        thread.start()
        time.sleep(0.2)
    for thread in threads:
        thread.join()
    assert [r["verdict"] for r in results] == ["ok", "ok"]
    first, second = sorted(results, key=lambda r: float(lines(r)["start"]))
    assert float(lines(second)["start"]) >= float(lines(first)["end"])
    assert any(e["type"] == "queued" for e in second["events"])


def test_no_warm_process_holds_a_cuda_context_between_runs(gpu: WorkerHandle) -> None:
    """The CUDA pool's zygote imports torch but never touches CUDA: a fork of a process with
    a CUDA context could not use it, and the context would pin GPU memory for nothing."""
    assert gpu.run("import torch; torch.zeros(1, device='cuda')", backend="cuda")["verdict"] == "ok"
    assert compute_apps() == []

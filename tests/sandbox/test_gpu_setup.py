"""What a CUDA run is given, decided without a GPU: the device nodes, the driver's library
folders, and the zygotes' environments (tests/sandbox/test_cuda.py runs them on a GPU)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from sandbox import mounts
from sandbox.zygote_client import zygote_env

LDCONFIG = """\
3 libs found in cache `/etc/ld.so.cache'
\tlibnvidia-ml.so.1 (libc6,x86-64) => {driver}/libnvidia-ml.so.1
\tlibcuda.so.1 (libc6,x86-64) => {driver}/libcuda.so.1
\tlibc.so.6 (libc6,x86-64, OS ABI: Linux 3.2.0) => /lib/x86_64-linux-gnu/libc.so.6
\tlibcuda.so.1 (libc6,x86-64) => /gone/libcuda.so.1
"""


def test_the_driver_library_folders_come_from_the_loader_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    driver = tmp_path / "nvidia" / "lib64"
    driver.mkdir(parents=True)
    for name in ("libcuda.so.1", "libnvidia-ml.so.1"):
        (driver / name).touch()

    def ldconfig(*args: Any, **kwargs: Any) -> subprocess.CompletedProcess[str]:
        return subprocess.CompletedProcess(args, 0, LDCONFIG.format(driver=driver), "")

    monkeypatch.setattr(mounts.subprocess, "run", ldconfig)
    mounts._driver_libraries.cache_clear()
    try:
        # One folder, once; libc is not the driver's, and a listed file that is gone is skipped.
        assert mounts.gpu_library_dirs() == [str(driver)]
        # NVML's file is the one a CUDA run gets masked (/dev/null bound over it).
        assert mounts.nvml_files() == [str(driver / "libnvidia-ml.so.1")]
    finally:
        mounts._driver_libraries.cache_clear()


def test_a_cpu_zygote_hides_the_gpus_and_both_count_them_without_the_cuda_runtime() -> None:
    cpu, cuda = zygote_env("cpu"), zygote_env("cuda")
    assert cpu["CUDA_VISIBLE_DEVICES"] == "" and "CUDA_VISIBLE_DEVICES" not in cuda
    assert cpu["PYTORCH_NVML_BASED_CUDA_CHECK"] == cuda["PYTORCH_NVML_BASED_CUDA_CHECK"] == "1"


def test_only_nvidia_character_devices_are_given(monkeypatch: pytest.MonkeyPatch) -> None:
    import stat

    kinds = {
        "nvidia0": stat.S_IFCHR,
        "nvidiactl": stat.S_IFCHR,
        "nvidia-uvm": stat.S_IFCHR,
        "nvidia-modeset": stat.S_IFCHR,
        "nvidia-caps": stat.S_IFDIR,
        "null": stat.S_IFCHR,
    }
    monkeypatch.setattr(mounts.os, "listdir", lambda path: list(kinds))
    monkeypatch.setattr(
        mounts.os,
        "stat",
        lambda path: type("S", (), {"st_mode": kinds[path.rsplit("/", 1)[1]]})(),
    )
    assert mounts.gpu_devices() == ["nvidia-uvm", "nvidia0", "nvidiactl"]


def test_the_gpus_are_counted_from_their_device_nodes(monkeypatch: pytest.MonkeyPatch) -> None:
    nodes = ["nvidia-uvm", "nvidia-uvm-tools", "nvidia0", "nvidia1", "nvidia10", "nvidiactl"]
    monkeypatch.setattr(mounts, "gpu_devices", lambda: nodes)
    assert mounts.gpu_count() == 3
    monkeypatch.setattr(mounts, "gpu_devices", lambda: ["nvidiactl"])
    assert mounts.gpu_count() == 0

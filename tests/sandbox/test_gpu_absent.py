"""Why a worker offers no GPU, in words the exercise page shows as the absent GPU row."""

from __future__ import annotations

import glob

import pytest

from sandbox import host


def test_no_device_files_means_no_nvidia_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(glob, "glob", lambda pattern: [])
    assert host.why_no_cuda() == "This host has no NVIDIA GPU (no /dev/nvidia* device files)."


def test_device_files_without_a_usable_gpu_point_at_the_driver(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(glob, "glob", lambda pattern: ["/dev/nvidia0", "/dev/nvidiactl"])
    assert "torch.cuda.is_available() is false" in host.why_no_cuda()

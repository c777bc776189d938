"""The sandbox worker that `backprop serve` starts keeps its state in a folder of its
DATA_DIR's own, so that two servers on one host never sweep each other's runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.serve import sandbox_worker_command
from app.settings import Settings
from sandbox import cgroups
from sandbox.state_dir import default_state_dir
from tests.support.sandbox_worker import needs_isolation, worker_tree


def _state_dir(data_dir: Path) -> Path:
    command = sandbox_worker_command(Settings(data_dir=data_dir), client_uid=None)
    return Path(command[command.index("--state-dir") + 1])


def test_each_data_folder_has_a_worker_state_folder_of_its_own(tmp_path: Path) -> None:
    first, second = _state_dir(tmp_path / "one"), _state_dir(tmp_path / "two")
    assert first != second
    assert default_state_dir() not in (first, second)  # nobody else's default
    assert first.parent == second.parent == default_state_dir().parent
    assert cgroups.state_key(first) != cgroups.state_key(second)


def test_a_restarted_server_finds_its_previous_state_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "data").mkdir()
    absolute = _state_dir(tmp_path / "data")
    monkeypatch.chdir(tmp_path)
    assert _state_dir(Path("data")) == _state_dir(Path("./x/../data")) == absolute


@needs_isolation
def test_a_starting_worker_leaves_another_servers_runs_alone(tmp_path: Path) -> None:
    """What a worker does at start (it sweeps the run cgroups left under its key), done by
    the worker of a second data folder while the first one's run is there."""
    first = worker_tree(_state_dir(tmp_path / "one"))
    second = worker_tree(_state_dir(tmp_path / "two"))
    first.prepare()
    run = first.create(memory_mb=64, pids=8, cpus=1)
    try:
        second.prepare()
        assert second.sweep() == []
        assert all(folder.is_dir() for folder in run.folders())
        assert [c.folders() for c in first.leftovers()] == [run.folders()]
    finally:
        first.sweep()
        first.discard()
        second.discard()

"""Nothing left behind (sandbox/state_dir.py, app/serve.py): `backprop serve` notes in its
sandbox state folder which data folder it serves and locks it while it runs; a clean stop
removes the folder unless KEEP_SANDBOX_STATE asks to keep it; a start removes the folders of
servers whose data folder is gone, and never one that something is mounted in or that a
running server holds."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

from app.settings import PROJECT_ROOT
from sandbox import state_dir
from sandbox.state_dir import state_dir_for


def _state(parent: Path, name: str, data_dir: Path | None) -> Path:
    folder = parent / f"{state_dir.default_state_dir().name}-{name}"
    (folder / "root" / "etc").mkdir(parents=True)
    if data_dir is not None:
        (folder / state_dir.DATA_DIR_NOTE).write_text(str(data_dir))
    return folder


def test_a_claimed_state_folder_is_held_until_its_server_ends(tmp_path: Path) -> None:
    state = tmp_path / "state"
    fd = state_dir.claim(state, tmp_path / "data")
    assert (state / state_dir.DATA_DIR_NOTE).read_text() == str((tmp_path / "data").resolve())
    assert state_dir.in_use(state)
    # A second server on the same data folder is refused, saying why.
    child = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from pathlib import Path; from sandbox import state_dir; "
            "state_dir.claim(Path(sys.argv[1]), Path(sys.argv[2]))",
            str(state),
            str(tmp_path / "data"),
        ],
        capture_output=True,
        text=True,
        cwd=PROJECT_ROOT,
    )
    assert child.returncode != 0 and "already serves the data folder" in child.stderr
    os.close(fd)
    assert not state_dir.in_use(state)


def test_only_orphans_are_found(tmp_path: Path) -> None:
    alive = tmp_path / "data-alive"
    alive.mkdir()
    orphan = _state(tmp_path, "orphan", tmp_path / "deleted")
    _state(tmp_path, "served", alive)
    _state(tmp_path, "unnamed", None)  # from before servers noted their data folder
    held = _state(tmp_path, "held", tmp_path / "deleted-too")
    fd = state_dir.claim(held, tmp_path / "deleted-too")
    try:
        found = state_dir.orphans(tmp_path)
    finally:
        os.close(fd)
    assert found == [(orphan, str(tmp_path / "deleted"))]


def test_a_folder_with_something_mounted_in_it_is_never_removed(tmp_path: Path) -> None:
    folder = _state(tmp_path, "mounted", tmp_path / "gone")
    mountinfo = tmp_path / "mountinfo"
    mountinfo.write_text(
        "22 1 0:21 / / rw - ext4 /dev/sda1 rw\n"
        f"90 22 0:44 / {folder}/root/usr ro - overlay overlay ro\n"
    )
    why = state_dir.remove(folder, mountinfo)
    assert why is not None and f"{folder}/root/usr" in why
    assert folder.is_dir()
    mountinfo.write_text("22 1 0:21 / / rw - ext4 /dev/sda1 rw\n")
    assert state_dir.remove(folder, mountinfo) is None
    assert not folder.exists()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_serve_removes_its_state_at_a_clean_stop_and_orphans_at_start(tmp_path: Path) -> None:
    """The real `backprop serve`: an orphan left by a server whose data folder was deleted
    is removed (and said) at start; its own folder, there while it runs, is gone after
    SIGTERM."""
    # A folder the unprivileged web user can reach (pytest's own is closed to others).
    reachable = Path(tempfile.mkdtemp(prefix="backprop-serve-test-"))
    reachable.chmod(0o755)
    data_dir = reachable / "data"
    orphan = _state(state_dir.default_state_dir().parent, f"test-{os.getpid()}", tmp_path / "x")
    port = _free_port()
    env = {
        **os.environ,
        "DATA_DIR": str(data_dir),
        "PORT": str(port),
        "COMPILE_CACHE_WARM": "false",
        "SANDBOX_SOCKET": str(reachable / "sandbox.sock"),
    }
    env.pop("DATABASE_URL", None)
    server = subprocess.Popen(
        [sys.executable, "-c", "import sys; from app.cli import main; sys.exit(main())", "serve"],
        cwd=PROJECT_ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/health", timeout=2):
                    break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"backprop serve did not answer: {server.communicate()[0]}")
                time.sleep(0.2)
        own = state_dir_for(data_dir)
        assert (own / state_dir.DATA_DIR_NOTE).read_text() == str(data_dir.resolve())
        assert not orphan.exists()
    finally:
        server.send_signal(signal.SIGTERM)
        output, _ = server.communicate(timeout=60)
        shutil.rmtree(reachable, ignore_errors=True)
    assert f"removed the sandbox state folder {orphan}" in output
    assert f"removed the sandbox state folder {own}" in output
    assert not own.exists()

"""`backprop serve` started as root checks, as the web server's user, every path that user
must reach, and stops with one sentence naming the path and the fix (app/reach.py); a
checkout in a folder closed to others (root's home) is opened to that user alone, for
traversal, with an ACL, and the start says so."""

from __future__ import annotations

import logging
import os
import pwd
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from app import reach
from app.serve import prepare_paths, web_user
from app.settings import PROJECT_ROOT, Settings

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("setfacl") is None,
    reason="checks paths as another user (needs root) and sets ACLs (needs setfacl)",
)


@pytest.fixture
def user() -> pwd.struct_passwd:
    return web_user("backprop")


def _folder(mode: int) -> Path:
    # Not pytest's tmp_path: that lies in a folder closed to other users already.
    folder = Path(tempfile.mkdtemp(prefix="backprop-reach-"))
    folder.chmod(mode)
    return folder


@pytest.fixture
def open_dir() -> Iterator[Path]:
    folder = _folder(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def closed_dir() -> Iterator[Path]:
    folder = _folder(0o700)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def fake_checkout(parent: Path) -> Path:
    """A checkout as the web server reads it: its code readable by others."""
    checkout = parent / "backprop"
    (checkout / "app").mkdir(parents=True)
    (checkout / "app" / "asgi.py").write_text("")
    for path in (checkout, checkout / "app", checkout / "app" / "asgi.py"):
        path.chmod(0o755)
    return checkout


def acl_users(folder: Path) -> list[str]:
    """The ACL entries of named users on `folder`."""
    acl = subprocess.run(["getfacl", "-p", str(folder)], capture_output=True, text=True)
    return [
        line
        for line in acl.stdout.splitlines()
        if line.startswith("user:") and not line.startswith("user::")
    ]


def settings_for(data_dir: Path, **values: object) -> Settings:
    return Settings(  # type: ignore[call-arg]
        _env_file=None, data_dir=data_dir, secret_key="reach-test", **values
    )


def problems(settings: Settings, user: pwd.struct_passwd, code_root: Path) -> str:
    with pytest.raises(SystemExit) as stopped:
        prepare_paths(settings, user, code_root)
    return str(stopped.value)


def test_a_checkout_in_a_closed_folder_is_opened_to_the_web_user_alone_and_said(
    closed_dir: Path, open_dir: Path, user: pwd.struct_passwd, caplog: pytest.LogCaptureFixture
) -> None:
    checkout = fake_checkout(closed_dir)
    assert reach.can_access(user, [(checkout / "app" / "asgi.py", os.R_OK)]) == [False]

    with caplog.at_level(logging.INFO, logger="backprop"):
        prepare_paths(settings_for(open_dir / "data"), user, checkout)

    assert reach.can_access(user, [(checkout / "app" / "asgi.py", os.R_OK)]) == [True]
    # Traversal for that one user: the folder still lists nothing, to it or to anyone else.
    assert reach.can_access(user, [(closed_dir, os.R_OK)]) == [False]
    assert stat.S_IMODE(closed_dir.stat().st_mode) & 0o007 == 0
    nobody = pwd.getpwnam("nobody")
    assert reach.can_access(nobody, [(checkout / "app" / "asgi.py", os.R_OK)]) == [False]
    assert acl_users(closed_dir) == [f"user:{user.pw_name}:--x"]
    assert acl_users(checkout) == []  # open to others already: left as it was
    said = [r.getMessage() for r in caplog.records if "ACL" in r.getMessage()]
    assert len(said) == 1 and str(closed_dir) in said[0] and "setfacl -x" in said[0]

    # Once open, a later start changes nothing and says nothing of it.
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="backprop"):
        prepare_paths(settings_for(open_dir / "data"), user, checkout)
    assert not [r for r in caplog.records if "ACL" in r.getMessage()]


def test_a_data_dir_under_a_closed_folder_is_refused_in_one_sentence(
    closed_dir: Path, open_dir: Path, user: pwd.struct_passwd
) -> None:
    said = problems(settings_for(closed_dir / "data"), user, fake_checkout(open_dir))
    assert said == (
        f"The web server runs as 'backprop', which cannot write in DATA_DIR "
        f"({closed_dir / 'data'}): {closed_dir} is closed to it; let it through "
        f"(setfacl -m u:backprop:x {closed_dir}), or choose a DATA_DIR it can reach."
    )


def test_a_sqlite_database_in_a_private_folder_is_refused_in_one_sentence(
    closed_dir: Path, open_dir: Path, user: pwd.struct_passwd
) -> None:
    private = closed_dir / "private"
    private.mkdir(mode=0o700)
    settings = settings_for(open_dir / "data", database_url=f"sqlite:///{private}/app.db")
    said = problems(settings, user, fake_checkout(open_dir))
    assert "\n" not in said
    assert said.startswith(
        "The web server runs as 'backprop', which cannot write in the folder of "
        f"DATABASE_URL's SQLite file ({private}): {closed_dir} is closed to it;"
    )
    assert "leave DATABASE_URL unset to keep the database in DATA_DIR" in said


def test_a_sqlite_database_in_a_missing_folder_is_refused_in_one_sentence(
    open_dir: Path, user: pwd.struct_passwd
) -> None:
    missing = open_dir / "some" / "private" / "dir"
    settings = settings_for(open_dir / "data", database_url=f"sqlite:///{missing}/app.db")
    said = problems(settings, user, fake_checkout(open_dir))
    assert said.startswith(
        "The web server runs as 'backprop', which cannot write in the folder of "
        f"DATABASE_URL's SQLite file ({missing}): it does not exist; create it and give it"
    )


def test_a_sqlite_file_the_web_user_cannot_write_is_refused_in_one_sentence(
    open_dir: Path, user: pwd.struct_passwd
) -> None:
    shared = open_dir / "shared"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)
    database = shared / "app.db"
    database.write_bytes(b"")
    database.chmod(0o600)  # root's
    settings = settings_for(open_dir / "data", database_url=f"sqlite:///{database}")
    said = problems(settings, user, fake_checkout(open_dir))
    assert said == (
        f"The web server runs as 'backprop', which cannot write in DATABASE_URL's SQLite file "
        f"({database}): its permissions keep it out; give it to the web server's user, or "
        "leave DATABASE_URL unset to keep the database in DATA_DIR."
    )


def test_code_the_web_user_cannot_read_is_refused_in_one_sentence(
    open_dir: Path, user: pwd.struct_passwd
) -> None:
    checkout = fake_checkout(open_dir)
    (checkout / "app" / "asgi.py").chmod(0o600)
    said = problems(settings_for(open_dir / "data"), user, checkout)
    assert said == (
        f"The web server runs as 'backprop', which cannot read the code "
        f"({checkout / 'app' / 'asgi.py'}): its permissions keep it out; make the checkout "
        f"readable by others (chmod -R o+rX {checkout})."
    )


def test_an_interpreter_the_web_user_cannot_run_is_refused_in_one_sentence(
    open_dir: Path, user: pwd.struct_passwd, monkeypatch: pytest.MonkeyPatch
) -> None:
    python = open_dir / "python3"
    python.write_text("")
    python.chmod(0o700)  # root's alone, as an interpreter installed under /root would be
    monkeypatch.setattr(sys, "executable", str(python))
    said = problems(settings_for(open_dir / "data"), user, fake_checkout(open_dir))
    assert said == (
        f"The web server runs as 'backprop', which cannot run the interpreter ({python}): its "
        "permissions keep it out; make the virtual environment from a Python it can read "
        "(.ci/setup picks /usr/bin/python3)."
    )


def test_serve_stops_on_an_unreachable_database_without_a_traceback(open_dir: Path) -> None:
    env = {
        "PATH": os.environ["PATH"],
        "DATA_DIR": str(open_dir / "data"),
        "DATABASE_URL": f"sqlite:///{open_dir}/some/private/dir/app.db",
        "SECRET_KEY": "reach-test",
        "SANDBOX_AUTOSTART": "false",
    }
    done = subprocess.run(
        [sys.executable, "-m", "app.cli", "serve"],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if "web server runs as" in line]
    assert len(lines) == 1 and f"{open_dir}/some/private/dir" in lines[0]

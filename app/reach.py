"""What the web server's user must reach before `backprop serve` starts it, checked as that
user: DATA_DIR, a SQLite database named by DATABASE_URL, CONTENT_DIR, the sandbox socket's
folder, the code and the interpreter. A path out of reach stops the start with one sentence
naming it and the fix, never a traceback from deep inside the server later.

A clone in a folder closed to other users (root's home, mode 700) is the usual case: the
checkout's closed ancestors are opened to that one user for traversal only, with a POSIX ACL
entry (`u:USER:x`: no listing, no reading), and the start says so."""

from __future__ import annotations

import getpass
import os
import pwd
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from app.settings import PROJECT_ROOT, Settings


@dataclass(frozen=True)
class Need:
    """A path the web server must reach with `mode` (os.R_OK, os.W_OK, os.X_OK together)."""

    what: str  # in words: "DATA_DIR", "the code", ...
    path: Path
    mode: int
    other_way: str  # the fix that needs no change of permissions, in words


def can_access(user: pwd.struct_passwd | None, checks: Sequence[tuple[Path, int]]) -> list[bool]:
    """Whether `user` (None: this process) may access each path with its mode. As root, the
    answer comes from a child that has become `user`, so ACLs and groups count as the kernel
    counts them."""
    if user is None or os.geteuid() != 0:
        return [os.access(path, mode) for path, mode in checks]
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # only system calls from here on: safe after a fork
        code = 1
        try:
            os.close(read)
            os.setgroups([])
            os.setgid(user.pw_gid)
            os.setuid(user.pw_uid)
            os.write(write, bytes(os.access(path, mode) for path, mode in checks))
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    with os.fdopen(read, "rb") as answers:
        data = answers.read()
    _, status = os.waitpid(child, 0)
    if status != 0 or len(data) != len(checks):
        raise RuntimeError(f"could not check paths as {user.pw_name}")
    return [bool(b) for b in data]


def _folders_above(path: Path) -> list[Path]:
    """Every folder from / down to the one holding `path`."""
    return list(reversed(path.absolute().parents))


def open_way_to(path: Path, user: pwd.struct_passwd) -> list[Path]:
    """Let `user` through every folder above `path` (and `path` itself, a folder) that is
    closed to it, with an ACL entry for that user alone: traversal, no listing. Returns the
    folders changed. SystemExit, in one sentence, where that cannot be done."""
    path = path.resolve()
    folders = [*_folders_above(path), path]
    opened: list[Path] = []
    setfacl = shutil.which("setfacl")
    # The first closed folder from the top, again and again: those below a closed one only
    # seem closed until it is opened.
    while folder := _first_closed(folders, user):
        failure = (
            "setfacl is not installed (Debian's acl package: apt-get install acl)"
            if setfacl is None
            else _setfacl(setfacl, f"u:{user.pw_name}:x", folder)
        )
        if failure or folder in opened:
            raise SystemExit(
                f"The web server runs as '{user.pw_name}', which cannot reach {path}: {folder} "
                f"is closed to it, and letting it through failed: "
                f"{failure or 'the ACL entry did not open it'}. Open that folder "
                f"(chmod o+x {folder}), or put the checkout in a folder others can reach."
            )
        opened.append(folder)
    return opened


def _first_closed(folders: list[Path], user: pwd.struct_passwd) -> Path | None:
    answers = can_access(user, [(folder, os.X_OK) for folder in folders])
    return next((folder for folder, ok in zip(folders, answers, strict=True) if not ok), None)


def _setfacl(setfacl: str, entry: str, folder: Path) -> str | None:
    """None once `entry` is added to `folder`'s ACL; otherwise what setfacl said."""
    done = subprocess.run(
        [setfacl, "-m", entry, str(folder)], capture_output=True, text=True, check=False
    )
    if done.returncode == 0:
        return None
    return done.stderr.strip() or f"setfacl exited with status {done.returncode}"


def needs(settings: Settings, code_root: Path = PROJECT_ROOT) -> list[Need]:
    """Every path the web server must reach, with what it must do there."""
    found = [
        Need(
            "DATA_DIR",
            settings.data_dir,
            os.R_OK | os.W_OK | os.X_OK,
            "choose a DATA_DIR it can reach",
        ),
        Need(
            "the code",
            code_root / "app" / "asgi.py",
            os.R_OK,
            f"make the checkout readable by others (chmod -R o+rX {code_root})",
        ),
        Need(
            "CONTENT_DIR",
            settings.content_dir,
            os.R_OK | os.X_OK,
            "choose a CONTENT_DIR it can read",
        ),
        Need(
            "the sandbox socket's folder",
            settings.sandbox_socket.parent,
            os.X_OK,
            "choose a SANDBOX_SOCKET in a folder it can reach",
        ),
        *interpreter_needs(),
    ]
    database = sqlite_file(settings.database_url)
    if database is not None:
        keep = "or leave DATABASE_URL unset to keep the database in DATA_DIR"
        found.append(
            Need(
                "the folder of DATABASE_URL's SQLite file",
                database.parent,
                os.W_OK | os.X_OK,  # SQLite writes its journal beside the file
                f"create it and give it to the web server's user, {keep}",
            )
        )
        if database.exists():
            found.append(
                Need(
                    "DATABASE_URL's SQLite file",
                    database,
                    os.R_OK | os.W_OK,
                    f"give it to the web server's user, {keep}",
                )
            )
    return found


def interpreter_needs() -> list[Need]:
    """The interpreter (started again for --workers and --reload), its standard library and
    the virtual environment's packages."""
    setup = (
        "make the virtual environment from a Python it can read (.ci/setup picks /usr/bin/python3)"
    )
    return [
        Need("the interpreter", Path(os.path.realpath(sys.executable)), os.X_OK, setup),
        Need("the standard library", Path(sysconfig.get_path("stdlib")), os.R_OK | os.X_OK, setup),
        Need(
            "the installed packages", Path(sysconfig.get_path("purelib")), os.R_OK | os.X_OK, setup
        ),
    ]


def sqlite_file(database_url: str) -> Path | None:
    """The file a SQLite DATABASE_URL names; None for another database or an in-memory one."""
    try:
        url = make_url(database_url)
    except ArgumentError:
        return None
    if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
        return None
    if url.database.startswith("file:"):  # a URI filename: its own rules, left to SQLite
        return None
    return Path(url.database).absolute()


def out_of_reach(needs: Sequence[Need], user: pwd.struct_passwd | None) -> list[str]:
    """One sentence per need `user` (None: this process) cannot meet, naming the path that
    stops it and the fix."""
    checks: list[tuple[Path, int]] = []
    for need in needs:
        checks += [(folder, os.X_OK) for folder in _folders_above(need.path)]
        checks.append((need.path, need.mode))
    answers = iter(can_access(user, checks))
    name = user.pw_name if user is not None else getpass.getuser()
    sentences, failed = [], set()
    for need in needs:
        above = [(folder, next(answers)) for folder in _folders_above(need.path)]
        if next(answers) or need.path in failed:
            continue  # reached, or already said
        failed.add(need.path)
        start = (
            f"The web server runs as '{name}', which cannot {_verb(need)} {need.what} "
            f"({need.path}): "
        )
        closed = next((folder for folder, ok in above if not ok and folder.exists()), None)
        if not need.path.exists():
            sentences.append(f"{start}it does not exist; {need.other_way}.")
        elif closed is not None:
            let_through = (
                f"let it through (setfacl -m u:{name}:x {closed})"
                if user is not None
                else f"have its owner let you through (chmod o+x {closed})"
            )
            sentences.append(
                f"{start}{closed} is closed to it; {let_through}, or {need.other_way}."
            )
        else:
            sentences.append(f"{start}its permissions keep it out; {need.other_way}.")
    return sentences


def _verb(need: Need) -> str:
    if need.mode & os.W_OK:
        return "write in"
    if need.mode & os.R_OK:
        return "read"
    return "reach" if need.path.is_dir() else "run"

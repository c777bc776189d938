"""`backprop serve`: the sandbox worker and the web server, each with only the privileges
it needs. Started as root, the worker stays root (it builds every run's jail) and the web
server drops to an unprivileged user that owns the data folder; started as anyone else,
both run as that user (and the worker refuses to run code, saying why)."""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import pwd
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from app import reach
from app.settings import PROJECT_ROOT, Settings
from sandbox import state_dir
from sandbox.state_dir import state_dir_for

log = logging.getLogger("backprop")


def sandbox_worker_command(settings: Settings, client_uid: int | None) -> list[str]:
    """How `backprop serve` starts its sandbox worker: on SANDBOX_SOCKET, with a state
    folder of its DATA_DIR's own (sandbox/state_dir.py)."""
    command = [
        sys.executable,
        "-m",
        "sandbox",
        "--socket",
        str(settings.sandbox_socket),
        "--state-dir",
        str(state_dir_for(settings.data_dir)),
        "--parent-pid",  # a second guard beside the parent-death signal
        str(os.getpid()),
    ]
    if client_uid is not None:
        command += ["--client-uid", str(client_uid)]
    labs = settings.content_dir / "labs"
    if settings.compile_cache_warm and labs.is_dir():
        command += ["--warm-labs", str(labs)]
    return command


def start_sandbox_worker(settings: Settings, client_uid: int | None) -> subprocess.Popen[bytes]:
    """The sandbox worker as a child process, listening on SANDBOX_SOCKET (which only
    `client_uid`, the web server's user, and root may open). It is given none of our
    environment beyond what Python needs: no secrets, no database URL."""
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "HOME", "TMPDIR")}
    return subprocess.Popen(
        sandbox_worker_command(settings, client_uid),
        env=env,
        # The worker ends with us, however we end (uvicorn re-raises SIGTERM after shutdown,
        # so a `finally` here is not enough).
        preexec_fn=_die_with_parent,
    )


def _die_with_parent() -> None:
    PR_SET_PDEATHSIG = 1
    ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


def web_user(name: str) -> pwd.struct_passwd:
    """The unprivileged account the web server runs as, created (a system user with no
    home and no shell) when it does not exist yet."""
    try:
        return pwd.getpwnam(name)
    except KeyError:
        subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
            check=True,
        )
        log.info("created the system user '%s' for the web server (no home, no shell)", name)
        return pwd.getpwnam(name)


def give_data_to(folder: Path, user: pwd.struct_passwd) -> None:
    """The web server's user owns the data folder and everything in it."""
    folder.mkdir(parents=True, exist_ok=True)
    for path in [folder, *folder.rglob("*")]:
        if not path.is_symlink():
            os.chown(path, user.pw_uid, user.pw_gid)


def prepare_paths(
    settings: Settings, user: pwd.struct_passwd | None, code_root: Path = PROJECT_ROOT
) -> None:
    """Make every path the web server needs reachable by `user` (None: this process's own),
    or stop, saying which is not and how to fix it (app/reach.py). As root, the folders
    above the checkout and the interpreter that are closed to `user` are opened to it alone,
    for traversal, with an ACL: a clone in root's home works as one anywhere else. Logged
    once, naming each folder, when that changes anything."""
    if user is not None:
        opened: list[Path] = []
        for path in (code_root, Path(sys.prefix), Path(sys.base_prefix)):
            opened += reach.open_way_to(path, user)
        if opened:
            folders = " ".join(str(f) for f in dict.fromkeys(opened))
            log.info(
                "let '%s' through %s with an ACL entry (u:%s:x: traversal only, no listing) "
                "so the web server can reach the checkout %s; undo: setfacl -x u:%s %s",
                user.pw_name,
                folders,
                user.pw_name,
                code_root,
                user.pw_name,
                folders,
            )
        give_data_to(settings.data_dir, user)
    else:
        with contextlib.suppress(OSError):  # said below, with the fix
            settings.data_dir.mkdir(parents=True, exist_ok=True)
    problems = reach.out_of_reach(reach.needs(settings, code_root), user)
    if problems:
        raise SystemExit("\n".join(problems))


def drop_privileges(user: pwd.struct_passwd) -> None:
    """Become `user` for good: no supplementary groups, its group, its uid."""
    os.setgroups([])
    os.setgid(user.pw_gid)
    os.setuid(user.pw_uid)
    os.environ["HOME"] = "/nonexistent"


def serve(settings: Settings, *, reload: bool, workers: int) -> None:
    """Started as root: a root supervisor (this process) runs the worker and, in a child
    that drops to WEB_USER, the web server; it stops the worker when the web server ends,
    which an unprivileged process could not do."""
    user = web_user(settings.web_user) if os.geteuid() == 0 else None
    prepare_paths(settings, user)
    worker = None
    state = state_dir_for(settings.data_dir)
    if settings.sandbox_autostart:
        sweep_orphaned_state()
        state_dir.claim(state, settings.data_dir)  # held until this process ends
        worker = start_sandbox_worker(settings, user.pw_uid if user else None)
    try:
        if user is None:
            _run_uvicorn(settings, reload=reload, workers=workers)
        else:
            _run_as(user, settings, reload=reload, workers=workers)
    finally:
        if worker is not None:
            worker.terminate()
            try:
                worker.wait(timeout=10)
            except subprocess.TimeoutExpired:
                worker.kill()
                worker.wait()
            if not settings.keep_sandbox_state:
                _remove_state(state)


def sweep_orphaned_state() -> None:
    """Remove the state folders of servers whose data folder was deleted (and that no
    running server holds), saying which."""
    for folder, data_dir in state_dir.orphans():
        why_not = state_dir.remove(folder)
        if why_not:
            log.warning("left the sandbox state folder %s in place: %s", folder, why_not)
        else:
            log.info(
                "removed the sandbox state folder %s: its data folder %s is gone", folder, data_dir
            )


def _remove_state(state: Path) -> None:
    why_not = state_dir.remove(state)
    if why_not:
        log.warning("left the sandbox state folder %s in place: %s", state, why_not)
    else:
        log.info("removed the sandbox state folder %s (KEEP_SANDBOX_STATE=true keeps it)", state)


def _run_uvicorn(settings: Settings, *, reload: bool, workers: int) -> None:
    import uvicorn

    uvicorn.run(
        "app.asgi:app",
        host=settings.host,
        port=settings.port,
        reload=reload,
        workers=workers,
        # app/logs.py configures logging (in each server process: app/asgi.py); the access
        # line comes from app/web/request_id.py, with the request's id on it.
        log_config=None,
        access_log=False,
        **proxy_options(settings),
    )


def _run_as(user: pwd.struct_passwd, settings: Settings, *, reload: bool, workers: int) -> None:
    """The web server in a child that is `user` for good; this process waits for it and
    passes on the signals that should stop it."""
    child = os.fork()
    if child == 0:
        code = 1
        try:
            _die_with_parent()
            drop_privileges(user)
            log.info("web server running as %s (uid %d)", user.pw_name, user.pw_uid)
            _run_uvicorn(settings, reload=reload, workers=workers)
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        except BaseException:
            log.exception("the web server stopped")
        finally:
            os._exit(code)
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda received, _frame: os.kill(child, received))
    _, status = os.waitpid(child, 0)
    if os.waitstatus_to_exitcode(status) not in (0, -signal.SIGTERM, -signal.SIGINT):
        raise SystemExit(os.waitstatus_to_exitcode(status))


def proxy_options(settings: Settings) -> dict[str, Any]:
    """Believe X-Forwarded-For and X-Forwarded-Proto only from the configured proxies: by
    default from no one, so a client cannot pick the address its limits count against."""
    if not settings.trusted_proxies:
        return {"proxy_headers": False}
    return {"proxy_headers": True, "forwarded_allow_ips": settings.trusted_proxies}

"""The last step of a learner's jail in a graded run (sandbox/README.md, "Grading").

Two processes, both the learner's uid:

- the relay, which never runs the learner's code: it holds the socket to the grader, forks
  a server, passes each request to it and its answer back, and gives each request
  `timeout` seconds (sent by the grader). A server that runs past it is killed and the
  request answered `timeout`; one that dies is answered `error` with how it ended. The next
  request gets a fresh server, forked from the relay as the relay was from the zygote.
- the server, which loads the learner's code as the module `solution.py` and answers
  requests with executor.py. It is the only process where the learner's code runs.

The relay checks the size of what the server sends (the wire's caps) and otherwise forwards
its frames untouched: the grader checks them."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import select
import signal
import socket
import sys
from typing import Any

from sandbox.grading import wire
from sandbox.grading.executor import Executor
from sandbox.grading.solution import load_source, solution_traceback
from sandbox.user_code import _text_stream

LOAD_SECONDS = 30.0  # loading the module (its top-level code), at most


def run(code: str, grader_fd: int, threads: int, cuda: bool, gpu_memory_fraction: float) -> int:
    """The jail's program in a graded run: set up as user_code.run does, then relay."""
    sys.stdout, sys.stderr = _text_stream(1), _text_stream(2)
    sys.stdin = open(os.devnull)  # noqa: SIM115
    sys.argv = ["solution.py"]
    import torch

    torch.set_num_threads(threads)
    # The relay never touches CUDA: a process that did cannot fork one that uses it ("Cannot
    # re-initialize CUDA in forked subprocess", seen on an H100). Each server sets the cap.
    return serve(code, grader_fd, "cuda" if cuda else "cpu", gpu_memory_fraction, threads=threads)


def serve(
    code: str, grader_fd: int, device: str, gpu_memory_fraction: float = 0.5, *, threads: int
) -> int:
    """The relay. Returns once the grader has closed its end."""
    grader = socket.socket(fileno=grader_fd)
    fork = functools.partial(_fork_server, code, grader, device, gpu_memory_fraction, threads)
    # The first server starts loading the code at once, while the grader sets itself up.
    server: tuple[int, socket.socket] | None = fork(quiet=False)
    unread = True  # the server's first frame (did the code load?) is still to be read
    while True:
        try:
            head, body = wire.receive(grader)
        except (EOFError, OSError, wire.WireError):
            break
        header = _header(head)
        try:
            timeout = min(max(float(header.get("timeout", 10.0)), 0.1), 600.0)
        except (ValueError, TypeError):
            timeout = 10.0
        if server is None:
            server = fork(quiet=True)
            unread = True
        if unread:
            unread = False
            # The first load may take LOAD_SECONDS; a server forked again after a crash
            # loads within the call's own time (the grader waits twice that, remote.py).
            first = header.get("op") == "load"
            ready = _answer(server, max(timeout, LOAD_SECONDS) if first else timeout)
            if first or not _is_ok(ready):
                # The load's own answer, or the reason the code no longer loads.
                _reply(grader, ready)
                if not _is_ok(ready):
                    _end(server)
                    server = None
                continue
        with contextlib.suppress(OSError):  # it died: the answer below says how
            wire.send(server[1], head, body)
        answer = _answer(server, timeout)
        if isinstance(answer, dict):  # it ran out of time or died: the next one is fresh
            _end(server)
            server = None
        _reply(grader, answer)
    if server is not None:
        _end(server)
    return 0


Answer = tuple[bytes, bytes] | dict[str, Any]


def _header(head: bytes) -> dict[str, Any]:
    try:
        header = json.loads(head)
    except ValueError:
        return {}
    return header if isinstance(header, dict) else {}


def _is_ok(answer: Answer) -> bool:
    """A frame the server sent in good order (whose header says ok, for a load)."""
    return isinstance(answer, tuple) and _header(answer[0]).get("ok") is True


def _reply(grader: socket.socket, answer: Answer) -> None:
    with contextlib.suppress(OSError):
        if isinstance(answer, tuple):
            wire.send(grader, *answer)
        else:
            wire.send_value(grader, answer)


def _answer(server: tuple[int, socket.socket], timeout: float) -> Answer:
    """The server's next frame, or why there is none: {"ok": false, "status", "error"}."""
    pid, link = server
    ready, _, _ = select.select([link], [], [], timeout)
    if not ready:
        return {"ok": False, "status": "timeout",
                "error": f"your code did not answer within {timeout:g} s"}  # fmt: skip
    link.settimeout(timeout)
    try:
        return wire.receive(link)
    except (EOFError, OSError, wire.WireError) as exc:
        how = _ended(pid)
        reason = how or f"it sent something the grader cannot read ({exc})"
        return {"ok": False, "status": "crashed", "error": f"your code's process ended: {reason}"}


def _ended(pid: int) -> str:
    """How the server ended, once it has (waiting briefly), in words."""
    for _ in range(20):
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            if os.WIFSIGNALED(status):
                return f"killed by signal {signal.Signals(os.WTERMSIG(status)).name}"
            return f"exited with status {os.waitstatus_to_exitcode(status)}"
        select.select([], [], [], 0.01)
    return ""


def _end(server: tuple[int, socket.socket]) -> None:
    pid, link = server
    link.close()
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)


def _fork_server(
    code: str,
    grader: socket.socket,
    device: str,
    gpu_memory_fraction: float,
    threads: int,
    quiet: bool,
) -> tuple[int, socket.socket]:
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    pid = os.fork()
    if pid == 0:
        grader.close()  # the server never holds the grader's socket
        ours.close()
        status = 0
        try:
            _rebuild_thread_pool(threads)
            if device == "cuda":
                import torch

                torch.cuda.set_per_process_memory_fraction(gpu_memory_fraction)
            _server(code, theirs, device, quiet)
        except BaseException:  # whatever the learner's code did, end here
            status = 1
        finally:
            with contextlib.suppress(Exception):
                sys.stdout.flush()
                sys.stderr.flush()
            os._exit(status)
    theirs.close()
    return pid, ours


def _rebuild_thread_pool(threads: int) -> None:
    """Give the freshly forked server a sound torch thread pool while it has one thread.

    A fork marks torch's pthreadpool (caffe2's, which `at::set_num_threads` sizes) as
    corrupt in the child, and the next call that asks for the pool rebuilds it, without a
    lock: a thread asking meanwhile gets no pool, fails an internal assertion ("Invalid thread
    pool!") where nothing catches it, and the process aborts (SIGABRT). torch's own fork hook
    (`torch.get_num_threads` in the child) rebuilds it only where the forking thread had not
    yet set up its thread count (a thread-local flag, inherited), and the relay's main thread
    had, so a server started with its pool still marked (seen from a learner's code in the
    jail). Its first backward after a FakeTensorMode (torch.export uses one) starts eight
    autograd device threads at once, each setting the thread count: on a busy machine one
    lost the race. Rebuilt here, before the learner's code runs, no later caller rebuilds
    it."""
    import torch

    torch.set_num_threads(threads)


def _server(code: str, link: socket.socket, device: str, quiet: bool) -> None:
    """Load the learner's code and answer requests until the relay closes the link. A
    restarted server loads it with its output silenced: the learner sees it once."""
    try:
        with _silenced(quiet):
            namespace = load_source(code)
    except BaseException as exc:  # a SystemExit at load time is a failed load
        wire.send_value(link, {"ok": False, "status": "load", "error": _load_error(exc)})
        return
    wire.send_value(link, {"ok": True}, None)
    executor = Executor(namespace, device)
    while True:
        try:
            head, body = wire.receive(link)
        except EOFError:
            return
        frame, payload = wire.decode(head, body)
        try:
            value = executor.handle(str(frame.header.get("op")), payload)
            answer = wire.encode({"ok": True}, value)
        except BaseException as exc:  # reported to the grader, as an error
            wire.send_value(link, {"ok": False, "status": "error", "error": _call_error(exc)})
            continue
        wire.send(link, *answer)


def _load_error(exc: BaseException) -> str:
    if isinstance(exc, SystemExit):
        return "your code called sys.exit() while loading"
    return "your code did not load:\n" + solution_traceback(exc)


def _call_error(exc: BaseException) -> str:
    if isinstance(exc, SystemExit):
        return "your code called sys.exit()"
    if isinstance(exc, wire.WireError):
        return f"your code returned something that cannot be graded: {exc}"
    return solution_traceback(exc)


@contextlib.contextmanager
def _silenced(quiet: bool) -> Any:
    if not quiet:
        yield
        return
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    try:
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, null):
            os.close(fd)

"""The worker's Unix socket: listening on it, and answering each connection, which carries
one status query or one run (that a cancel, or the client leaving, stops)."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import signal
import socket
from pathlib import Path
from typing import Any

from sandbox.protocol import (
    GRADING_VERSION,
    OLDEST_VERSION,
    PHASE_VERSION,
    PROTOCOL_VERSION,
    RUN_ID_RE,
    Emit,
    Event,
    Finished,
    Phase,
    RunRequest,
    RunResult,
    StopReason,
    Verdict,
    decode,
    encode,
    event_to_json,
)
from sandbox.runner import RunContext
from sandbox.worker import Worker

log = logging.getLogger("sandbox")

MAX_LINE_BYTES = 1 << 20  # a run message holds at most 64 KiB of code, JSON-escaped
PARENT_POLL_SECONDS = 0.5


def _answering(socket_path: Path) -> bool:
    """Whether a live process listens on `socket_path` (a stale file does not count)."""
    with socket.socket(socket.AF_UNIX) as probe:
        try:
            probe.connect(str(socket_path))
        except OSError:
            return False
    return True


async def serve(
    socket_path: Path,
    worker: Worker,
    *,
    client_uid: int | None = None,
    client_gid: int | None = None,
    parent_pid: int | None = None,
) -> None:
    """Listen first, then warm up: meanwhile status answers `starting`, and runs wait.

    The socket is root's alone (0600), or also `client_uid`'s (the web server's user, which
    then owns it) and, given `client_gid`, that group's (0660). SIGTERM stops the worker:
    runs still going are killed and their cgroups removed; so does the end of `parent_pid`."""
    socket_path.parent.mkdir(parents=True, exist_ok=True)
    if _answering(socket_path):
        # A second `backprop serve` on the same data folder would otherwise take the first
        # one's socket away from it.
        raise SystemExit(f"another sandbox worker already listens on {socket_path}")
    with contextlib.suppress(FileNotFoundError):
        socket_path.unlink()
    # Created 0600 (by umask), not chmod-ed after: nobody can connect in between.
    umask = os.umask(0o177)
    try:
        server = await asyncio.start_unix_server(
            functools.partial(handle, worker), path=str(socket_path), limit=MAX_LINE_BYTES
        )
    finally:
        os.umask(umask)
    if client_uid is not None or client_gid is not None:
        # The web server runs as an unprivileged user: it (and root) may connect.
        os.chown(
            socket_path,
            -1 if client_uid is None else client_uid,
            -1 if client_gid is None else client_gid,
        )
    os.chmod(socket_path, 0o660 if client_gid is not None else 0o600)
    log.info("sandbox worker listening on %s (%s)", socket_path, worker.status().detail)
    stopping = asyncio.get_running_loop().create_future()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stopping.cancel)
    if parent_pid is not None:
        asyncio.get_running_loop().create_task(_watch_parent(parent_pid, stopping))
    try:
        async with server:
            await worker.start()
            log.info("sandbox worker %s", worker.status().detail)
            with contextlib.suppress(asyncio.CancelledError):
                await stopping
    finally:
        log.info("sandbox worker stopping")
        await asyncio.to_thread(worker.close)


async def _watch_parent(parent_pid: int, stopping: asyncio.Future[None]) -> None:
    """Stop once `parent_pid` is no longer our parent. A parent-death signal cannot do this
    for a parent that dropped root after starting us: the kernel checks the dying parent's
    permission to signal us, and drops the signal."""
    while os.getppid() == parent_pid:
        await asyncio.sleep(PARENT_POLL_SECONDS)
    log.warning("the process that started this worker (%d) has exited", parent_pid)
    stopping.cancel()


async def handle(
    worker: Worker, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    """One client connection: one status query or one run."""

    async def send(message: dict[str, Any]) -> None:
        writer.write(encode(message))
        await writer.drain()

    async def emit(event: Event) -> None:
        await send(event_to_json(event))  # the one place an event becomes JSON

    try:
        line = await reader.readline()
        if not line:
            return
        try:
            message = decode(line)
        except ValueError:
            await send(_error("each message must be one JSON object"))
            return
        if message.get("op") == "status":
            await send(worker.status_message())
        elif message.get("op") == "run":
            await emit(Finished(await _answer_run(worker, message, reader, emit)))
        else:
            await send(_error("op must be 'status' or 'run'"))
    except (ConnectionError, asyncio.IncompleteReadError):
        pass
    finally:
        writer.close()


def run_request(message: dict[str, Any]) -> RunRequest | RunResult:
    """The request a run message carries, or the `rejected` result that answers it: when it
    is malformed, or written for another version of the protocol."""
    version = message.get("v")
    # `type(...) is int`: JSON's true and 1.0 compare equal to 1 but are not a version.
    if type(version) is not int or not OLDEST_VERSION <= version <= PROTOCOL_VERSION:
        said = f"version {version}" if type(version) is int else "no version"
        return RunResult.refused(
            _run_id(message),
            Verdict.REJECTED,
            f"This worker speaks protocol version {PROTOCOL_VERSION}; the run asked for {said}.",
        )
    request = RunRequest.from_json(message.get("request"))
    if isinstance(request, RunRequest) and request.grading and version < GRADING_VERSION:
        return RunResult.refused(
            request.id,
            Verdict.REJECTED,
            f"A graded run needs protocol version {GRADING_VERSION}; the run asked for "
            f"version {version}.",
        )
    return request


async def _answer_run(
    worker: Worker,
    message: dict[str, Any],
    reader: asyncio.StreamReader,
    emit: Emit,
) -> RunResult:
    """Run what `message` asks for, stopping it if anything more comes from the client (a
    cancel) or the client goes away; its result, whatever happens."""
    request = run_request(message)
    if isinstance(request, RunResult):
        return request
    contexts: list[RunContext] = []
    if message["v"] < PHASE_VERSION:
        emit = _without_phases(emit)  # an older client would not know the event
    run = asyncio.create_task(worker.run(request, emit, contexts))
    watch = asyncio.create_task(reader.readline())  # a cancel, or the client leaving
    try:
        done, _ = await asyncio.wait({run, watch}, return_when=asyncio.FIRST_COMPLETED)
        if watch in done and not run.done():
            if contexts:
                contexts[0].stop(StopReason.CANCEL)  # running: killed, and judged as such
            else:
                run.cancel()  # still waiting for a slot (or for the worker to start)
        return await _outcome(run, request)
    finally:
        watch.cancel()


def _without_phases(emit: Emit) -> Emit:
    async def emit_but_phases(event: Event) -> None:
        if not isinstance(event, Phase):
            await emit(event)

    return emit_but_phases


async def _outcome(run: asyncio.Task[RunResult], request: RunRequest) -> RunResult:
    try:
        return await run
    except asyncio.CancelledError:
        return RunResult.refused(
            request.id,
            Verdict.KILLED,
            "Cancelled while waiting in the queue.",
            backend=request.backend.value,
        )
    except Exception as exc:  # a bug of ours must still end in a result
        log.exception("run failed inside the worker")
        return RunResult.refused(
            request.id,
            Verdict.INTERNAL_ERROR,
            f"The sandbox failed: {type(exc).__name__}.",
            backend=request.backend.value,
        )


def _run_id(message: dict[str, Any]) -> str:
    """The run's id, when the message holds a valid one: to label a rejection with."""
    request = message.get("request")
    run_id = request.get("id") if isinstance(request, dict) else None
    return run_id if isinstance(run_id, str) and RUN_ID_RE.match(run_id) else ""


def _error(detail: str) -> dict[str, Any]:
    return {"type": "error", "detail": detail}

"""Runs: start code in the sandbox, follow it live, keep the outcome.

A run's events fan out to its live watchers through a hub in this process; the outcome is
written to the database, where any replica can read it. (The hub is the in-process half of
the transport seam: a shared queue such as Redis would replace it for several replicas.)"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import secrets
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.engine import Engine
from sqlmodel import Session

from app.errors import DomainError, NotFound
from app.models import Item, Run, utcnow
from app.sandbox_client import SandboxClient, SandboxUnavailable
from app.services.mine import Mine
from app.services.ratelimit import RunLimiter
from sandbox.protocol import Backend, Limits, RunRequest, Verdict, check_code

log = logging.getLogger(__name__)
ACCEPT_TIMEOUT_SECONDS = 10


class RunRejected(DomainError):
    """The code cannot be run at all (too large, not UTF-8, unknown backend)."""

    status = 400


class SandboxBusy(DomainError):
    """The worker's queue is full or the worker is down: try again shortly."""

    status = 503

    def __init__(self, message: str, retry_after_seconds: int = 5) -> None:
        super().__init__(message)
        self.retry_after_seconds = retry_after_seconds


class RunNotFound(NotFound):
    def __init__(self, run_id: str) -> None:
        super().__init__(f"No run has the id '{run_id}'.")


@dataclass
class LiveRun:
    """The events of a run in progress, for whoever watches it."""

    events: list[dict[str, Any]] = field(default_factory=list)
    changed: asyncio.Condition = field(default_factory=asyncio.Condition)
    cancel: asyncio.Event = field(default_factory=asyncio.Event)
    done: bool = False

    async def add(self, event: dict[str, Any]) -> None:
        async with self.changed:
            self.events.append(event)
            self.done = self.done or event["type"] == "result"
            self.changed.notify_all()


@dataclass
class RunHub:
    """Live runs of this process, and the tasks driving them."""

    client: SandboxClient
    engine: Engine
    limiter: RunLimiter
    live: dict[str, LiveRun] = field(default_factory=dict)
    tasks: set[asyncio.Task[None]] = field(default_factory=set)

    async def start(
        self,
        *,
        code: object,
        backend: str,
        visitor: str,
        learner_id: int | None = None,
        item_id: int | None = None,
        sample_index: int | None = None,
    ) -> Run:
        """Check, admit and queue a run; return it once the worker has accepted it."""
        problem = check_code(code)
        if problem:
            raise RunRejected(f"Rejected: {problem}.")
        assert isinstance(code, str)
        if backend not in {b.value for b in Backend}:
            raise RunRejected(f"Rejected: unknown backend '{backend}' (use cpu, cuda or auto).")
        self.limiter.admit(visitor)
        encoded = code.encode()
        run = Run(
            id=secrets.token_hex(16),
            visitor=visitor,
            learner_id=learner_id,
            item_id=item_id,
            sample_index=sample_index,
            code_sha256=hashlib.sha256(encoded).hexdigest(),
            code_bytes=len(encoded),
            backend_requested=backend,
        )
        with Session(self.engine) as session:
            session.add(run)
            session.commit()
            session.refresh(run)
        live = self.live[run.id] = LiveRun()
        accepted: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        request = RunRequest(id=run.id, code=code, backend=Backend(backend), limits=Limits())
        task = asyncio.create_task(self._drive(run.id, visitor, request, live, accepted))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        first = await asyncio.wait_for(asyncio.shield(accepted), ACCEPT_TIMEOUT_SECONDS)
        if first["type"] == "busy":
            raise SandboxBusy(
                "The code runners are all busy; try again in a few seconds.",
                int(first.get("retry_after", 5)),
            )
        if first["type"] == "unavailable":
            raise SandboxBusy(first["detail"], 30)
        return run

    async def _drive(
        self,
        run_id: str,
        visitor: str,
        request: RunRequest,
        live: LiveRun,
        accepted: asyncio.Future[dict[str, Any]],
    ) -> None:
        try:
            try:
                async for event in self.client.run(request, live.cancel):
                    if not accepted.done():
                        accepted.set_result(event)
                    if event["type"] == "busy":
                        self._finish(
                            run_id,
                            {"verdict": Verdict.REJECTED.value, "detail": "The queue was full."},
                        )
                        continue
                    if event["type"] == "started":
                        self._update(
                            run_id,
                            status="running",
                            backend=event["backend"],
                            device=event["device"],
                        )
                    if event["type"] == "result":
                        self._finish(run_id, event["result"])
                    await live.add(event)
            except SandboxUnavailable as exc:
                detail = f"Code cannot run right now: {exc}."
                if not accepted.done():
                    accepted.set_result({"type": "unavailable", "detail": detail})
                result = {"verdict": Verdict.INTERNAL_ERROR.value, "detail": detail}
                self._finish(run_id, result)
                await live.add({"type": "result", "result": self.public(run_id)})
        except Exception:  # a bug here must not leave watchers waiting forever
            log.exception("run %s failed in the app", run_id)
            self._finish(
                run_id,
                {
                    "verdict": Verdict.INTERNAL_ERROR.value,
                    "detail": "The app lost track of this run.",
                },
            )
            if not accepted.done():
                accepted.set_result({"type": "unavailable", "detail": "internal error"})
            await live.add({"type": "result", "result": self.public(run_id)})
        finally:
            self.limiter.finished(visitor)
            # Late watchers read the stored run; keep the live copy a little for stragglers.
            await asyncio.sleep(30)
            self.live.pop(run_id, None)

    def _update(self, run_id: str, *, count_practice: bool = False, **fields: Any) -> None:
        with Session(self.engine) as session:
            run = session.get(Run, run_id)
            if run is None:
                return
            for key, value in fields.items():
                setattr(run, key, value)
            session.add(run)
            if count_practice:
                _count_practice(session, run)
            session.commit()

    def _finish(self, run_id: str, result: dict[str, Any]) -> None:
        """Store the outcome and count it as practice, in one transaction."""
        keys = (
            "verdict",
            "exit_code",
            "stdout",
            "stderr",
            "detail",
            "truncated",
            "wall_ms",
            "cpu_ms",
            "max_memory_mb",
            "backend",
            "device",
        )
        self._update(
            run_id,
            count_practice=True,
            status="done",
            finished_at=utcnow(),
            **{k: result[k] for k in keys if k in result},
        )

    def get(self, run_id: str) -> Run:
        with Session(self.engine) as session:
            run = session.get(Run, run_id)
        if run is None:
            raise RunNotFound(run_id)
        return run

    def owned(self, run_id: str, *, learner_id: int | None) -> Run:
        """The run, if it is this learner's; anyone else gets the same answer as for no run."""
        run = self.get(run_id)
        if learner_id is None or run.learner_id != learner_id:
            raise RunNotFound(run_id)
        return run

    def public(self, run_id: str) -> dict[str, Any]:
        return run_public(self.get(run_id))

    def cancel(self, run_id: str) -> Run:
        """Ask the worker to stop the run; it ends with verdict `killed`."""
        run = self.get(run_id)
        live = self.live.get(run_id)
        if live is not None:
            live.cancel.set()
        return run

    async def events(self, run_id: str) -> AsyncIterator[dict[str, Any]]:
        """Every event of the run from its start, live while it runs; for a finished run
        that is no longer live, its stored output and result."""
        live = self.live.get(run_id)
        if live is None:
            run = self.get(run_id)
            if run.status != "done":
                # Another process drives it: follow the database until it ends.
                while run.status != "done":
                    await asyncio.sleep(0.25)
                    run = self.get(run_id)
            if run.stdout:
                yield {"type": "stdout", "data": run.stdout}
            if run.stderr:
                yield {"type": "stderr", "data": run.stderr}
            yield {"type": "result", "result": run_public(run)}
            return
        seen = 0
        while True:
            async with live.changed:
                while seen >= len(live.events):
                    await live.changed.wait()
                batch = live.events[seen:]
            seen += len(batch)
            for event in batch:
                if event["type"] == "result":
                    yield {"type": "result", "result": self.public(run_id)}
                    return
                yield event

    async def close(self) -> None:
        for task in list(self.tasks):
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.gather(*self.tasks, return_exceptions=True)


def _count_practice(session: Session, run: Run) -> None:
    """A finished run is practice for its learner, and on its item when it had one. Runs
    that never started (refused, or our own failure) are not the learner's doing."""
    if run.learner_id is None:
        return
    if run.verdict in (Verdict.REJECTED.value, Verdict.INTERNAL_ERROR.value):
        return
    item = session.get(Item, run.item_id) if run.item_id else None
    Mine(session, run.learner_id).record_run(item, ok=run.verdict == Verdict.OK.value)


def run_public(run: Run) -> dict[str, Any]:
    """A run as the API shows it (never the visitor key or the code)."""
    return {
        "id": run.id,
        "status": run.status,
        "verdict": run.verdict,
        "exit_code": run.exit_code,
        "stdout": run.stdout,
        "stderr": run.stderr,
        "detail": run.detail,
        "truncated": run.truncated,
        "wall_ms": run.wall_ms,
        "cpu_ms": run.cpu_ms,
        "max_memory_mb": run.max_memory_mb,
        "backend": run.backend,
        "device": run.device,
    }

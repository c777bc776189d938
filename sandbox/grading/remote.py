"""The grader's handle on the learner's code in the other jail: requests over the socket,
answers read with the wire's checks (wire.py). What comes back is only ever data."""

from __future__ import annotations

import socket
from typing import Any

from sandbox.grading import wire
from sandbox.grading.learner import LOAD_SECONDS
from sandbox.grading.solution import LearnerError, Solution

# The relay answers `timeout` itself after `call_seconds` (twice that when it first forks a
# fresh server, which loads the code within the call's time too); past that and this much
# more, the relay is not answering at all, and the learner's side is given up for the rest
# of the grading.
GRACE_SECONDS = 3.0
MAX_ERROR_CHARS = 4000


class RemoteSolution(Solution):
    def __init__(self, sock: socket.socket, device: str, call_seconds: float) -> None:
        self.sock = sock
        self.device = device
        self.call_seconds = call_seconds
        self.lost: str | None = None  # why the learner's side no longer answers

    def load(self) -> str | None:
        """Have the learner's code loaded; why it did not load, or None."""
        try:
            self.request("load", {}, LOAD_SECONDS)
        except LearnerError as exc:
            return str(exc)
        return None

    def request(self, op: str, payload: dict[str, Any], seconds: float | None = None) -> Any:
        if self.lost is not None:
            raise LearnerError(self.lost, lost=True)
        seconds = seconds or self.call_seconds
        try:
            head, body = wire.encode({"op": op, "timeout": seconds}, payload)
        except wire.WireError as exc:
            raise LearnerError(f"cannot send this request: {exc}") from None
        self.sock.settimeout(2 * seconds + GRACE_SECONDS)
        try:
            wire.send(self.sock, head, body)
            head, body = wire.receive(self.sock)
        except TimeoutError:
            self.lost = f"no answer within {2 * seconds + GRACE_SECONDS:g} s"
            raise LearnerError(self.lost, "timeout", lost=True) from None
        except (EOFError, OSError, wire.WireError) as exc:
            self.lost = f"the connection to it broke ({exc})"
            raise LearnerError(self.lost, lost=True) from None
        try:
            frame, value = wire.decode(head, body, keep_grad=False)
        except wire.WireError as exc:
            raise LearnerError(f"your code's answer cannot be graded: {exc}") from None
        header = frame.header
        if header.get("ok") is True:
            self.last_devices = tuple(frame.devices)
            return value
        status = "timeout" if header.get("status") == "timeout" else "error"
        raise LearnerError(str(header.get("error", "no answer"))[:MAX_ERROR_CHARS], status)

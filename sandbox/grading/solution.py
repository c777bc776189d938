"""The grader's handle on a solution: the learner's, across the wire in another process
(`remote.py`), or one of ours, in this process (`LocalSolution`, the reference in the grader
and the trusted runner's mutants). Tests speak to either through the same few requests, so
a test computes the expected value and the learner's value with the same code."""

from __future__ import annotations

import linecache
import sys
import traceback
import types
from typing import Any

from sandbox.grading.executor import Executor
from sandbox.grading.wire import Ref, WireError, decode, encode

SOLUTION_FILENAME = "solution.py"
DEFAULT_CALL_SECONDS = 10.0


class LearnerError(Exception):
    """A request the solution did not answer with a value: it raised (`error`), ran past its
    time (`timeout`), or its process is gone (`error`, `lost`)."""

    def __init__(self, message: str, status: str = "error", lost: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.lost = lost


class GraderFault(Exception):
    """Our side failed (the reference raised, a test is broken): never the learner's fault."""


class Solution:
    """Requests to one solution. Subclasses implement `request`."""

    device = "cpu"
    call_seconds = DEFAULT_CALL_SECONDS
    last_devices: tuple[str, ...] = ()  # where the tensors of the last answer were computed
    # A default check: the floating tensors of each call and method call arrive requiring
    # grad, as a model's activations do (the executor makes them so).
    grad_inputs = False

    def request(self, op: str, payload: dict[str, Any]) -> Any:
        raise NotImplementedError

    def call(self, target: str, *args: Any, **kwargs: Any) -> Any:
        """`target(*args, **kwargs)`; target is a top-level name, or a dotted path such as
        `GELUFunction.apply`."""
        payload = {"target": target, "args": args, "kwargs": kwargs}
        return self.request("call", payload | self._inputs())

    def new(self, target: str, *args: Any, **kwargs: Any) -> Ref:
        """Build an object of class `target`; it stays in the solution's process."""
        result = self.request("new", {"target": target, "args": args, "kwargs": kwargs})
        return _ref(result)

    def method(self, obj: Ref, name: str, *args: Any, **kwargs: Any) -> Any:
        payload = {"obj": obj, "name": name, "args": args, "kwargs": kwargs}
        return self.request("method", payload | self._inputs())

    def _inputs(self) -> dict[str, Any]:
        return {"inputs": "grad"} if self.grad_inputs else {}

    def method_ref(self, obj: Ref, name: str, *args: Any, **kwargs: Any) -> Ref:
        """A method's result kept in the solution's process (an object that cannot travel)."""
        payload = {"obj": obj, "name": name, "args": args, "kwargs": kwargs, "ref": True}
        payload |= self._inputs()
        return _ref(self.request("method", payload))

    def get(self, obj: Ref, name: str | None = None) -> Any:
        """An attribute of a kept object (or the object itself): it must be tensors and plain
        values."""
        return self.request("get", {"obj": obj, "name": name})

    def set(self, obj: Ref, name: str, value: Any) -> None:
        self.request("set", {"obj": obj, "name": name, "value": value})

    def keep(self, value: Any) -> Ref:
        """Send `value` once and keep it there (e.g. parameters an optimiser will update)."""
        return _ref(self.request("keep", {"value": value}))

    def index(self, obj: Ref, index: int | str) -> Ref:
        return _ref(self.request("index", {"obj": obj, "index": index}))

    def vjp(
        self,
        target: str,
        args: tuple[Any, ...],
        grad_output: Any,
        kwargs: dict[str, Any] | None = None,
        layout: str | None = None,
    ) -> tuple[Any, list[Any]]:
        """Forward `target(*args)` with every floating tensor argument requiring grad, then
        backward with `grad_output`: (output, the gradient of each positional argument).
        `layout` ("strided" or "expanded"): the grad_output reaches the backward as a larger
        graph would hand it on (executor.py)."""
        payload = {"target": target, "args": args, "kwargs": kwargs or {}}
        if layout is not None:
            payload["grad_layout"] = layout
        answer = self.request("vjp", {**payload, "grad_output": grad_output})
        if not isinstance(answer, dict) or not isinstance(answer.get("grads"), list):
            raise LearnerError("the answer to a backward request was malformed")
        return answer.get("output"), answer["grads"]

    def batch(self, calls: list[dict[str, Any]]) -> list[tuple[bool, Any]]:
        """Several requests in one message, e.g. [{"op": "call", "target": ..., "args": ...}]."""
        answers = self.request("batch", {"calls": calls})
        if not isinstance(answers, list) or len(answers) != len(calls):
            raise LearnerError("the answer to a batch was malformed")
        out = []
        for answer in answers:
            if not isinstance(answer, list) or len(answer) != 2:
                raise LearnerError("the answer to a batch was malformed")
            out.append((answer[0] is True, answer[1]))
        return out

    def repeat(
        self, target: str, inputs: list[tuple[Any, ...]], obj: Ref | None = None
    ) -> list[Any]:
        """The target (a method of `obj` when given) called on each input tuple: its
        outputs, in order."""
        payload = {"target": target, "inputs": inputs} | ({"obj": obj} if obj else {})
        outputs = self.request("repeat", payload)
        if not isinstance(outputs, list) or len(outputs) != len(inputs):
            raise LearnerError("the answer to a timed round was malformed")
        return outputs

    def begin(self, test: str) -> None:
        """A test starts (a remote learner that crashed in the last one is restarted)."""

    def close(self) -> None:
        """No more requests."""


def _ref(value: Any) -> Ref:
    if not isinstance(value, Ref):
        raise LearnerError("expected an object reference in the answer")
    return value


def load_source(code: str, filename: str = SOLUTION_FILENAME) -> dict[str, Any]:
    """Execute `code` as a fresh module whose file is `filename`; its namespace. Tracebacks
    quote its lines (linecache), as if it were a file on disk."""
    name = filename.removesuffix(".py")
    module = types.ModuleType(name)
    module.__file__ = filename
    linecache.cache[filename] = (len(code), None, code.splitlines(keepends=True), filename)
    program = compile(code, filename, "exec")
    # Registered while it runs so that dataclasses and pickling-free helpers that look the
    # module up by name find it; the namespace is what we keep.
    previous = sys.modules.get(name)
    sys.modules[name] = module
    try:
        exec(program, module.__dict__)
    finally:
        if previous is not None:
            sys.modules[name] = previous
        else:
            sys.modules.pop(name, None)
    return module.__dict__


def solution_traceback(exc: BaseException, filename: str = SOLUTION_FILENAME) -> str:
    """The exception from the solution's own frames down: none of the harness's."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != filename:
        tb = tb.tb_next
    lines = traceback.format_exception(type(exc), exc, tb)
    return "".join(lines)[-4000:]


class LocalSolution(Solution):
    """A solution of ours, run in this process. Every request and answer still goes through
    the wire's encoding, so a local run meets the same conversions as a remote one."""

    def __init__(self, namespace: dict[str, Any], device: str = "cpu", filename: str = "") -> None:
        self.executor = Executor(namespace, device)
        self.device = device
        self.filename = filename or SOLUTION_FILENAME

    @classmethod
    def from_source(cls, code: str, filename: str = SOLUTION_FILENAME) -> LocalSolution:
        return cls(load_source(code, filename), filename=filename)

    def request(self, op: str, payload: dict[str, Any]) -> Any:
        try:
            _, sent = decode(*encode({"op": op}, payload))
            answer = self.executor.handle(op, sent)
            frame, back = decode(*encode({"ok": True}, answer), keep_grad=False)
            self.last_devices = tuple(frame.devices)
        except WireError as exc:
            raise LearnerError(f"the answer cannot be graded: {exc}") from None
        except Exception as exc:
            raise LearnerError(solution_traceback(exc, self.filename)) from None
        return back

"""What a solution's process does with each request of the grader: call a function, build an
object, call its method, read or set an attribute, keep a value, run a backward pass.

It runs beside the solution's code (the learner's, in the learner's jail; or ours, in the
trusted in-process runner), and is told nothing of what the answers should be."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from sandbox.grading import leaves
from sandbox.grading.wire import Ref, tensors_in

OPS = ("call", "new", "method", "get", "set", "keep", "index", "vjp", "batch", "repeat", "audit")
# Requests after which the learner's side effects are noted for the next `audit`: the tensors
# that arrived by value with them (a caller's arguments, a grad_output) must come out as they
# went in, and an answer must not share memory with them.
AUDITED = ("call", "new", "method", "vjp")


class Executor:
    """Answers requests against one solution's namespace (its module's globals), on
    `device`: every tensor that arrives is moved there first."""

    def __init__(self, namespace: dict[str, Any], device: str = "cpu") -> None:
        self.namespace = namespace
        self.device = device
        self.objects: dict[int, Any] = {}
        self.arrived: list[tuple[str, torch.Tensor]] = []  # (where, tensor) by value
        self.findings: list[str] = []  # side effects seen since the last audit
        self.strided = False  # this request's tensors arrive non-contiguous (a default check)
        self.grad_inputs = False  # this request's floating tensors arrive requiring grad

    def handle(self, op: str, payload: Any) -> Any:
        if op not in OPS or not isinstance(payload, dict):
            raise ValueError(f"unknown request {op!r}")
        self.arrived = []
        self.strided = op == "call" and payload.get("layout") == "strided"
        self.grad_inputs = op in ("call", "method") and payload.get("inputs") == "grad"
        payload = self._arrive(payload)
        if op == "call" and "alias" in payload:
            payload = _aliased(payload)
        if op not in AUDITED:
            return getattr(self, f"_{op}")(payload)
        before = [(where, t, t.detach().clone()) for where, t in self.arrived]
        containers = _containers(payload)
        answer = getattr(self, f"_{op}")(payload)
        self._note_side_effects(op, payload, before, containers, answer)
        return answer

    def _note_side_effects(
        self,
        op: str,
        payload: dict[str, Any],
        before: list[tuple[str, torch.Tensor, torch.Tensor]],
        containers: dict[str, tuple[Any, Any]],
        answer: Any,
    ) -> None:
        called = payload.get("target") or payload.get("name") or op
        for where, tensor, copy in before:
            if not _same(tensor, copy):
                self.findings.append(f"changed:{called}:{where}")
        for where, (container, shape) in containers.items():
            if _shape_of(container) != shape:
                self.findings.append(f"edited:{called}:{where}")
        if op == "vjp":
            return  # its answer holds gradients, which may be the inputs' own buffers
        storages = {
            t.untyped_storage().data_ptr(): where
            for where, t, _ in before
            if t.numel() and t.untyped_storage().nbytes()
        }
        for out in tensors_in(answer):
            if out.numel() and out.untyped_storage().data_ptr() in storages:
                where = storages[out.untyped_storage().data_ptr()]
                self.findings.append(f"shares:{called}:{where}")
        for obj in self.objects.values():
            for name, tensor in _state_of(obj):
                if tensor.grad_fn is not None:
                    self.findings.append(f"graph:{type(obj).__name__}:{name}")

    def _audit(self, p: dict[str, Any]) -> list[str]:
        """The side effects noted since the last audit (each once), and forget them."""
        found = list(dict.fromkeys(self.findings))
        self.findings = []
        return found

    def _arrive(self, value: Any, where: str = "") -> Any:
        """Move tensors to this process's device and swap references for their objects."""
        if isinstance(value, torch.Tensor):
            moved = value.detach().to(self.device)
            if self.strided and moved.dim() >= 2:
                # As a caller's transposed or sliced tensor arrives: the same values, in a
                # non-contiguous layout (a .view() of it raises, as it would for them).
                moved = _non_contiguous(moved)
            wants_grad = self.grad_inputs and moved.is_floating_point()
            moved = moved.requires_grad_(value.requires_grad or wants_grad)
            self.arrived.append((where, moved))
            return moved
        if isinstance(value, Ref):
            if value.id not in self.objects:
                raise KeyError(f"no object {value.id}")
            return self.objects[value.id]
        if isinstance(value, list):
            return [self._arrive(v, f"{where}[{i}]") for i, v in enumerate(value)]
        if isinstance(value, tuple):
            return tuple(self._arrive(v, f"{where}[{i}]") for i, v in enumerate(value))
        if isinstance(value, dict):
            return {
                k: self._arrive(v, f"{where}.{k}" if where else str(k)) for k, v in value.items()
            }
        return value

    def _keep_object(self, value: Any) -> Ref:
        ref = Ref(len(self.objects) + 1)
        self.objects[ref.id] = value
        return ref

    def resolve(self, target: str) -> Any:
        """`name` or `name.attr.attr` in the solution's namespace."""
        first, *rest = target.split(".")
        if first not in self.namespace:
            raise NameError(f"your code defines no {first!r}")
        found = self.namespace[first]
        for attr in rest:
            found = getattr(found, attr)
        return found

    def _answer(self, value: Any, as_ref: bool) -> Any:
        return self._keep_object(value) if as_ref else value

    def _call(self, p: dict[str, Any]) -> Any:
        fn = self.resolve(p["target"])
        return self._answer(fn(*p.get("args", ()), **p.get("kwargs", {})), p.get("ref", False))

    def _new(self, p: dict[str, Any]) -> Ref:
        cls = self.resolve(p["target"])
        return self._keep_object(cls(*p.get("args", ()), **p.get("kwargs", {})))

    def _method(self, p: dict[str, Any]) -> Any:
        fn = getattr(p["obj"], p["name"])
        return self._answer(fn(*p.get("args", ()), **p.get("kwargs", {})), p.get("ref", False))

    def _get(self, p: dict[str, Any]) -> Any:
        name = p.get("name")
        return p["obj"] if name is None else getattr(p["obj"], name)

    def _set(self, p: dict[str, Any]) -> None:
        setattr(p["obj"], p["name"], p["value"])

    def _keep(self, p: dict[str, Any]) -> Ref:
        return self._keep_object(p["value"])

    def _index(self, p: dict[str, Any]) -> Ref:
        return self._keep_object(p["obj"][p["index"]])

    def _vjp(self, p: dict[str, Any]) -> dict[str, Any]:
        """Forward with every floating tensor argument requiring grad (a weight in a dict or
        list of parameters too), then the vector-Jacobian product with `grad_output`:
        {"output", "grads"}, a gradient per positional argument (None where it is not a
        floating tensor or got none; a dict or list of them for a dict or list of tensors)."""
        args = leaves.replaced(
            list(p.get("args", ())), lambda a: a.detach().clone().requires_grad_(True)
        )
        wanted = [t for _, t in leaves.floating(args)]
        shape = leaves.replaced(args, lambda a: a)  # what the call may not rearrange
        fn: Callable[..., Any]
        fn = getattr(p["obj"], p["target"]) if "obj" in p else self.resolve(p["target"])
        with torch.enable_grad():
            output = fn(*args, **p.get("kwargs", {}))
            outputs = tensors_in(output)  # nested outputs, depth first: (out, (h, c))
            grad_outputs = p["grad_output"]
            grad_outputs = (
                list(grad_outputs) if isinstance(grad_outputs, (tuple, list)) else [grad_outputs]
            )
            grad_outputs = [_incoming(g, p.get("grad_layout")) for g in grad_outputs]
            pairs = [(o, g) for o, g in zip(outputs, grad_outputs, strict=False) if o.requires_grad]
            grads: list[Any] = [None] * len(wanted)
            if pairs and wanted:
                grads = list(
                    torch.autograd.grad(
                        [o for o, _ in pairs],
                        wanted,
                        [g for _, g in pairs],
                        allow_unused=True,
                    )
                )
        return {"output": output, "grads": leaves.answered(shape, iter(grads))}

    def _batch(self, p: dict[str, Any]) -> list[Any]:
        """Several requests in one message: [[true, value] | [false, error], ...]."""
        answers: list[Any] = []
        for item in p["calls"]:
            try:
                answers.append([True, getattr(self, f"_{item['op']}")(item)])
            except Exception as exc:
                answers.append([False, f"{type(exc).__name__}: {exc}"])
        return answers

    def _repeat(self, p: dict[str, Any]) -> list[Any]:
        """Call the target once on each input tuple (a timed round of the performance test:
        the grader holds the clock); answers the outputs, which the grader compares with the
        reference's, so that a round which skipped its calls cannot pass."""
        # A method of an object built beforehand (untimed) when `obj` is given: a module's
        # forward, an optimiser's step.
        fn = getattr(p["obj"], p["target"]) if "obj" in p else self.resolve(p["target"])
        outputs = [fn(*args) for args in p["inputs"]]
        if self.device == "cuda":
            torch.cuda.synchronize()
        return outputs


def _aliased(payload: dict[str, Any]) -> dict[str, Any]:
    """The call with one tensor passed twice (a default check): `alias` [i, j] makes
    positional argument j the very object of argument i, as `attention(x, x, x)` passes it."""
    args = list(payload.get("args", ()))
    i, j = payload["alias"]
    if not (0 <= i < j < len(args)):
        raise ValueError("alias names no two arguments")
    args[j] = args[i]
    return {**payload, "args": tuple(args)}


def _non_contiguous(t: torch.Tensor) -> torch.Tensor:
    """The same values in a layout no fresh tensor has: column-major from 2 dims (a .view()
    across dims raises, as for a transposed caller's tensor), every other element of a
    buffer twice as long for 1 dim (as a sliced one). The one definition both the arguments'
    and a grad_output's non-contiguous default checks use."""
    if t.numel() < 2:
        return t
    if t.dim() >= 2:
        dims = list(reversed(range(t.dim())))
        return t.permute(dims).contiguous().permute(dims)
    return torch.stack([t, torch.zeros_like(t)], dim=-1)[..., 0]


def _incoming(grad: Any, layout: Any) -> Any:
    """A grad_output as a larger graph hands it on (a default check): "strided", the same
    values in a non-contiguous layout (as after a transpose or a slice downstream);
    "expanded", a constant gradient as one broadcast element (as from `out.sum()`). A backward
    that calls .view() on it, or writes into it, fails as it would in a real model."""
    if not isinstance(grad, torch.Tensor) or grad.numel() < 2:
        return grad
    if layout == "strided":
        return _non_contiguous(grad)
    if layout == "expanded":
        return grad.reshape(-1)[:1].reshape([1] * grad.dim()).expand(grad.shape)
    return grad


def _state_of(obj: Any) -> list[tuple[str, torch.Tensor]]:
    """The tensors an object keeps between calls: a module's buffers, or the tensor
    attributes of a plain object (a hand-written layer's running statistics or cache)."""
    if isinstance(obj, torch.nn.Module):
        return list(obj.named_buffers())
    if isinstance(obj, torch.Tensor) or not hasattr(obj, "__dict__"):
        return []
    return [(k, v) for k, v in vars(obj).items() if isinstance(v, torch.Tensor)]


def _containers(payload: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    """Each list or dict argument that arrived by value, with its shape now: a caller's
    state dict or list must come out of the call as it went in."""
    args, kwargs = payload.get("args") or (), payload.get("kwargs") or {}
    named = [(f"args[{i}]", a) for i, a in enumerate(args)]
    named += [(f"kwargs.{k}", v) for k, v in kwargs.items()]
    return {where: (v, _shape_of(v)) for where, v in named if isinstance(v, (list, dict))}


def _shape_of(value: Any) -> Any:
    """A container's structure and plain values; a tensor or a kept object by identity (a
    tensor's values are audited on their own)."""
    if isinstance(value, dict):
        return ("dict", tuple((k, _shape_of(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(_shape_of(v) for v in value))
    if isinstance(value, (bool, int, float, str, type(None))):
        return repr(value)
    return ("object", id(value))


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Equal shape, dtype and values, NaN where NaN was."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.is_floating_point() or a.is_complex():
        return bool(((a == b) | (a.isnan() & b.isnan())).all())
    return bool((a == b).all())

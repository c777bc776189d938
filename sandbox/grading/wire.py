"""The wire between the grader and the learner's process: tensors and plain values, never
pickle.

A frame is a 4-byte header length H and an 8-byte body length B (big-endian), then H bytes of
JSON header and B bytes of body. The header's "value" is the message's payload, encoded as:

    null, true/false, an integer, a finite float, a string    themselves
    {"float": "nan" | "inf" | "-inf"}                           a float that JSON cannot hold
    {"list": [...]}, {"tuple": [...]}                           sequences
    {"dict": [[key, value], ...]}                               keys: strings or integers
    {"tensor": i}                                               header["tensors"][i]
    {"ref": n}                                                  an object kept in the learner

and each entry of header["tensors"] is {"dtype", "shape", "offset", "nbytes", "device",
"requires_grad"}, its bytes at body[offset:offset+nbytes], C-contiguous, little-endian, each
tensor's right after the one before (no two share bytes).

Whatever arrives is checked before it is used: sizes capped, dtype from a closed set, shape
and byte count consistent, nesting bounded. A frame that breaks a rule raises WireError."""

from __future__ import annotations

import json
import math
import socket
import struct
from dataclasses import dataclass, field
from typing import Any

import torch

MAX_HEADER_BYTES = 1 << 20
MAX_BODY_BYTES = 64 << 20
MAX_DEPTH = 16
MAX_NODES = 100_000
MAX_DIMS = 8
PREFIX = struct.Struct(">IQ")
WIRE_DTYPES = {
    name: getattr(torch, name)
    for name in (
        "float16",
        "bfloat16",
        "float32",
        "float64",
        "complex64",
        "complex128",
        "uint8",
        "int8",
        "int16",
        "int32",
        "int64",
        "bool",
    )
}


class WireError(Exception):
    """A frame that breaks the wire's rules (from a confused or hostile peer)."""


@dataclass(frozen=True)
class Ref:
    """An object that lives in the learner's process (a module, an optimiser, a list of
    parameters), named by its number there."""

    id: int


@dataclass
class Frame:
    header: dict[str, Any]
    tensors: list[torch.Tensor] = field(default_factory=list)
    devices: list[str] = field(default_factory=list)  # where each tensor lived when sent


def encode(header: dict[str, Any], value: Any) -> tuple[bytes, bytes]:
    """The header (with `value` encoded into it) and the body, ready for `send`."""
    blobs: list[bytes] = []
    specs: list[dict[str, Any]] = []
    offset = 0

    def walk(v: Any, depth: int) -> Any:
        nonlocal offset
        if depth > MAX_DEPTH:
            raise WireError("value nests too deeply")
        if v is None or isinstance(v, (bool, str)):
            return v
        if isinstance(v, int):
            return v
        if isinstance(v, float):
            return v if math.isfinite(v) else {"float": repr(v)}
        if isinstance(v, torch.Tensor):
            data = v.detach().to("cpu").contiguous()
            flat = data.reshape(-1)
            if flat.numel() and flat.stride(-1) != 1:
                # A tensor whose only elements sit along dims of size 1 counts as contiguous
                # whatever its strides (zeros_like of a 1x1 matrix's diagonal has stride 2),
                # and a byte view needs stride 1: a fresh copy has it.
                flat = flat.clone(memory_format=torch.contiguous_format)
            raw = flat.view(torch.uint8).numpy().tobytes() if flat.numel() else b""
            specs.append(
                {
                    "dtype": str(data.dtype).removeprefix("torch."),
                    "shape": list(data.shape),
                    "offset": offset,
                    "nbytes": len(raw),
                    "device": v.device.type,
                    "requires_grad": bool(v.requires_grad),
                }
            )
            blobs.append(raw)
            offset += len(raw)
            return {"tensor": len(specs) - 1}
        if isinstance(v, Ref):
            return {"ref": v.id}
        if isinstance(v, tuple):
            return {"tuple": [walk(x, depth + 1) for x in v]}
        if isinstance(v, list):
            return {"list": [walk(x, depth + 1) for x in v]}
        if isinstance(v, dict):
            return {"dict": [[_key(k), walk(x, depth + 1)] for k, x in v.items()]}
        raise WireError(f"a {type(v).__name__} cannot cross the wire (tensors and plain values)")

    encoded = {**header, "value": walk(value, 0), "tensors": specs}
    text = json.dumps(encoded, separators=(",", ":")).encode()
    if len(text) > MAX_HEADER_BYTES:
        raise WireError("header too large")
    return text, b"".join(blobs)


def _key(key: Any) -> Any:
    if isinstance(key, bool) or not isinstance(key, (str, int)):
        raise WireError("dict keys must be strings or integers")
    return key


def decode(head: bytes, body: bytes, keep_grad: bool = True) -> tuple[Frame, Any]:
    """The frame and its value; WireError for anything malformed. `keep_grad`: tensors sent
    as requiring grad require it here too (a request's parameters); answers drop it."""
    try:
        header = json.loads(head)
    except (ValueError, RecursionError):
        raise WireError("header is not JSON") from None
    if not isinstance(header, dict):
        raise WireError("header is not an object")
    specs = header.get("tensors", [])
    if not isinstance(specs, list) or len(specs) > MAX_NODES:
        raise WireError("bad tensor list")
    frame = Frame(header)
    offset = 0
    for spec in specs:
        # Each tensor's bytes follow the last one's, as `encode` lays them out: tensors that
        # shared their bytes would let a small frame decode into many copies of its body.
        if not isinstance(spec, dict) or spec.get("offset") != offset:
            raise WireError("tensor bytes out of order or shared")
        tensor, device = _tensor(spec, body, keep_grad)
        offset += spec["nbytes"]
        frame.tensors.append(tensor)
        frame.devices.append(device)
    nodes = [0]
    value = _value(header.get("value"), frame.tensors, 0, nodes)
    return frame, value


def _tensor(spec: Any, body: bytes, keep_grad: bool) -> tuple[torch.Tensor, str]:
    if not isinstance(spec, dict):
        raise WireError("bad tensor entry")
    dtype = WIRE_DTYPES.get(spec.get("dtype"))  # type: ignore[arg-type]
    shape, offset, nbytes = spec.get("shape"), spec.get("offset"), spec.get("nbytes")
    device = spec.get("device", "cpu")
    if dtype is None:
        raise WireError(f"dtype not allowed: {str(spec.get('dtype'))[:20]!r}")
    if not isinstance(shape, list) or len(shape) > MAX_DIMS:
        raise WireError("bad shape")
    if not all(type(s) is int and 0 <= s <= MAX_BODY_BYTES for s in shape):
        raise WireError("bad shape")
    if not all(type(x) is int and x >= 0 for x in (offset, nbytes)):
        raise WireError("bad offset or size")
    if device not in ("cpu", "cuda", "meta", "mps"):
        raise WireError("bad device")
    numel = math.prod(shape)
    itemsize = torch.empty((), dtype=dtype).element_size()
    if numel * itemsize != nbytes or offset + nbytes > len(body):
        raise WireError("tensor size does not match its bytes")
    if numel == 0:
        tensor = torch.empty(shape, dtype=dtype)
    else:
        raw = torch.frombuffer(bytearray(body[offset : offset + nbytes]), dtype=torch.uint8)
        if dtype is torch.bool:
            tensor = (raw != 0).reshape(shape)  # any byte but 0 or 1 would be an invalid bool
        else:
            tensor = raw.view(dtype).reshape(shape)
    if keep_grad and spec.get("requires_grad") is True and tensor.is_floating_point():
        tensor.requires_grad_(True)
    return tensor, str(device)


def _value(v: Any, tensors: list[torch.Tensor], depth: int, nodes: list[int]) -> Any:
    nodes[0] += 1
    if depth > MAX_DEPTH or nodes[0] > MAX_NODES:
        raise WireError("value too deep or too large")
    if v is None or isinstance(v, (bool, str, int)):
        return v
    if isinstance(v, float):
        return v
    if not isinstance(v, dict) or len(v) != 1:
        raise WireError("bad value")
    ((kind, inner),) = v.items()
    if kind == "tensor":
        if type(inner) is not int or not 0 <= inner < len(tensors):
            raise WireError("bad tensor index")
        return tensors[inner]
    if kind == "float":
        if inner not in ("nan", "inf", "-inf"):
            raise WireError("bad float")
        return float(inner)
    if kind == "ref":
        if type(inner) is not int:
            raise WireError("bad ref")
        return Ref(inner)
    if kind in ("list", "tuple"):
        if not isinstance(inner, list):
            raise WireError("bad sequence")
        items = [_value(x, tensors, depth + 1, nodes) for x in inner]
        return items if kind == "list" else tuple(items)
    if kind == "dict":
        if not isinstance(inner, list):
            raise WireError("bad dict")
        out: dict[Any, Any] = {}
        for pair in inner:
            if not isinstance(pair, list) or len(pair) != 2:
                raise WireError("bad dict entry")
            key = pair[0]
            if isinstance(key, bool) or not isinstance(key, (str, int)):
                raise WireError("bad dict key")
            out[key] = _value(pair[1], tensors, depth + 1, nodes)
        return out
    raise WireError("unknown value kind")


def send(sock: socket.socket, head: bytes, body: bytes) -> None:
    sock.sendall(PREFIX.pack(len(head), len(body)) + head)
    if body:
        sock.sendall(body)


def send_value(sock: socket.socket, header: dict[str, Any], value: Any = None) -> None:
    send(sock, *encode(header, value))


def receive(sock: socket.socket) -> tuple[bytes, bytes]:
    """One frame's header and body bytes; EOFError when the peer has gone, WireError when
    what it sent breaks the limits. The socket's own timeout applies to each read."""
    head_len, body_len = PREFIX.unpack(_exactly(sock, PREFIX.size))
    if head_len > MAX_HEADER_BYTES or body_len > MAX_BODY_BYTES:
        raise WireError("frame too large")
    return _exactly(sock, head_len), _exactly(sock, body_len)


def _exactly(sock: socket.socket, n: int) -> bytes:
    chunks = bytearray()
    while len(chunks) < n:
        chunk = sock.recv(min(n - len(chunks), 1 << 20))
        if not chunk:
            raise EOFError("the other side closed the connection")
        chunks += chunk
    return bytes(chunks)


def tensors_in(value: Any) -> list[torch.Tensor]:
    """Every tensor in `value` (nested lists, tuples and dicts), depth first: the order in
    which gradient checks pair outputs with their grad_outputs on both sides."""
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in tensors_in(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in tensors_in(v)]
    return []

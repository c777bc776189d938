"""A tiny assembler for classic BPF seccomp programs: instructions with named jump targets,
resolved to the kernel's relative offsets (forward only, at most 255 instructions away),
so that no offset in the filter is counted by hand."""

from __future__ import annotations

import struct
from dataclasses import dataclass

# struct seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6]
NR, ARCH = 0, 4


def arg_low(index: int) -> int:
    """Offset of the low 32 bits of argument `index` (x86-64 is little-endian). The calls
    checked here take int flags and families, of which the kernel reads only these bits."""
    return 16 + 8 * index


LD_W_ABS = 0x20
ALU_AND_K = 0x54
JEQ_K = 0x15
JGE_K = 0x35
JSET_K = 0x45
RET_K = 0x06

RET_KILL_PROCESS = 0x80000000
RET_ERRNO = 0x00050000
RET_ALLOW = 0x7FFF0000


def errno(number: int) -> int:
    """Fail the call with `number` without running it (0: report success, doing nothing)."""
    return RET_ERRNO | number


@dataclass
class _Insn:
    code: int
    k: int
    true: str | None = None  # label to jump to when the test holds (None: next insn)
    false: str | None = None


class Program:
    """Instructions appended in order; `label` names the position of the next one."""

    def __init__(self) -> None:
        self.insns: list[_Insn] = []
        self.labels: dict[str, int] = {}

    def label(self, name: str) -> None:
        assert name not in self.labels, f"label {name} defined twice"
        self.labels[name] = len(self.insns)

    def load(self, offset: int) -> None:
        self.insns.append(_Insn(LD_W_ABS, offset))

    def and_(self, mask: int) -> None:
        self.insns.append(_Insn(ALU_AND_K, mask))

    def jump(self, test: int, k: int, true: str | None = None, false: str | None = None) -> None:
        """Jump to `true` if the test holds, else to `false` (None: the next instruction)."""
        self.insns.append(_Insn(test, k, true, false))

    def ret(self, action: int) -> None:
        self.insns.append(_Insn(RET_K, action))

    def ret_if(self, k: int, action: int, test: int = JEQ_K) -> None:
        """Return `action` if the loaded value passes `test` against `k`; else go on."""
        after = f"_{len(self.insns)}"
        self.jump(test, k, false=after)
        self.ret(action)
        self.label(after)

    def _offset(self, index: int, target: str | None) -> int:
        if target is None:
            return 0
        offset = self.labels[target] - index - 1
        if not 0 <= offset <= 255:
            raise ValueError(f"jump to {target} is out of range ({offset})")
        return offset

    def assemble(self) -> bytes:
        """The kernel's array of struct sock_filter."""
        out = []
        for index, insn in enumerate(self.insns):
            jt = self._offset(index, insn.true)
            jf = self._offset(index, insn.false)
            out.append(struct.pack("HBBI", insn.code, jt, jf, insn.k))
        return b"".join(out)

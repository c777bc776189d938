"""The content writes its formulas in plain Unicode, as the source texts do ("μ_B",
"√(σ²_B + ε)", "∂L/∂W", "QKᵀ", "hₙ₋₁"). At import, the prose's formula pieces become MathML:
real subscripts, superscripts, roots and fractions, drawn by the browser without scripts and
read as mathematics by screen readers. The words around them, and the plain text that search
and the fidelity tests read, are left as they are.

Only unambiguous pieces are typeset: a root with its argument, a partial derivative, and a
one-letter symbol (Latin or Greek, hatted or not: "v̂") carrying a Unicode super- or subscript
or an `_` subscript of at most three characters. Anything else stays text: a wrong guess
would be worse."""

from __future__ import annotations

import re
from html import escape

from markdown_it.common.utils import escapeHtml

SUPERSCRIPTS = dict(zip("⁰¹²³⁴⁵⁶⁷⁸⁹ᵀⁿⁱʲᵏᵗˣʸ⁺⁻⁽⁾", "0123456789Tnijktxy+−()", strict=True))
SUBSCRIPTS = dict(zip("₀₁₂₃₄₅₆₇₈₉ₐₑₒₓₕₖₗₘₙₚₛₜᵢⱼ₊₋", "0123456789aeoxhklmnpstij+−", strict=True))
_SUP = "".join(SUPERSCRIPTS)
_SUB = "".join(SUBSCRIPTS)
_LETTER = r"[A-Za-zα-ωΑ-Ω]"
# A combining circumflex over the letter before it (Adam's m̂ and v̂): one symbol, not a
# letter followed by a stray accent.
HAT = "\u0302"
# A symbol: one letter (not inside a word), then scripts; at least one script is required
# by _scripted (a bare letter stays text).
_SYMBOL = (
    rf"(?<![\w.]){_LETTER}{HAT}?(?:[{_SUP}]+)?(?:_(?:\{{[^{{}}\s]{{1,8}}\}}|[A-Za-z0-9α-ω]{{1,3}})(?!\w))?"
    rf"(?:[{_SUB}]+)?(?:[{_SUP}]+)?"
)
_ROOT = rf"√(?:\((?:[^()]|\([^()]*\))+\)|[\w.{HAT}]+)"
_DERIVATIVE = rf"∂{_LETTER}[\w{_SUB}]*/∂(?:\((?:[^()]|\([^()]*\))+\)|{_LETTER}[\w{_SUB}]*)"
_PIECE = re.compile(rf"{_DERIVATIVE}|{_ROOT}|{_SYMBOL}")


def typeset(text: str) -> str:
    """`text` as HTML: escaped, with its formula pieces as inline MathML."""
    out: list[str] = []
    last = 0
    for match in _PIECE.finditer(text):
        piece = match.group(0)
        mathml = _piece(piece)
        if mathml is None:
            continue
        out.append(escapeHtml(text[last : match.start()]))
        out.append(f'<math display="inline"><mrow>{mathml}</mrow></math>')
        last = match.end()
    out.append(escapeHtml(text[last:]))
    return "".join(out)


def _piece(piece: str) -> str | None:
    if piece.startswith("∂"):
        top, bottom = piece.split("/", 1)
        return f"<mfrac>{_row(top)}{_row(bottom)}</mfrac>"
    if piece.startswith("√"):
        inner = piece[1:]
        if inner.startswith("(") and inner.endswith(")"):
            inner = inner[1:-1]
        return f"<msqrt>{_row(inner)}</msqrt>"
    return _scripted(piece)


def _scripted(piece: str) -> str | None:
    """A letter with scripts, or None for a letter without any (left as text)."""
    found = re.fullmatch(
        rf"({_LETTER}{HAT}?)([{_SUP}]*)(?:_\{{?([^}}]*?)\}}?)?([{_SUB}]*)([{_SUP}]*)", piece
    )
    if found is None:
        return None
    base, sup_before, under, sub, sup_after = found.groups()
    sup = "".join(SUPERSCRIPTS[c] for c in sup_before + sup_after)
    below = (under or "") + "".join(SUBSCRIPTS[c] for c in sub)
    if not sup and not below:
        return None
    base_ml = _token(base)
    if sup and below:
        return f"<msubsup>{base_ml}{_row(below)}{_row(sup)}</msubsup>"
    if sup:
        return f"<msup>{base_ml}{_row(sup)}</msup>"
    return f"<msub>{base_ml}{_row(below)}</msub>"


_TOKENS = re.compile(
    rf"[0-9]+(?:\.[0-9]+)?|[A-Za-z]{{2,}}\w*"
    rf"|{_LETTER}{HAT}?[{_SUP}{_SUB}]*(?:_[A-Za-z0-9α-ω]{{1,3}})?|\S"
)


def _row(text: str) -> str:
    """A run of math: numbers, symbols (with their scripts), operators and brackets."""
    parts = []
    for token in _TOKENS.findall(text):
        word = len(token) > 1 and token[:2].isalpha() and token.isascii()
        scripted = (
            _scripted(token) if len(token) > 1 and not token[0].isdigit() and not word else None
        )
        parts.append(scripted or _token(token))
    return f"<mrow>{''.join(parts)}</mrow>"


def _token(token: str) -> str:
    if len(token) == 2 and token[1] == HAT:
        return f'<mover accent="true">{_token(token[0])}<mo>^</mo></mover>'
    if token[0].isdigit():
        return f"<mn>{escape(token)}</mn>"
    if re.fullmatch(_LETTER, token):
        return f"<mi>{escape(token)}</mi>"
    if re.fullmatch(r"[A-Za-z]\w+", token):  # a name such as fan_in or softmax, upright
        return f'<mi mathvariant="normal">{escape(token)}</mi>'
    if token.isalpha():
        return f"<mi>{escape(token)}</mi>"
    return f"<mo>{escape(token.replace('-', '−'))}</mo>"

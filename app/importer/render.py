"""Markdown → HTML, once per import. Code is highlighted with Pygments into token classes
that static/css/app.css colours for both themes; raw HTML in content is shown as text."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer, TextLexer, get_lexer_by_name
from pygments.util import ClassNotFound

from app.importer.maths import typeset
from app.importer.parse import make_markdown, parse_fence_info

REQUIREMENT_LABELS = {
    "cuda": "needs a CUDA GPU",
    "torchvision": "uses torchvision",
    "network": "downloads data",
    "long": "runs for minutes",
    "incomplete": "a fragment",
    "broken": "raises as printed",
}

_FORMATTER = HtmlFormatter(nowrap=True)
# Part of every content file's hash: bump it when the HTML this module produces changes, so
# the next import renders every item again instead of skipping unchanged files.
RENDER_VERSION = "6"  # 6: indented code blocks scroll like fenced ones; 5: hatted symbols


@dataclass(frozen=True)
class Rendered:
    html: str
    text: str  # the prose only, as plain text, for search and snippets


def highlight_code(code: str, language: str = "python") -> str:
    """Pygments HTML spans for `code` (no wrapper element)."""
    try:
        lexer = PythonLexer() if language == "python" else get_lexer_by_name(language)
    except ClassNotFound:
        lexer = TextLexer()
    return highlight(code, lexer, _FORMATTER)


def _slugify(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "section"


class _Renderer(RendererHTML):
    """Adds sample figures, scrollable tables and heading anchors to the default renderer."""

    def code_block(
        self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
    ) -> str:
        """An indented block (a formula set apart, say) is shown as a fenced block without a
        language is: its own scrolling box, never a page wider than a phone."""
        code = escape(tokens[idx].content.rstrip("\n"))
        return f'<pre class="hl code-block" data-lang="text"><code>{code}</code></pre>\n'

    def fence(self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
        token = tokens[idx]
        language, attrs = parse_fence_info(token.info)
        code = token.content.rstrip("\n")
        if language != "python":
            lang = escape(language or "text")
            return (
                f'<pre class="hl code-block" data-lang="{lang}"><code>'
                f"{highlight_code(code, language or 'text')}</code></pre>\n"
            )
        env["sample_count"] = env.get("sample_count", 0) + 1
        n = env["sample_count"]
        badges = "".join(
            f'<span class="badge badge-req" data-requires="{escape(r)}">'
            f"{escape(REQUIREMENT_LABELS.get(r, r))}</span>"
            for r in attrs.get("requires", "").split(",")
            if r
        )
        label = f"Sample {n}"
        data = f'data-sample="{n}" data-requires="{escape(attrs.get("requires", ""))}"'
        if "variant-of" in attrs:
            label = f"Sample {n} · runnable variant of sample {escape(attrs['variant-of'])}"
            data += f' data-variant-of="{escape(attrs["variant-of"])}"'
        return (
            f'<figure class="sample" id="sample-{n}" {data}>'
            f'<figcaption class="sample-head"><span class="sample-label">{label}</span>'
            f'{badges}<button type="button" class="copy-btn" data-copy="sample-{n}">'
            f'<span class="copy-label">Copy</span>'
            f'<span class="visually-hidden"> sample {n}</span></button></figcaption>'
            f'<pre class="hl"><code class="language-python">{highlight_code(code)}</code></pre>'
            f"</figure>\n"
        )

    def text(self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
        """Prose, with its formula pieces typeset as MathML (maths.py)."""
        return typeset(tokens[idx].content)

    def table_open(
        self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
    ) -> str:
        return '<div class="table-wrap" tabindex="0">' + self.renderToken(tokens, idx, options, env)

    def table_close(
        self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
    ) -> str:
        return self.renderToken(tokens, idx, options, env) + "</div>"

    def blockquote_open(
        self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
    ) -> str:
        """A blockquote that starts with **Correction:** is a correction of the source text
        above it (content/README.md): marked as one, for readers and screen readers."""
        if _is_correction(tokens, idx):
            tokens[idx].attrSet("class", "correction")
            tokens[idx].attrSet("role", "note")
            tokens[idx].attrSet("aria-label", "Correction")
        return self.renderToken(tokens, idx, options, env)

    def heading_open(
        self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
    ) -> str:
        inline = tokens[idx + 1]
        anchor = "h-" + _slugify(inline.content)
        seen: dict[str, int] = env.setdefault("anchors", {})
        seen[anchor] = seen.get(anchor, 0) + 1
        if seen[anchor] > 1:
            anchor = f"{anchor}-{seen[anchor]}"
        tokens[idx].attrSet("id", anchor)
        # Content headings start at ###; the page's h1 is the question, so they render one
        # level up and the outline has no gaps. Text shown inside a section of its own (an
        # exercise's editorial, under its page's h2) keeps them where they are.
        level = int(tokens[idx].tag[1])
        shift = env.get("heading_shift", 1)
        tokens[idx].tag = tokens[idx + 2].tag = f"h{max(level - shift, 2)}"
        return self.renderToken(tokens, idx, options, env)


def _is_correction(tokens: Sequence[Token], idx: int) -> bool:
    following = tokens[idx + 2] if idx + 2 < len(tokens) else None
    return bool(
        following is not None
        and following.type == "inline"
        and following.content.startswith("**Correction:**")
    )


_MD = make_markdown(_Renderer)


def render_markdown(body: str, *, heading_shift: int = 1) -> Rendered:
    """Render an item body; return its HTML and its prose as plain text. Headings render
    `heading_shift` levels up (### is an h2 by default), never above h2."""
    env: dict[str, Any] = {"heading_shift": heading_shift}
    tokens = _MD.parse(body, env)
    html = _MD.renderer.render(tokens, _MD.options, env)
    return Rendered(html=html, text=_plain_text(tokens))


def _plain_text(tokens: Sequence[Token]) -> str:
    parts: list[str] = []
    for token in tokens:
        if token.type == "inline" and token.children:
            parts.append(
                "".join(
                    c.content if c.type in ("text", "code_inline") else " "
                    for c in token.children
                    if c.type in ("text", "code_inline", "softbreak", "hardbreak")
                )
            )
    return re.sub(r"\s+", " ", " ".join(parts)).strip()

"""Learners' notes: Markdown rendered so that nothing in it can become markup of ours."""

from __future__ import annotations

from markdown_it import MarkdownIt
from markupsafe import Markup

# html=False: raw HTML in a note is shown as text. markdown-it also refuses javascript:,
# vbscript: and data: links (other than images), so a note cannot run script.
_md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
_md.disable("image")  # a note has no business loading pictures from elsewhere


def render_note(markdown: str) -> Markup:
    """The note as safe HTML."""
    return Markup(_md.render(markdown))

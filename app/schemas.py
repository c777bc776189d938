"""Shapes of the JSON API, one family per entity, named by role."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from app.models import CodeSample, Item
from app.services.items import ItemPage


class ItemSummaryPublic(BaseModel):
    """An item as listed: enough to show and link it."""

    deck: str
    number: int
    slug: str
    title: str
    topic: str
    difficulty: str

    @classmethod
    def of(cls, item: Item) -> ItemSummaryPublic:
        return cls(
            deck=item.deck_slug,
            number=item.number,
            slug=item.slug,
            title=item.title,
            topic=item.topic_slug,
            difficulty=item.difficulty,
        )


class CodeSamplePublic(BaseModel):
    """A code sample; `requires` lists what it needs beyond a CPU and torch."""

    index: int
    code: str
    requires: list[str]
    variant_of: int | None = Field(None, description="Index of the sample this one stands in for.")

    @classmethod
    def of(cls, sample: CodeSample) -> CodeSamplePublic:
        return cls(
            index=sample.index,
            code=sample.code,
            requires=sample.requires_list,
            variant_of=sample.variant_of,
        )


class ItemPublic(ItemSummaryPublic):
    """An item in full. Quiz prompts are the questions only, never answer keys."""

    tags: list[str]
    section: str | None
    body_markdown: str
    code_samples: list[CodeSamplePublic]
    quiz_prompts: list[str]

    @classmethod
    def of_page(cls, page: ItemPage) -> ItemPublic:
        return cls(
            **ItemSummaryPublic.of(page.item).model_dump(),
            tags=page.item.tag_list,
            section=page.item.section,
            body_markdown=page.item.body_markdown,
            code_samples=[CodeSamplePublic.of(s) for s in page.samples],
            quiz_prompts=[p.text for p in page.prompts],
        )


class SandboxHealth(BaseModel):
    available: bool
    backends: list[str]
    device: str | None
    devices: dict[str, str] = {}
    detail: str


class Health(BaseModel):
    status: str
    database: str
    sandbox: SandboxHealth


class ErrorBody(BaseModel):
    """An error: a sentence, or (for invalid parameters) the list of what was wrong."""

    detail: str | list[dict[str, Any]]

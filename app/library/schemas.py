"""The library as the API shows it: items listed, and one item in full."""

from __future__ import annotations

from pydantic import BaseModel, Field

from app.library.items import ItemDetail, ItemRow


class ItemSummaryPublic(BaseModel):
    """An item as listed: enough to show and link it."""

    deck: str
    number: int
    slug: str
    title: str
    topic: str
    difficulty: str

    @classmethod
    def of(cls, item: ItemRow) -> ItemSummaryPublic:
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


class ItemPublic(ItemSummaryPublic):
    """An item in full. Quiz prompts are the questions only, never answer keys."""

    tags: list[str]
    section: str | None
    body_markdown: str
    code_samples: list[CodeSamplePublic]
    quiz_prompts: list[str]

    @classmethod
    def of_detail(cls, page: ItemDetail) -> ItemPublic:
        return cls(
            **ItemSummaryPublic.of(page.item).model_dump(),
            tags=page.item.tag_list,
            section=page.item.section,
            body_markdown=page.body_markdown,
            code_samples=[
                CodeSamplePublic(
                    index=s.index, code=s.code, requires=s.requires_list, variant_of=s.variant_of
                )
                for s in page.samples
            ],
            quiz_prompts=[p.text for p in page.prompts],
        )

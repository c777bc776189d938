"""Content tables: decks, topics, items with their samples, prompts and questions.
Written only by the importer; pages only read them."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Column, Text, UniqueConstraint
from sqlmodel import Field, SQLModel

from app.models.base import utcnow


class Deck(SQLModel, table=True):
    """A named collection of items, e.g. the 38 deep-learning questions."""

    slug: str = Field(primary_key=True, max_length=64)
    title: str = Field(max_length=200)
    description: str = Field(sa_column=Column(Text, nullable=False))
    position: int


class Topic(SQLModel, table=True):
    """A subject that cuts across decks, used to filter and (later) to measure mastery."""

    slug: str = Field(primary_key=True, max_length=64)
    title: str = Field(max_length=200)
    position: int


class Item(SQLModel, table=True):
    """One question with its explanation, as imported from one content file."""

    __table_args__ = (UniqueConstraint("deck_slug", "number", name="uq_item_deck_number"),)

    id: int | None = Field(default=None, primary_key=True)
    deck_slug: str = Field(foreign_key="deck.slug", index=True, max_length=64)
    number: int
    slug: str = Field(unique=True, max_length=120)
    title: str = Field(sa_column=Column(Text, nullable=False))
    topic_slug: str = Field(foreign_key="topic.slug", index=True, max_length=64)
    difficulty: str = Field(max_length=16)
    tags: str = Field(default="", max_length=500)  # comma-separated, for display and filtering
    section: str | None = Field(default=None, max_length=100)
    source: str | None = Field(default=None, max_length=200)
    body_markdown: str = Field(sa_column=Column(Text, nullable=False))
    body_html: str = Field(sa_column=Column(Text, nullable=False))  # rendered once, at import
    body_text: str = Field(sa_column=Column(Text, nullable=False))  # plain prose, for search
    source_path: str = Field(max_length=300)  # relative to the content folder
    content_sha256: str = Field(max_length=64)
    measures: str = Field(default="", max_length=500)  # a lab: slugs of the items it times

    @property
    def tag_list(self) -> list[str]:
        return [t for t in self.tags.split(",") if t]


class CodeSample(SQLModel, table=True):
    """A runnable code block of an item, numbered from 1 in page order."""

    __table_args__ = (UniqueConstraint("item_id", "index", name="uq_sample_item_index"),)

    id: int | None = Field(default=None, primary_key=True)
    item_id: int = Field(foreign_key="item.id", index=True, ondelete="CASCADE")
    index: int
    code: str = Field(sa_column=Column(Text, nullable=False))
    requires: str = Field(default="", max_length=200)  # comma-separated needs: cuda, network, ...
    variant_of: int | None = None  # the index of the sample this one is a runnable variant of

    @property
    def requires_list(self) -> list[str]:
        return [r for r in self.requires.split(",") if r]


class QuizPrompt(SQLModel, table=True):
    """A short self-test question printed at the end of an item."""

    __table_args__ = (UniqueConstraint("item_id", "position", name="uq_prompt_item_position"),)

    id: int | None = Field(default=None, primary_key=True)
    item_id: int = Field(foreign_key="item.id", index=True, ondelete="CASCADE")
    position: int
    text: str = Field(sa_column=Column(Text, nullable=False))


class ContentFile(SQLModel, table=True):
    """The hash of each content file at its last import, so unchanged files are skipped."""

    path: str = Field(primary_key=True, max_length=300)
    sha256: str = Field(max_length=64)
    imported_at: datetime = Field(default_factory=utcnow)


class Question(SQLModel, table=True):
    """A quiz prompt made a real question: a model answer, key points, and choices."""

    __table_args__ = (UniqueConstraint("item_id", "position", name="uq_question_item_position"),)

    id: int | None = Field(default=None, primary_key=True)
    item_id: int = Field(foreign_key="item.id", index=True, ondelete="CASCADE")
    position: int  # the prompt's position in its item, from 1
    prompt: str = Field(sa_column=Column(Text, nullable=False))
    model_answer: str = Field(sa_column=Column(Text, nullable=False))
    key_points: str = Field(sa_column=Column(Text, nullable=False))  # one per line
    check_code: str = Field(default="", sa_column=Column(Text, nullable=False, default=""))
    check_stdout: str = Field(default="", sa_column=Column(Text, nullable=False, default=""))
    # Code shown with the prompt (empty for most), and its highlighted HTML rendered at import.
    code: str = Field(default="", sa_column=Column(Text, nullable=False, default=""))
    code_html: str = Field(default="", sa_column=Column(Text, nullable=False, default=""))

    @property
    def key_point_list(self) -> list[str]:
        return [p for p in self.key_points.split("\n") if p]


class Choice(SQLModel, table=True):
    """One option of a question, with why it is right or wrong."""

    __table_args__ = (UniqueConstraint("question_id", "position", name="uq_choice_position"),)

    id: int | None = Field(default=None, primary_key=True)
    question_id: int = Field(foreign_key="question.id", index=True, ondelete="CASCADE")
    position: int  # as authored, from 1; attempts show them shuffled
    text: str = Field(sa_column=Column(Text, nullable=False))
    correct: bool = False
    why: str = Field(sa_column=Column(Text, nullable=False))

"""Tables. Content tables are written only by the importer; pages only read them."""

from __future__ import annotations

from datetime import UTC, date, datetime

from sqlalchemy import Column, Text, UniqueConstraint
from sqlmodel import Field, SQLModel


def utcnow() -> datetime:
    return datetime.now(UTC)


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


class Run(SQLModel, table=True):
    """One execution of code in the sandbox: what ran where, and how it ended."""

    id: str = Field(primary_key=True, max_length=32)  # random hex; also the URL's id
    visitor: str = Field(index=True, max_length=64)  # a hash of the visitor's cookie or address
    # Whose run it is: the guest's or the user's learner; deleting the account deletes it.
    learner_id: int | None = Field(
        default=None, foreign_key="learner.id", index=True, ondelete="CASCADE"
    )
    # A cookie-less API client owns its run through a capability token; only its digest.
    token_sha256: str | None = Field(default=None, max_length=64)
    # The web process that drives the run ("host:pid:start"), so that one starting up can
    # tell the runs a crashed process left behind from those another process still drives.
    driver: str = Field(default="", max_length=160)
    item_id: int | None = Field(default=None, foreign_key="item.id", ondelete="SET NULL")
    sample_index: int | None = None
    code_sha256: str = Field(max_length=64)
    code_bytes: int
    backend_requested: str = Field(max_length=8)
    backend: str | None = Field(default=None, max_length=8)
    device: str | None = Field(default=None, max_length=200)
    status: str = Field(default="queued", max_length=16)  # queued, running, done
    verdict: str | None = Field(default=None, max_length=16)
    exit_code: int | None = None
    stdout: str = Field(default="", sa_column=Column(Text, nullable=False, default=""))
    stderr: str = Field(default="", sa_column=Column(Text, nullable=False, default=""))
    detail: str = Field(default="", sa_column=Column(Text, nullable=False, default=""))
    truncated: bool = False
    wall_ms: int | None = None
    cpu_ms: int | None = None
    max_memory_mb: int | None = None
    created_at: datetime = Field(default_factory=utcnow, index=True)
    finished_at: datetime | None = None


# Accounts and progress. Every table below holds personal data: read it only through
# app/services/mine.py, which scopes each query to one learner.


class User(SQLModel, table=True):
    """A person with an account."""

    id: int | None = Field(default=None, primary_key=True)
    username: str = Field(unique=True, max_length=40)  # stored lower-case
    password_hash: str = Field(max_length=200)  # argon2id, with its parameters and salt
    created_at: datetime = Field(default_factory=utcnow)
    password_changed_at: datetime = Field(default_factory=utcnow)
    is_admin: bool = False  # sees the authoring pages; granted by `backprop admin grant`


class Learner(SQLModel, table=True):
    """Whose progress it is: a guest's browser (visitor key) or a user, never both."""

    id: int | None = Field(default=None, primary_key=True)
    user_id: int | None = Field(
        default=None, foreign_key="user.id", unique=True, ondelete="CASCADE"
    )
    visitor: str | None = Field(default=None, unique=True, max_length=64)
    created_at: datetime = Field(default_factory=utcnow)


class LoginSession(SQLModel, table=True):
    """A signed-in browser. The cookie holds a random token; only its SHA-256 is kept."""

    token_sha256: str = Field(primary_key=True, max_length=64)
    user_id: int = Field(foreign_key="user.id", index=True, ondelete="CASCADE")
    created_at: datetime = Field(default_factory=utcnow)
    expires_at: datetime


class ApiToken(SQLModel, table=True):
    """A bearer token from POST /api/token; only its SHA-256 is kept."""

    token_sha256: str = Field(primary_key=True, max_length=64)
    user_id: int = Field(foreign_key="user.id", index=True, ondelete="CASCADE")
    created_at: datetime = Field(default_factory=utcnow)
    expires_at: datetime


class ItemProgress(SQLModel, table=True):
    """What one learner did with one item; `status` is derived from the rest."""

    learner_id: int = Field(foreign_key="learner.id", primary_key=True, ondelete="CASCADE")
    item_id: int = Field(foreign_key="item.id", primary_key=True, ondelete="CASCADE")
    status: str = Field(default="new", max_length=16)  # new, seen, practising, mastered
    bookmarked: bool = False
    note: str = Field(default="", sa_column=Column(Text, nullable=False, default=""))
    visits: int = 0
    runs: int = 0
    runs_ok: int = 0
    first_visit_at: datetime | None = None
    last_visit_at: datetime | None = None
    updated_at: datetime = Field(default_factory=utcnow)


class RecallCheck(SQLModel, table=True):
    """A learner's own verdict on one quiz prompt: could they answer it?"""

    id: int | None = Field(default=None, primary_key=True)
    learner_id: int = Field(foreign_key="learner.id", index=True, ondelete="CASCADE")
    item_id: int = Field(foreign_key="item.id", index=True, ondelete="CASCADE")
    prompt: int  # the prompt's position from 1; 0 is the item's own question
    knew: bool
    answered_at: datetime = Field(default_factory=utcnow)


class Activity(SQLModel, table=True):
    """What a learner did on one UTC day, for the calendar and the streak."""

    learner_id: int = Field(foreign_key="learner.id", primary_key=True, ondelete="CASCADE")
    day: date = Field(primary_key=True)
    views: int = 0
    runs: int = 0
    checks: int = 0


# Questions (content, written by the importer) and quiz attempts (personal data).


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


class QuizAttempt(SQLModel, table=True):
    """One sitting of a quiz. The server owns its clock: `deadline` is when answers stop."""

    id: str = Field(primary_key=True, max_length=32)  # random hex; also the URL's id
    learner_id: int = Field(foreign_key="learner.id", index=True, ondelete="CASCADE")
    mode: str = Field(max_length=16)  # timed, practice
    title: str = Field(max_length=200)
    started_at: datetime = Field(default_factory=utcnow)
    deadline: datetime | None = None  # None: untimed
    closed_at: datetime | None = None  # submitted, or closed at its deadline
    score: int | None = None
    total: int


class AttemptQuestion(SQLModel, table=True):
    """A question as one attempt shows it: its place, its shuffled choices, the answer."""

    attempt_id: str = Field(foreign_key="quizattempt.id", primary_key=True, ondelete="CASCADE")
    position: int = Field(primary_key=True)  # from 1
    question_id: int = Field(foreign_key="question.id", index=True, ondelete="CASCADE")
    choice_order: str = Field(max_length=200)  # choice ids as shown, comma-separated
    shown_at: datetime | None = None
    choice_id: int | None = None  # the answer, once locked
    answered_at: datetime | None = None
    correct: bool | None = None


class ReviewEvent(SQLModel, table=True):
    """One recall of one question by one learner, rated as FSRS rates it: the log is the
    source of truth, and a card's schedule can always be computed again from it."""

    id: int | None = Field(default=None, primary_key=True)
    learner_id: int = Field(foreign_key="learner.id", index=True, ondelete="CASCADE")
    question_id: int = Field(foreign_key="question.id", index=True, ondelete="CASCADE")
    rating: int  # 1 Again, 2 Hard, 3 Good, 4 Easy
    source: str = Field(max_length=16)  # quiz, open (key points ticked), review
    reviewed_at: datetime = Field(default_factory=utcnow)


class ReviewCard(SQLModel, table=True):
    """A question's schedule for one learner, derived from its review events."""

    learner_id: int = Field(foreign_key="learner.id", primary_key=True, ondelete="CASCADE")
    question_id: int = Field(foreign_key="question.id", primary_key=True, ondelete="CASCADE")
    due: datetime = Field(index=True)
    card: str = Field(sa_column=Column(Text, nullable=False))  # the scheduler's card, as JSON

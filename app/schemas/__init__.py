"""Shapes of the JSON API, one family per entity, named by role. /docs is generated from
these."""

from app.schemas.common import ERROR_MEANINGS, ErrorBody, Health, errors
from app.schemas.items import CodeSamplePublic, ItemPublic, ItemSummaryPublic
from app.schemas.personal import (
    ActivityDay,
    Export,
    GroupProgress,
    ItemProgressPublic,
    ItemProgressUpdate,
    ItemRef,
    NewUser,
    ProgressPublic,
    RecentRun,
    Token,
    UserCreate,
    UserPublic,
)
from app.schemas.quizzes import (
    AnswerCreate,
    ChoicePublic,
    QuizCreate,
    QuizPublic,
    QuizQuestionPublic,
)
from app.schemas.runs import RunAccepted, RunCreate, RunPublic

__all__ = [
    "ERROR_MEANINGS",
    "ActivityDay",
    "AnswerCreate",
    "ChoicePublic",
    "CodeSamplePublic",
    "ErrorBody",
    "Export",
    "GroupProgress",
    "Health",
    "ItemProgressPublic",
    "ItemProgressUpdate",
    "ItemPublic",
    "ItemRef",
    "ItemSummaryPublic",
    "NewUser",
    "ProgressPublic",
    "QuizCreate",
    "QuizPublic",
    "QuizQuestionPublic",
    "RecentRun",
    "RunAccepted",
    "RunCreate",
    "RunPublic",
    "Token",
    "UserCreate",
    "UserPublic",
    "errors",
]

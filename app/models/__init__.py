"""Tables, by concern. Import from here: `from app.models import Item, Run`."""

from app.models.base import aware, utcnow
from app.models.coding import CodingRound
from app.models.content import (
    Choice,
    CodeSample,
    ContentFile,
    Deck,
    Item,
    Question,
    QuizPrompt,
    Topic,
)
from app.models.exercises import (
    EXERCISE_DIFFICULTIES,
    Exercise,
    ExerciseCard,
    ExerciseDraft,
    ExerciseReviewEvent,
    HintView,
    SolutionReveal,
)
from app.models.limits import LimitHit
from app.models.people import (
    Activity,
    ApiToken,
    Draft,
    ItemProgress,
    Learner,
    LoginSession,
    RecallCheck,
    RecoveryCode,
    User,
)
from app.models.quizzes import AttemptQuestion, QuizAttempt, ReviewCard, ReviewEvent
from app.models.runs import LabMeasurement, Run

__all__ = [
    "EXERCISE_DIFFICULTIES",
    "Activity",
    "ApiToken",
    "AttemptQuestion",
    "Choice",
    "CodeSample",
    "CodingRound",
    "ContentFile",
    "Deck",
    "Draft",
    "Exercise",
    "ExerciseCard",
    "ExerciseDraft",
    "ExerciseReviewEvent",
    "HintView",
    "Item",
    "ItemProgress",
    "LabMeasurement",
    "Learner",
    "LimitHit",
    "LoginSession",
    "Question",
    "QuizAttempt",
    "QuizPrompt",
    "RecallCheck",
    "RecoveryCode",
    "ReviewCard",
    "ReviewEvent",
    "Run",
    "SolutionReveal",
    "Topic",
    "User",
    "aware",
    "utcnow",
]

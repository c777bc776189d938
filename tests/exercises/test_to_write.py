"""An exercise names everything it leaves to the learner, not only its entry point: the
starter's public definitions whose body raises NotImplementedError."""

from __future__ import annotations

from fastapi.testclient import TestClient

from app.models import Exercise

TWO_LEFT = '''
import torch


def _helper(x):
    return x


def softmax(x, dim=-1):
    """..."""
    raise NotImplementedError


class Given:
    def __call__(self, x):
        return x


def log_softmax(x, dim=-1):
    raise NotImplementedError("write me")
'''


def exercise(starter: str, entry_point: str = "softmax") -> Exercise:
    return Exercise(starter_code=starter, entry_point=entry_point)


def test_every_definition_left_to_write_is_named_in_order() -> None:
    assert exercise(TWO_LEFT).to_write == ("softmax", "log_softmax")


def test_a_starter_that_leaves_nothing_names_its_entry_point() -> None:
    given = "def clip_rows(x):\n    return x.clamp(0, 1)\n"
    assert exercise(given, "clip_rows").to_write == ("clip_rows",)
    assert exercise("def broken(:\n", "broken").to_write == ("broken",)


def test_the_exercise_page_names_them(client: TestClient) -> None:
    page = client.get("/exercises/bpe-merges").text
    assert "You write <code>train_bpe</code> and <code>encode</code>." in page
    many = client.get("/exercises/online-softmax").text
    assert (
        "You write <code>online_softmax_update</code>, <code>online_softmax_combine</code>, "
        "<code>online_logsumexp</code> and <code>online_softmax_probs</code>." in many
    )

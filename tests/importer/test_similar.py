"""The near-duplicate check of app/importer/similar.py compares questions across decks and
compares the code they show: on small banks built to need each comparison, and on the two
decks frozen before their cross-deck review (tests/data/), whose reviewer found pairs that
repeat across the decks, several running the same program."""

from __future__ import annotations

import pytest
import yaml

from app.importer.bank import from_records
from app.importer.cues import BankQuestion
from app.importer.similar import (
    CODE_THRESHOLD,
    CROSS_DECK_THRESHOLD,
    THRESHOLD,
    code_pairs,
    near_duplicates,
    similarities,
)
from tests.support.paths import DATA_DIR

BEFORE_DEDUP = DATA_DIR / "bank_before_dedup.yml"

DL = "deep-learning/"
PE = "pytorch-essentials/"
# What the review found: (first, second, how the check must find it).
REVIEWED = [
    (DL + "22-normalization-layers-compared#3", PE + "05-train-vs-eval-mode#3", "code"),
    (DL + "14-dataset-and-dataloader#4", PE + "06-dataset-and-dataloader-roles#3", "code"),
    (DL + "35-exporting-torchscript-onnx#3", PE + "20-low-latency-deployment#3", "words"),
    (DL + "13-transfer-learning-fine-tuning#3", PE + "09-transfer-learning-in-pytorch#4", "words"),
    (DL + "12-loss-functions#3", DL + "38-feedforward-network-from-scratch#4", "words"),
]


@pytest.fixture(scope="module")
def before_dedup() -> list[BankQuestion]:
    return from_records(yaml.safe_load(BEFORE_DEDUP.read_text(encoding="utf-8")))


def question(where: str, deck: str, prompt: str, answer: str, code: str = "") -> BankQuestion:
    return BankQuestion(
        where, deck, "t", prompt, (answer, "other"), 0, code=code, model_answer=answer
    )


ZERO_GRAD = "Why must zero_grad be called before backward?"
ZERO_GRAD_AGAIN = "Why is zero_grad called before each backward pass?"
FILLER = [
    question("a/3#1", "a", "What does a convolution share across positions?", "Its kernels."),
    question("a/4#1", "a", "How does dropout regularise a network?", "Random masks of units."),
]


def test_the_same_question_in_two_decks_is_a_near_duplicate() -> None:
    bank = [
        question("a/1#1", "a", ZERO_GRAD, "Gradients accumulate."),
        question("b/1#1", "b", ZERO_GRAD_AGAIN, "They accumulate."),
        *FILLER,
    ]
    pairs = near_duplicates(bank)
    assert [(p.first, p.second) for p in pairs] == [("a/1#1", "b/1#1")]
    assert pairs[0].similarity >= CROSS_DECK_THRESHOLD


BN_TRAIN_STEP = """import torch
bn = torch.nn.BatchNorm1d(1)
bn.train()
bn(torch.tensor([[1.0], [3.0]]))
print(bn.running_mean.item(), bn.running_var.item())
"""
BN_TRAIN_STEP_AGAIN = """import torch
bn = torch.nn.BatchNorm1d(1, momentum=0.5)
bn.train()
bn(torch.tensor([[2.0], [6.0]]))
print(bn.running_mean.item(), bn.running_var.item())
bn.eval()
"""
CE_LOSS = """import torch
loss = torch.nn.CrossEntropyLoss()
print(loss(torch.zeros(2, 3), torch.tensor([0, 2])).item())
"""


def test_two_questions_showing_the_same_program_are_near_duplicates() -> None:
    bank = [
        question(
            "a/1#1", "a", "What are the running statistics now?", "2.0 and 2.0", BN_TRAIN_STEP
        ),
        question(
            "b/1#1", "b", "Which values does the layer store?", "4.0 and 8.0", BN_TRAIN_STEP_AGAIN
        ),
        question("b/2#1", "b", "What is the loss of uniform logits?", "log 3", CE_LOSS),
        *FILLER,
    ]
    pairs = near_duplicates(bank)
    assert [(p.first, p.second) for p in pairs] == [("a/1#1", "b/1#1")]
    assert pairs[0].similarity < CROSS_DECK_THRESHOLD  # the words alone miss it
    assert pairs[0].code_similarity >= CODE_THRESHOLD


def test_code_is_compared_by_its_calls_not_its_numbers_or_imports() -> None:
    assert code_pairs("import torch\nx = torch.ones(2)  # two\n") == code_pairs(
        "from torch import nn\nx = torch.ones(7)\n"
    )
    assert "lr_scheduler StepLR" in code_pairs("s = torch.optim.lr_scheduler.StepLR(opt)")


@pytest.mark.parametrize(("first", "second", "how"), REVIEWED)
def test_the_check_finds_each_pair_the_review_found(
    before_dedup: list[BankQuestion], first: str, second: str, how: str
) -> None:
    found = {(p.first, p.second): p for p in near_duplicates(before_dedup)}
    assert (first, second) in found
    pair = found[(first, second)]
    if how == "code":
        assert pair.code_similarity >= CODE_THRESHOLD
    else:
        bar = THRESHOLD if first.split("/")[0] == second.split("/")[0] else CROSS_DECK_THRESHOLD
        assert pair.similarity >= bar


def test_the_thresholds_sit_between_the_reviewed_pairs_and_the_rest(
    before_dedup: list[BankQuestion],
) -> None:
    """Documented in the module: the lowest pair the review found within a deck scores just
    over THRESHOLD; different programs on one API score under CODE_THRESHOLD."""
    pairs = {(p.first, p.second): p for p in similarities(before_dedup)}
    within = pairs[(REVIEWED[4][0], REVIEWED[4][1])]
    assert THRESHOLD <= within.similarity < THRESHOLD + 0.02
    lstm_conv = pairs[(DL + "10-rnns-and-lstms#4", DL + "33-choosing-layer-types#3")]
    assert lstm_conv.code_similarity < CODE_THRESHOLD
    cross = [p for p in near_duplicates(before_dedup) if p.first[:3] != p.second[:3]]
    by_code = [p for p in near_duplicates(before_dedup) if p.code_similarity >= CODE_THRESHOLD]
    assert len(cross) >= 15 and len(by_code) == 6

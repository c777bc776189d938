"""The test-wise rules of app/importer/cues.py: each one on small questions whose answer is
known, then all of them on the bank frozen before its rewrite (tests/data/), where an
independent review found a guesser scoring 55%: the rules must find that cue again."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest
import yaml

from app.cli import main as cli
from app.importer import cues
from app.importer.bank import from_records, item_range, report_markdown, subset, with_report
from app.importer.cues import BankQuestion, expected_hit, rule_scores
from app.importer.errors import ContentError
from app.importer.option_tokens import (
    code_option_faults,
    option_tokens,
    token_distance,
    token_similarity,
)
from app.importer.similar import near_duplicates
from tests.support.paths import DATA_DIR

BEFORE = DATA_DIR / "bank_before_rewrite.yml"


def question(
    *options: str, key: int = 0, prompt: str = "Why does it work?", code: str = ""
) -> BankQuestion:
    return BankQuestion(
        where="deck/01-x#1",
        deck="deck",
        topic="t",
        prompt=prompt,
        options=options,
        key=key,
        code=code,
    )


def test_length_rules_pick_by_rank_and_split_ties() -> None:
    q = question("aaaa", "aaa", "aa", "aaa", key=1)
    assert cues.longest(q) == {0}
    assert cues.second_longest(q) == {1, 3}
    assert cues.second_shortest(q) == {1, 3}
    assert cues.shortest(q) == {2}
    assert expected_hit(cues.second_longest, q) == 0.5
    assert expected_hit(cues.longest, q) == 0.0
    spread = question("aaaaa", "aa", "aaaa", "a", key=2)
    assert cues.second_longest(spread) == {2} and cues.second_shortest(spread) == {1}
    assert expected_hit(cues.second_shortest, spread) == 0.0
    two_long = question("aaaa", "aaaa", "aa", "a")
    assert cues.longest(two_long) == cues.second_longest(two_long) == {0, 1}


def test_there_is_a_length_rule_for_every_place_and_together_they_share_one_key() -> None:
    assert list(cues.length_rank_rules(4)) == [
        "longest option",
        "second-longest option",
        "second-shortest option",
        "shortest option",
    ]
    assert list(cues.length_rank_rules(3)) == [
        "longest option",
        "second-longest option",
        "shortest option",
    ]
    assert len(cues.length_rank_rules(5)) == 5 and "third-longest option" in cues.length_rank_rules(
        5
    )
    assert set(cues.length_rank_rules()) <= set(cues.RULES)
    # Whatever place the key takes, the place rules' expected hits add up to one key.
    for key in range(4):
        for q in (
            question("aaaa", "a", "aaa", "aa", key=key),
            question("aa", "a", "aa", "a", key=key),
        ):
            hits = [expected_hit(rule, q) for rule in cues.length_rank_rules(4).values()]
            assert sum(hits) == pytest.approx(1.0)
    middle = question("aaa", "a", "aa", key=2)
    assert cues.second_longest(middle) == cues.second_shortest(middle) == {2}


def test_most_alike_picks_the_key_its_one_part_variants_surround() -> None:
    shapes = (
        "torch.Size([2, 3])",
        "torch.Size([3, 3])",
        "torch.Size([2, 2])",
        "torch.Size([2, 3, 1])",
    )
    q = question(*shapes, key=0, code="print(x.shape)")
    assert cues.most_alike(q) == {0} and expected_hit(cues.most_alike, q) == 1.0
    assert cues.most_alike(question(*shapes, key=0)) is None  # not a code question
    same_spread = question("1 2", "2 1", "3 4", "4 3", code="print(1, 2)")
    assert cues.most_alike(same_spread) is None
    # Distractors that share a misreading with each other draw the guess away from the key.
    apart = question("5 65", "60 60", "60 65", "65 60", key=0, code="print(a, b)")
    assert 0 not in (cues.most_alike(apart) or {0})


def test_code_options_are_read_as_parts() -> None:
    assert option_tokens("torch.Size([2, 3])") == [
        "torch.Size",
        "(",
        "[",
        "2",
        ",",
        "3",
        "]",
        ")",
    ]
    assert option_tokens("tensor([-1.5000, 2e-05]) True") == [
        "tensor",
        "(",
        "[",
        "-1.5000",
        ",",
        "2e-05",
        "]",
        ")",
        "True",
    ]
    assert token_distance("torch.Size([2, 3])", "torch.Size([2, 4])") == 1
    assert token_distance("torch.Size([2, 3])", "torch.Size([3, 2])") == 2
    assert token_distance("0.5 0.1", "0.5 -0.1") == 1  # a sign is part of its number
    assert token_distance("x.to(device)", "x.to(device)") == 0
    assert token_distance("1 2", "1 2 3 4") == 2
    assert token_similarity("a b c", "a b d") == Fraction(2, 3)
    assert token_similarity("a", "b") == 0


def test_a_distractor_that_is_the_key_with_one_part_changed_is_a_fault() -> None:
    assert (
        code_option_faults(("54.0", "18.0", "36.0", "648.0"), 0) == []
    )  # one part: any other value
    one_number = code_option_faults(("(4, 4) 2.5", "(4, 4) 0.0", "(2, 2) 0.0", "(4,) nan"), 0)
    assert len(one_number) == 1 and "option 2" in one_number[0]
    three = code_option_faults(("True False True", "True True True", "False True False"), 0)
    assert len(three) == 1 and three[0].startswith("option 2")
    # One or two parts: any other output differs enough.
    assert code_option_faults(("5 65", "65 65", "60 65", "5 5"), 0) == []
    same = code_option_faults(("1 2 3", "3 2 1", "3  2 1"), 0)
    assert same == ["options 2 and 3 have the same parts"]
    assert code_option_faults(("1 2 3", "3 2 1", "2 1 3", "RuntimeError"), 0) == []


def test_a_rule_that_cannot_single_out_an_option_scores_chance() -> None:
    same = question("abc", "abd", "abe", "abf")
    assert cues.longest(same) is None and cues.second_longest(same) is None
    assert expected_hit(cues.longest, same) == 0.25
    three = question("a; b", "c; d", "e; f")
    assert cues.only_punctuation(three) is None
    assert expected_hit(cues.only_punctuation, three) == pytest.approx(1 / 3)


def test_only_rules_single_out_the_odd_option() -> None:
    assert cues.only_punctuation(question("x", "y: z", "w", "v")) == {1}
    assert cues.only_punctuation(question("x — y", "z", "w", "v")) == {0}
    assert cues.only_punctuation(question("weight-sharing", "z", "w", "v")) is None
    assert cues.only_number(question("x", "y", "size 3", "v")) == {2}
    assert cues.only_code_span(question("x", "y", "w", "call `f()`")) == {3}
    hedged = question("It always does", "It never does", "It usually does", "Only it does")
    assert cues.only_hedged(hedged) == {2}


def test_echo_picks_the_option_sharing_most_prompt_words() -> None:
    q = question(
        "Gradients vanish through saturating sigmoid layers",
        "The learning rate is too small",
        "Weights are too large",
        prompt="Why do saturating sigmoid layers make gradients vanish?",
    )
    assert cues.echoes_prompt(q) == {0}
    silent = question("x", "y", "z", prompt="Why?")
    assert cues.echoes_prompt(silent) is None


def test_the_decision_list_falls_through_to_second_longest() -> None:
    colon = question("short", "with: colon", "longer option", "the longest option", key=1)
    assert cues.decision_list(colon) == {1}
    plain = question("short", "medium one", "longer option", "the longest option", key=2)
    assert cues.decision_list(plain) == {2}
    assert expected_hit(cues.decision_list, plain) == 1.0


def test_a_bank_without_cues_holds_every_rule_near_chance() -> None:
    """Four options of equal form where the key takes every length rank in turn."""
    bank = [
        question("alpha one", "beta two!", "gamma three", "delta four!!", key=k) for k in range(4)
    ]
    assert all(score == pytest.approx(0.25) for score in rule_scores(bank).values())


@pytest.fixture(scope="module")
def before() -> list[BankQuestion]:
    return from_records(yaml.safe_load(BEFORE.read_text(encoding="utf-8")))


def test_the_rules_catch_the_cues_of_the_bank_before_its_rewrite(
    before: list[BankQuestion],
) -> None:
    assert len(before) == 116
    scores = rule_scores(before)
    assert scores["decision list"] > 0.50, scores
    assert scores["second-longest option"] > 0.35, scores
    dl = [q for q in before if q.deck == "deep-learning"]
    only_colon = sum(cues.only_punctuation(q) == {q.key} for q in dl)
    assert only_colon >= 20, f"{only_colon} of {len(dl)}"


def test_the_report_lists_every_topic_and_every_rule(before: list[BankQuestion]) -> None:
    table = report_markdown(before)
    for topic in {q.topic for q in before}:
        assert f"| {topic} |" in table
    for rule in cues.RULES:
        assert f"| {rule} |" in table
    assert "| **all** | | 116 |" in table


def test_the_readme_section_is_replaced_between_its_markers() -> None:
    readme = "intro\n<!-- bank-report:start -->\nold\n<!-- bank-report:end -->\ntail\n"
    assert with_report(readme, "new") == (
        "intro\n<!-- bank-report:start -->\nnew\n<!-- bank-report:end -->\ntail\n"
    )
    with pytest.raises(ContentError, match="bank-report"):
        with_report("no markers here", "new")


def test_bank_report_command_prints_and_rewrites_the_readme_table(
    content_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    readme = content_copy / "README.md"
    readme.write_text(with_report(readme.read_text(encoding="utf-8"), "stale"), encoding="utf-8")
    assert cli(["bank-report", "--content", str(content_copy)]) == 0
    printed = capsys.readouterr().out
    assert "| **all** |" in printed and "stale" in readme.read_text(encoding="utf-8")
    assert cli(["bank-report", "--content", str(content_copy), "--write-readme"]) == 0
    table = printed.split("\n\nNear-duplicates")[0].strip()
    assert table in readme.read_text(encoding="utf-8")
    readme.write_text("no markers\n", encoding="utf-8")
    assert cli(["bank-report", "--content", str(content_copy), "--write-readme"]) == 1
    assert "bank-report:start" in capsys.readouterr().err


KNOWN_PAIRS = {
    ("deep-learning/06-batch-normalization#1", "deep-learning/20-eval-no-grad-inference-mode#2"),
    ("deep-learning/09-convolutional-layers#1", "deep-learning/33-choosing-layer-types#1"),
    (
        "deep-learning/14-dataset-and-dataloader#2",
        "deep-learning/21-gpus-and-device-agnostic-code#1",
    ),
    (
        "deep-learning/02-backpropagation-chain-rule#2",
        "deep-learning/31-production-training-loop#1",
    ),
}


def test_the_near_duplicate_check_still_finds_the_four_known_pairs(
    before: list[BankQuestion],
) -> None:
    found = {tuple(sorted((p.first, p.second))) for p in near_duplicates(before)}
    assert found >= KNOWN_PAIRS


def test_a_reworded_question_is_a_near_duplicate_and_a_different_one_is_not() -> None:
    def q(where: str, prompt: str, key: str) -> BankQuestion:
        return BankQuestion(where, "deck", "t", prompt, (key, "other"), 0, model_answer=key)

    bank = [
        q("d/1#1", "Why must zero_grad be called before backward?", "Gradients accumulate."),
        q("d/2#1", "Why is zero_grad called before each backward pass?", "They accumulate."),
        q("d/3#1", "What does a convolution share across positions?", "Its kernel weights."),
        q("d/4#1", "How does dropout regularise a network?", "Random masks of units."),
    ]
    pairs = near_duplicates(bank)
    assert [(p.first, p.second) for p in pairs] == [("d/1#1", "d/2#1")]


def test_the_report_can_review_one_writers_items(
    before: list[BankQuestion], capsys: pytest.CaptureFixture[str]
) -> None:
    assert item_range("1-19") == (1, 19) and item_range("7") == (7, 7)
    with pytest.raises(ValueError, match="not an item range"):
        item_range("19-1")
    chosen = subset(before, deck="deep-learning", items=(1, 19))
    assert len(chosen) == 38 and {q.deck for q in chosen} == {"deep-learning"}
    assert cli(["bank-report", "--deck", "pytorch-essentials", "--items", "1-10"]) == 0
    assert "| **all** | | " in capsys.readouterr().out
    with pytest.raises(SystemExit):
        cli(["bank-report", "--deck", "deep-learning", "--write-readme"])

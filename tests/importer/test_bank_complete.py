"""What the question bank must be as a whole: keys that no form cue gives away, four
questions per item with code to read, every shown output proven by a check, no two questions
(in a deck or across decks) asking the same thing or showing the same program, and the review
table in content/README.md up to date.

Each test names what is wrong, so a new question that brings a cue back, or a bank edited
without its table, fails here with the reason."""

from __future__ import annotations

import re

import yaml

from app.importer.bank import README_END, README_START, load_bank, report_markdown
from app.importer.cues import MAX_CODE_RULE_SCORE, MAX_RULE_SCORE, BankQuestion, rule_scores
from app.importer.option_tokens import code_option_faults
from app.importer.similar import near_duplicates
from app.settings import PROJECT_ROOT
from tests.support.paths import CONTENT_DIR, DATA_DIR

QA_DECKS = ("deep-learning", "pytorch-essentials")
MIN_PER_ITEM = 4

BANK = load_bank(CONTENT_DIR)


def item_of(question: BankQuestion) -> str:
    return question.where.rsplit("#", 1)[0]


def test_no_test_wise_rule_guesses_more_than_35_percent_of_keys() -> None:
    scores = rule_scores(BANK)
    above = {rule: f"{score:.0%}" for rule, score in scores.items() if score > MAX_RULE_SCORE}
    assert above == {}, f"over {len(BANK)} questions; run `backprop bank-report` for each topic"


def test_no_test_wise_rule_guesses_more_than_40_percent_of_code_questions() -> None:
    code = [q for q in BANK if q.code]
    scores = rule_scores(code)
    above = {rule: f"{score:.0%}" for rule, score in scores.items() if score > MAX_CODE_RULE_SCORE}
    assert above == {}, f"over the {len(code)} questions that show code"


def test_code_distractors_differ_from_the_key_in_more_than_one_part() -> None:
    """app/importer/option_tokens.py defines a part; a distractor that is the key with one
    number or word changed makes the key the option every other one resembles."""
    faults = {q.where: code_option_faults(q.options, q.key) for q in BANK if q.code}
    assert {where: f for where, f in faults.items() if f} == {}


def test_every_item_of_the_qa_decks_has_four_questions_one_with_code() -> None:
    items = sorted(
        f"{deck}/{path.name.removesuffix('.md')}"
        for deck in QA_DECKS
        for path in (CONTENT_DIR / deck).glob("*.md")
    )
    count = {item: 0 for item in items}
    code = dict.fromkeys(items, 0)
    for q in BANK:
        if q.deck in QA_DECKS:
            count[item_of(q)] += 1
            code[item_of(q)] += bool(q.code)
    thin = {item: n for item, n in count.items() if n < MIN_PER_ITEM}
    assert thin == {}, f"items with fewer than {MIN_PER_ITEM} questions"
    assert [item for item, n in code.items() if n == 0] == [], "items with no code question"
    assert len(items) == 58 and sum(count.values()) >= 232


def test_every_code_question_carries_a_check() -> None:
    unchecked = [q.where for q in BANK if q.code and not q.has_check]
    assert unchecked == []


def test_no_two_questions_ask_the_same_thing_or_show_the_same_code() -> None:
    pairs = [f"{p.first} ~ {p.second}: {p.why}" for p in near_duplicates(BANK)]
    assert pairs == [], "see app/importer/similar.py; merge or rewrite one of each pair"


def test_the_readme_review_table_is_current() -> None:
    readme = (CONTENT_DIR / "README.md").read_text(encoding="utf-8")
    shown = readme.split(README_START, 1)[1].split(README_END, 1)[0].strip()
    assert shown == report_markdown(BANK), "run `backprop bank-report --write-readme`"


def test_the_project_readme_counts_are_the_banks() -> None:
    readme = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8")
    said = re.search(r"(\d+)\s+questions in all", readme)
    assert said and int(said.group(1)) == len(BANK), "README.md: questions in all"
    corrections = sum(
        len(re.findall(r"^\s*> \*\*Correction:\*\*", path.read_text(encoding="utf-8"), re.M))
        for path in CONTENT_DIR.glob("*/*.md")
    )
    said = re.search(r"correction beside it \((\d+) of them\)", readme)
    assert said and int(said.group(1)) == corrections, "README.md: corrections"


def test_no_question_is_lost_so_learners_review_logs_stay_attached() -> None:
    """Questions keep their database ids by position: the bank may rewrite a question in
    place and add after it, but every position the bank had before its rewrite is still
    there."""
    before = yaml.safe_load((DATA_DIR / "bank_before_rewrite.yml").read_text(encoding="utf-8"))
    now = {q.where for q in BANK}
    assert [r["where"] for r in before if r["where"] not in now] == []

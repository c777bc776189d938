"""The importer: loads every file, is idempotent, skips unchanged files, and refuses a bad
file with its name, line and reason while writing nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import func, text
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from app.domain import Requirement
from app.importer import ContentError, import_content
from app.importer.parse import parse_catalogue, parse_item
from app.importer.render import REQUIREMENT_LABELS
from app.models import CodeSample, ContentFile, Deck, Item, QuizPrompt
from tests.support.paths import CONTENT_DIR


def counts(engine: Engine) -> dict[str, int]:
    with Session(engine) as s:
        found = {
            "items": s.exec(select(func.count()).select_from(Item)).one(),
            "samples": s.exec(select(func.count()).select_from(CodeSample)).one(),
            "prompts": s.exec(select(func.count()).select_from(QuizPrompt)).one(),
            "files": s.exec(select(func.count()).select_from(ContentFile)).one(),
        }
        # SQLite's FTS5 index must follow the items; PostgreSQL searches the items
        # themselves (app/library/search.py), so there is no index to keep in step.
        indexed = (
            "SELECT count(*) FROM item_search" if has_fts(engine) else "SELECT count(*) FROM item"
        )
        found["search"] = s.execute(text(indexed)).scalar_one()
        return found


def has_fts(engine: Engine) -> bool:
    return engine.dialect.name == "sqlite"


def item_file(content: Path, name: str) -> Path:
    return next(content.glob(f"*/{name}"))


def test_first_import_loads_every_deck(empty_engine: Engine, content_copy: Path) -> None:
    report = import_content(empty_engine, content_copy)
    n_files = len(list(content_copy.glob("*/*.md")))
    assert len(report.added) == n_files
    with Session(empty_engine) as s:
        decks = dict(
            s.exec(select(Item.deck_slug, func.count()).group_by(Item.deck_slug)).all()  # type: ignore[arg-type]
        )
    assert decks["deep-learning"] == 38
    assert decks["pytorch-essentials"] == 20
    assert decks.get("torch-compile", 0) >= 1
    c = counts(empty_engine)
    assert c["items"] == c["search"] == n_files
    assert c["prompts"] >= 76


def test_second_import_changes_nothing(empty_engine: Engine, content_copy: Path) -> None:
    import_content(empty_engine, content_copy)
    before = counts(empty_engine)
    report = import_content(empty_engine, content_copy)
    assert not report.changed
    files = [*content_copy.glob("*/*.md"), *content_copy.glob("*/*.questions.yml")]
    assert report.unchanged == len(files) + 1  # + decks.yml
    assert counts(empty_engine) == before


def test_edit_updates_only_that_item_and_keeps_its_id(
    empty_engine: Engine, content_copy: Path
) -> None:
    import_content(empty_engine, content_copy)
    path = item_file(content_copy, "08-dropout.md")
    with Session(empty_engine) as s:
        old_id = s.exec(select(Item.id).where(Item.slug == "dropout")).one()
    path.write_text(
        path.read_text().replace("During training, Dropout", "During training, Dropout (edited)", 1)
    )
    report = import_content(empty_engine, content_copy)
    assert report.updated == ["deep-learning/08-dropout.md"]
    assert not report.added and not report.removed
    with Session(empty_engine) as s:
        item = s.exec(select(Item).where(Item.slug == "dropout")).one()
        assert item.id == old_id
        assert "Dropout (edited)" in item.body_markdown
        if has_fts(empty_engine):
            hits = s.execute(
                text("SELECT rowid FROM item_search WHERE item_search MATCH 'edited'")
            ).all()
            assert [h[0] for h in hits] == [old_id]


def test_deleted_file_removes_its_item(empty_engine: Engine, content_copy: Path) -> None:
    import_content(empty_engine, content_copy)
    before = counts(empty_engine)
    item_file(content_copy, "08-dropout.md").unlink()
    report = import_content(empty_engine, content_copy)
    assert report.removed == ["deep-learning/08-dropout.md"]
    after = counts(empty_engine)
    assert after["items"] == before["items"] - 1
    assert after["search"] == before["search"] - 1


def test_two_items_can_swap_numbers(empty_engine: Engine, content_copy: Path) -> None:
    import_content(empty_engine, content_copy)
    a = item_file(content_copy, "01-neural-networks-forward-propagation.md")
    b = item_file(content_copy, "02-backpropagation-chain-rule.md")
    a.write_text(a.read_text().replace("number: 1\n", "number: 2\n"))
    b.write_text(b.read_text().replace("number: 2\n", "number: 1\n"))
    a.rename(a.with_name("02-neural-networks-forward-propagation.md"))
    b.rename(b.with_name("01-backpropagation-chain-rule.md"))
    import_content(empty_engine, content_copy)
    with Session(empty_engine) as s:
        item = s.exec(select(Item).where(Item.slug == "backpropagation-chain-rule")).one()
    assert item.number == 1


BROKEN = [
    # (how the file is broken, expected line, words the reason must contain)
    (lambda t: t.replace("---\n", "", 1), 1, "front matter"),
    (lambda t: t.replace("difficulty: beginner", "difficulty: [beginner"), 8, "invalid YAML"),
    (lambda t: t.replace("topic: regularization", "topic: alchemy"), 6, "topic 'alchemy'"),
    (lambda t: t.replace("tags:", "colour: red\ntags:"), 8, "unknown key 'colour'"),
    (lambda t: t.replace("difficulty: beginner", "difficulty: easy"), 7, "difficulty must be"),
    (lambda t: t.replace("```python", "```python requires=gpu", 1), None, "requires value 'gpu'"),
    (lambda t: t.replace("```python", "```python variant-of=1", 1), None, "earlier sample"),
    (lambda t: t.replace("slug: dropout", "slug: activation-functions"), 1, "file name must be"),
    (lambda t: t.split("---\n\n", 1)[0] + "---\n", None, "body"),
    (lambda t: t + "\n```python\nprint(1)\n", None, "never closed"),
]


@pytest.mark.parametrize(("breakage", "line", "reason"), BROKEN)
def test_malformed_file_stops_import_and_writes_nothing(
    empty_engine: Engine, content_copy: Path, breakage: object, line: int | None, reason: str
) -> None:
    path = item_file(content_copy, "08-dropout.md")
    path.write_text(breakage(path.read_text()))  # type: ignore[operator]
    with pytest.raises(ContentError) as caught:
        import_content(empty_engine, content_copy)
    assert caught.value.path == "deep-learning/08-dropout.md"
    assert reason in caught.value.reason
    if line is not None:
        assert caught.value.line == line
    assert str(caught.value).startswith("deep-learning/08-dropout.md:")
    assert counts(empty_engine) == {k: 0 for k in counts(empty_engine)}


def test_duplicate_slug_names_both_files(empty_engine: Engine, content_copy: Path) -> None:
    src = item_file(content_copy, "08-dropout.md")
    clash = src.with_name("39-dropout.md")
    clash.write_text(src.read_text().replace("number: 8", "number: 39"))
    with pytest.raises(ContentError, match="slug 'dropout' is already used by"):
        import_content(empty_engine, content_copy)
    assert counts(empty_engine)["items"] == 0


def test_bad_edit_after_good_import_keeps_the_good_data(
    empty_engine: Engine, content_copy: Path
) -> None:
    import_content(empty_engine, content_copy)
    before = counts(empty_engine)
    good = item_file(content_copy, "03-activation-functions.md")
    good.write_text(good.read_text().replace("ReLU", "ReLU (new)"))
    bad = item_file(content_copy, "08-dropout.md")
    bad.write_text(bad.read_text().replace("topic: regularization", "topic: nope"))
    with pytest.raises(ContentError):
        import_content(empty_engine, content_copy)
    assert counts(empty_engine) == before
    with Session(empty_engine) as s:
        item = s.exec(select(Item).where(Item.slug == "activation-functions")).one()
    assert "ReLU (new)" not in item.body_markdown


def test_non_utf8_file_is_refused_with_its_line(empty_engine: Engine, content_copy: Path) -> None:
    path = item_file(content_copy, "08-dropout.md")
    path.write_bytes(path.read_bytes().replace(b"tags:", b"tags: [\xff]\n#", 1))
    with pytest.raises(ContentError, match="not valid UTF-8") as caught:
        import_content(empty_engine, content_copy)
    assert caught.value.line == 8


def test_rendered_html_is_stored_and_raw_html_is_escaped(
    empty_engine: Engine, content_copy: Path
) -> None:
    path = item_file(content_copy, "08-dropout.md")
    path.write_text(path.read_text() + "\n<script>alert(1)</script>\n")
    import_content(empty_engine, content_copy)
    with Session(empty_engine) as s:
        item = s.exec(select(Item).where(Item.slug == "dropout")).one()
    assert "<script>" not in item.body_html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in item.body_html
    assert '<figure class="sample"' in item.body_html
    assert '<span class="' in item.body_html  # highlighted at import, not per request


def test_removing_a_topic_still_in_use_is_refused(empty_engine: Engine, content_copy: Path) -> None:
    import_content(empty_engine, content_copy)
    before = counts(empty_engine)
    catalogue = content_copy / "decks.yml"
    catalogue.write_text(
        catalogue.read_text().replace(
            "  - slug: regularization\n    title: Normalisation & regularisation\n", ""
        )
    )
    with pytest.raises(ContentError, match="topic 'regularization' is not declared"):
        import_content(empty_engine, content_copy)
    assert counts(empty_engine) == before


def test_removing_a_deck_and_its_folder_removes_both(
    empty_engine: Engine, content_copy: Path
) -> None:
    import_content(empty_engine, content_copy)
    catalogue = content_copy / "decks.yml"
    text_ = catalogue.read_text()
    start = text_.index("  - slug: torch-compile")
    end = text_.index("  - slug: labs")
    catalogue.write_text(text_[:start] + text_[end:])
    for path in (content_copy / "torch-compile").glob("*.md"):
        path.unlink()
    report = import_content(empty_engine, content_copy)
    assert len(report.removed) == 6
    with Session(empty_engine) as s:
        assert s.get(Deck, "torch-compile") is None
        assert s.exec(select(Item).where(Item.deck_slug == "torch-compile")).all() == []


def test_every_item_file_passes_the_importer_rules() -> None:
    catalogue = parse_catalogue(CONTENT_DIR / "decks.yml", "decks.yml")
    paths = sorted(CONTENT_DIR.glob("*/*.md"))
    assert len(paths) >= 58
    for path in paths:
        parse_item(
            path.read_text(encoding="utf-8"), path.relative_to(CONTENT_DIR).as_posix(), catalogue
        )


def test_python_fence_inside_a_list_is_a_sample(empty_engine: Engine, content_copy: Path) -> None:
    path = item_file(content_copy, "08-dropout.md")
    path.write_text(path.read_text() + "\n- a step:\n\n  ```python requires=gpu\n  x = 1\n  ```\n")
    with pytest.raises(ContentError, match="requires value 'gpu'"):
        import_content(empty_engine, content_copy)
    path.write_text(path.read_text().replace("requires=gpu", "requires=cuda"))
    import_content(empty_engine, content_copy)
    with Session(empty_engine) as s:
        item = s.exec(select(Item).where(Item.slug == "dropout")).one()
        samples = s.exec(select(CodeSample).where(CodeSample.item_id == item.id)).all()
    assert samples[-1].code == "x = 1" and samples[-1].requires == "cuda"


def test_questions_are_imported_with_their_item_and_keep_their_ids(
    empty_engine: Engine, content_copy: Path
) -> None:
    from app.models import Choice, Question

    item = item_file(content_copy, "08-dropout.md")
    beside = item.with_name("08-dropout.questions.yml")
    prompts = [
        line.strip()[3:-1] for line in item.read_text().splitlines() if line.startswith('  - "')
    ]
    choices = (
        "    choices:\n"
        "      - {text: right, correct: true, why: because}\n"
        "      - {text: wrong, why: a misconception}\n"
        "      - {text: also wrong, why: another one}\n"
    )
    entries = "".join(
        f'  - prompt: "{p}"\n    model_answer: An answer.\n    key_points: [one, two]\n{choices}'
        for p in prompts
    )
    beside.write_text(f"item: dropout\nquestions:\n{entries}")
    import_content(empty_engine, content_copy)
    with Session(empty_engine) as s:
        ids = sorted(q.id for q in s.exec(select(Question)) if q.prompt in prompts)
        assert len(ids) == 2
    beside.write_text(beside.read_text().replace("An answer.", "A better answer."))
    report = import_content(empty_engine, content_copy)
    assert report.updated == ["deep-learning/08-dropout.md"]
    with Session(empty_engine) as s:
        again = [q for q in s.exec(select(Question)) if q.prompt in prompts]
        assert sorted(q.id for q in again) == ids
        assert {q.model_answer for q in again} == {"A better answer."}
        assert s.exec(select(func.count()).select_from(Choice)).one() >= 6


def test_a_question_file_that_breaks_the_rules_stops_the_import(
    empty_engine: Engine, content_copy: Path
) -> None:
    beside = item_file(content_copy, "08-dropout.md").with_name("08-dropout.questions.yml")
    beside.write_text("item: dropout\nquestions:\n  - prompt: Not the item's prompt?\n")
    with pytest.raises(ContentError, match="word for word"):
        import_content(empty_engine, content_copy)


def test_an_items_prompt_may_be_asked_in_other_words_in_the_quizzes(
    empty_engine: Engine, content_copy: Path
) -> None:
    from app.models import Question

    beside = item_file(content_copy, "08-dropout.md").with_name("08-dropout.questions.yml")
    text = beside.read_text()
    first = text.index("  - prompt:")
    line_end = text.index("\n", first) + 1
    asks = '    asks: "Which averaging of subnetworks does Dropout stand in for at test time?"\n'
    beside.write_text(text[:line_end] + asks + text[line_end:])
    import_content(empty_engine, content_copy)
    with Session(empty_engine) as s:
        item = s.exec(select(Item).where(Item.slug == "dropout")).one()
        asked = s.exec(select(Question).where(Question.item_id == item.id)).all()
        seed = s.exec(select(QuizPrompt).where(QuizPrompt.item_id == item.id)).all()
    by_position = {q.position: q.prompt for q in asked}
    assert by_position[1] == asks.split('"')[1], "the quizzes ask it in the new words"
    own = text[first:line_end].split("prompt:", 1)[1].strip().strip('"')
    assert {p.position: p.text for p in seed}[1] == own, "the item keeps the seed's prompt"
    beside.write_text(text[:line_end] + asks.replace("?", ".") + text[line_end:])
    with pytest.raises(ContentError, match="asks must be a question"):
        import_content(empty_engine, content_copy)
    added = '  - prompt: "Is this new?"\n    asks: "Asked how?"\n'
    beside.write_text(text + added)
    with pytest.raises(ContentError, match="only an item's own prompts take 'asks'"):
        import_content(empty_engine, content_copy)


def test_questions_after_the_items_prompts_are_added_and_old_ids_stay(
    empty_engine: Engine, content_copy: Path
) -> None:
    from app.models import Question

    beside = item_file(content_copy, "08-dropout.md").with_name("08-dropout.questions.yml")
    import_content(empty_engine, content_copy)

    def dropout_ids() -> dict[int, int | None]:
        with Session(empty_engine) as s:
            item = s.exec(select(Item).where(Item.slug == "dropout")).one()
            found = s.exec(select(Question).where(Question.item_id == item.id)).all()
            return {q.position: q.id for q in found}

    before = dropout_ids()
    added = (
        '  - prompt: "What does eval-mode Dropout do to its input?"\n'
        "    model_answer: It passes it through unchanged. Scaling happened in training.\n"
        "    key_points: [identity in eval, scaling in training]\n"
        "    choices:\n"
        "      - {text: passes it unchanged, correct: true, why: eval is the identity}\n"
        "      - {text: halves it, why: scaling is done in training}\n"
        "      - {text: zeroes half of it, why: masks are drawn only in training}\n"
    )
    beside.write_text(beside.read_text() + added)
    import_content(empty_engine, content_copy)
    after = dropout_ids()
    added_at = len(before) + 1  # the bank may already add questions of its own
    assert sorted(after) == list(range(1, added_at + 1))
    assert {p: after[p] for p in before} == before and after[added_at] not in before.values()
    beside.write_text(beside.read_text().replace("its input?", "its input"))
    with pytest.raises(ContentError, match=f"question {added_at}: prompt must be a question"):
        import_content(empty_engine, content_copy)


def test_a_question_shows_code_only_with_a_check_that_runs_it(
    empty_engine: Engine, content_copy: Path
) -> None:
    from app.models import Question

    beside = item_file(content_copy, "08-dropout.md").with_name("08-dropout.questions.yml")
    shown = "import torch\nprint(torch.nn.Dropout(0.5).eval()(torch.ones(2)).tolist())\n"
    block = "".join(f"      {line}\n" for line in shown.splitlines())
    added = (
        '  - prompt: "What does this print?"\n'
        f"    code: |\n{block}"
        "    model_answer: Two ones. Eval-mode Dropout is the identity.\n"
        "    key_points: [identity in eval, no scaling at inference]\n"
        "    choices:\n"
        "      - {text: '[1.0, 1.0]', correct: true, why: eval is the identity}\n"
        "      - {text: '[2.0, 2.0]', why: scaling is done in training}\n"
        "      - {text: '[0.0, 2.0]', why: masks are drawn only in training}\n"
    )
    added_at = beside.read_text().count("\n  - prompt:") + 1  # after the bank's own questions
    beside.write_text(beside.read_text() + added)
    with pytest.raises(
        ContentError, match=f"question {added_at}: a question with code needs a check"
    ):
        import_content(empty_engine, content_copy)
    check = f"    check:\n      code: |\n{block.replace('      ', '        ')}"
    beside.write_text(beside.read_text() + check + '      stdout: "[1.0, 1.0]\\n"\n')
    import_content(empty_engine, content_copy)
    with Session(empty_engine) as s:
        question = s.exec(select(Question).where(Question.prompt == "What does this print?")).one()
        plain = s.exec(select(Question).where(Question.position == 1)).first()
    assert question.code == shown.rstrip("\n")
    assert '<span class="kn">import</span>' in question.code_html
    assert plain is not None and plain.code == plain.code_html == ""


def test_every_requires_flag_has_a_label_for_the_page() -> None:
    assert set(REQUIREMENT_LABELS) == {r.value for r in Requirement}

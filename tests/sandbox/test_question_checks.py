"""Keys about what code does are proved by running that code: every question with a
`check` in the bank runs in the real sandbox and must print exactly what the key says."""

from __future__ import annotations

import pytest
import yaml

from tests.support.paths import CONTENT_DIR
from tests.support.sandbox_worker import WorkerHandle, needs_isolation

pytestmark = needs_isolation


def checks() -> list[tuple[str, str, str]]:
    found = []
    for path in sorted(CONTENT_DIR.glob("*/*.questions.yml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        for n, question in enumerate(data["questions"], start=1):
            check = question.get("check")
            if check:
                found.append((f"{path.name}#{n}", check["code"], check["stdout"]))
    return found


CHECKS = checks()


def test_the_bank_proves_keys_by_running_code() -> None:
    assert len(CHECKS) >= 20


@pytest.mark.parametrize(("where", "code", "stdout"), CHECKS, ids=[c[0] for c in CHECKS])
def test_a_checked_key_is_what_the_code_prints(
    worker: WorkerHandle, where: str, code: str, stdout: str
) -> None:
    result = worker.run(code)
    assert result["verdict"] == "ok", f"{where}: {result['stderr'][-800:]}"
    assert result["stdout"] == stdout, where

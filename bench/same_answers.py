"""Every page and API answer of two checkouts side by side: the same requests, as a guest, an
API user with a bearer token and a signed-in browser, against each checkout's own server
(each over a fresh data folder with the same content), and a table of what differs. A
restructure that changes nothing for users answers every request the same.

    python bench/same_answers.py --before /path/to/old/checkout

What varies from one server to the next is masked before comparing: ids, tokens, times,
durations, CSRF tokens and nonces. Answers drawn at random (a quiz's questions) are
compared by their shape: the same keys and types, the same statuses."""

from __future__ import annotations

import argparse
import difflib
import http.cookiejar
import json
import re
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from served import ROOT, served

ITEM = "self-attention-transformers"
EXERCISE = "stable-softmax"
LAB = "lab-mlp-item-26"
VOLATILE_KEYS = re.compile(
    r"(^id$|_id$|^token$|_at$|^at$|_ms$|^due$|seconds|^wall|^created|^started|^finished|"
    r"^deadline|^now$|_mb$|memory|^elapsed|^remaining|^uptime|^version$|^attempt$|^device$|^backend$)"
)
MASKS = [
    (re.compile(r'(name="csrf-token" content=|name="csrf_token" value=)"[^"]+"'), r'\1"~"'),
    (re.compile(r'"X-CSRF-Token": "[^"]+"'), '"X-CSRF-Token": "~"'),
    (re.compile(r'nonce="[^"]+"'), 'nonce="~"'),
    (re.compile(r"\b\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:?\d\d)?"), "~time"),
    (re.compile(r"\b[0-9a-f]{32}\b|\b[0-9a-f-]{36}\b|\b[A-Za-z0-9_-]{40,}\b"), "~id"),
    (re.compile(r"\b[a-z0-9]{4}-[a-z0-9]{4}-[a-z0-9]{4}\b"), "~code"),
    (re.compile(r"\b\d+(\.\d+)?\s?(ms|s|µs|seconds?|minutes?)\b"), "~duration"),
    (re.compile(r"/(runs|quizzes|coding|submissions)/[\w-]+"), r"/\1/~"),
    (re.compile(r"\b(today|yesterday|\d+ (minutes?|hours?|days?) ago|just now)\b"), "~when"),
]


def masked_text(text: str) -> str:
    for pattern, replacement in MASKS:
        text = pattern.sub(replacement, text)
    return text


def masked_json(value: Any, *, shape_only: bool) -> Any:
    if isinstance(value, dict):
        return {
            k: ("~" if VOLATILE_KEYS.search(k) else masked_json(v, shape_only=shape_only))
            for k, v in sorted(value.items())
        }
    if isinstance(value, list):
        items = [masked_json(v, shape_only=shape_only) for v in value]
        return items[:1] if shape_only else items
    if shape_only:  # the keys alone: a value drawn at random may be null one time, text the next
        return "~"
    return masked_text(value) if isinstance(value, str) else value


@dataclass
class Answer:
    status: int
    kind: str
    body: Any


@dataclass
class Visitor:
    """One person's requests: their own cookies, and a bearer token once they have one."""

    base: str
    token: str | None = None
    jar: http.cookiejar.CookieJar = field(default_factory=http.cookiejar.CookieJar)

    def __post_init__(self) -> None:
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(self.jar), NoRedirect()
        )

    def send(self, method: str, path: str, body: Any = None, **headers: str) -> Answer:
        data = None
        if isinstance(body, dict) and headers.get("Content-Type") == "form":
            data = urllib.parse.urlencode(body).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        elif body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        request = urllib.request.Request(self.base + path, data, headers, method=method)
        try:
            response = self.opener.open(request, timeout=60)
        except urllib.error.HTTPError as error:
            response = error
        raw = response.read().decode("utf-8", "replace")
        kind = (response.headers.get("content-type") or "").split(";")[0]
        if kind == "application/json":
            return Answer(response.status, kind, json.loads(raw) if raw else None)
        location = response.headers.get("location")
        return Answer(response.status, kind, raw if location is None else f"-> {location}")

    def csrf(self, path: str = "/") -> str:
        page = self.send("GET", path).body
        found = re.search(r'<meta name="csrf-token" content="([^"]+)">', str(page))
        return found.group(1) if found else ""


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def until_done(visitor: Visitor, path: str) -> Answer:
    deadline = time.monotonic() + 120
    while True:
        answer = visitor.send("GET", path)
        body = answer.body if isinstance(answer.body, dict) else {}
        if body.get("status") in ("done", None) or time.monotonic() > deadline:
            return answer
        time.sleep(0.2)


def script(base: str) -> list[tuple[str, Answer, bool]]:
    """(request, answer, compared by shape only) for every request, in order."""
    out: list[tuple[str, Answer, bool]] = []

    def record(name: str, answer: Answer, shape: bool = False) -> Answer:
        out.append((name, answer, shape))
        return answer

    guest = Visitor(base)
    for path in (
        "/",
        "/items",
        "/items?q=attention",
        "/items?deck=deep-learning&status=new",
        f"/items/{ITEM}",
        f"/items/{ITEM}/measurements",
        "/items/no-such-item",
        "/exercises",
        "/exercises?difficulty=easy",
        f"/exercises/{EXERCISE}",
        f"/exercises/{EXERCISE}/solution",
        "/exercises/no-such-exercise",
        "/quizzes",
        "/review",
        "/dashboard",
        "/notes",
        "/signin",
        "/signup",
        "/forgot",
        "/account",
        "/admin/questions",
        "/admin/exercises",
        "/docs",
        "/openapi.json",
        "/api/items",
        "/api/items?q=softmax",
        f"/api/items/{ITEM}",
        "/api/items/no-such-item",
        "/api/exercises",
        f"/api/exercises/{EXERCISE}",
        f"/api/exercises/{EXERCISE}/hints",
        f"/api/exercises/{EXERCISE}/solution",
        "/api/labs",
        f"/api/labs/{LAB}",
        "/api/me",
        "/api/me/review",
    ):
        record(f"guest GET {path}", guest.send("GET", path))
    hx = guest.send("GET", "/items?q=attention", **{"HX-Request": "true"})
    record("guest GET /items?q=attention (htmx)", hx)

    api = Visitor(base)
    record(
        "api POST /api/users",
        api.send("POST", "/api/users", {"username": "same", "password": "correct horse battery"}),
    )
    login = {"username": "same", "password": "correct horse battery"}
    token = api.send("POST", "/api/token", login, **{"Content-Type": "form"})
    record("api POST /api/token", token)
    api.token = token.body.get("access_token") if isinstance(token.body, dict) else None
    record("api POST /api/users (bad)", api.send("POST", "/api/users", {"username": ""}))
    record("api POST /api/runs (bad)", api.send("POST", "/api/runs", {}))
    for path in (
        "/api/me",
        "/api/me/progress",
        "/api/me/review",
        "/api/me/readiness?interview=2027-01-01",
    ):
        record(f"api GET {path}", api.send("GET", path))
    record(
        f"api PUT /api/me/items/{ITEM}",
        api.send("PUT", f"/api/me/items/{ITEM}", {"bookmarked": True, "note": "mine"}),
    )
    record(f"api GET /api/me/items/{ITEM}", api.send("GET", f"/api/me/items/{ITEM}"))
    # Before the quiz: which questions it draws (an item's own prompts count as recall
    # checks, the bank's others do not) is chance, and the export would show it.
    record("api GET /api/me/export", api.send("GET", "/api/me/export"))
    quiz = record("api POST /api/quizzes", api.send("POST", "/api/quizzes", {"count": 5}), True)
    quiz_id = quiz.body.get("id") if isinstance(quiz.body, dict) else None
    if quiz_id is not None:
        record("api GET /api/quizzes/~", api.send("GET", f"/api/quizzes/{quiz_id}"), True)
        answer = {"question_id": 1, "choice_id": "A"}
        sent = api.send("POST", f"/api/quizzes/{quiz_id}/answers", answer)
        record("api POST /api/quizzes/~/answers", sent, True)
        record(
            "api POST /api/quizzes/~/submit",
            api.send("POST", f"/api/quizzes/{quiz_id}/submit"),
            True,
        )
    run = api.send("POST", "/api/runs", {"code": "print(sum(range(10)))", "backend": "cpu"})
    record("api POST /api/runs", run)
    run_id = run.body.get("id") if isinstance(run.body, dict) else None
    if run_id:
        record("api GET /api/runs/~ (done)", until_done(api, f"/api/runs/{run_id}"))
    record(
        f"api POST /api/exercises/{EXERCISE}/hints",
        api.send("POST", f"/api/exercises/{EXERCISE}/hints"),
    )
    starter = api.send("GET", f"/api/exercises/{EXERCISE}").body
    code = starter.get("starter_code", "") if isinstance(starter, dict) else ""
    sent = api.send("POST", f"/api/exercises/{EXERCISE}/submissions", {"code": code, "mode": "run"})
    record(f"api POST /api/exercises/{EXERCISE}/submissions", sent)
    sub_id = sent.body.get("id") if isinstance(sent.body, dict) else None
    if sub_id:
        path = f"/api/exercises/{EXERCISE}/submissions/{sub_id}"
        record("api GET submission (done)", until_done(api, path))
    coding = api.send("POST", "/api/coding-rounds", {"minutes": 20})
    record("api POST /api/coding-rounds", coding, True)
    round_id = coding.body.get("id") if isinstance(coding.body, dict) else None
    if round_id:
        record(
            "api GET /api/coding-rounds/~", api.send("GET", f"/api/coding-rounds/{round_id}"), True
        )
        finished = api.send("POST", f"/api/coding-rounds/{round_id}/finish")
        record("api POST /api/coding-rounds/~/finish", finished, True)

    reader = Visitor(base)
    csrf = reader.csrf("/signup")
    form = {"csrf_token": csrf, "username": "reader", "password": "correct horse battery"}
    record("browser POST /signup", reader.send("POST", "/signup", form, **{"Content-Type": "form"}))
    for path in (
        "/",
        "/dashboard",
        "/account",
        "/notes",
        f"/items/{ITEM}",
        f"/exercises/{EXERCISE}",
        "/quizzes",
        "/review",
    ):
        record(f"browser GET {path}", reader.send("GET", path))
    csrf = reader.csrf(f"/items/{ITEM}")
    bookmark = {"on": "true", "csrf_token": csrf}
    form_hx = {"Content-Type": "form", "HX-Request": "true"}
    record(
        "browser POST bookmark", reader.send("POST", f"/items/{ITEM}/bookmark", bookmark, **form_hx)
    )
    record(
        "browser POST note",
        reader.send(
            "POST",
            f"/items/{ITEM}/note",
            {"note": "kept", "csrf_token": csrf},
            **{"Content-Type": "form", "HX-Request": "true"},
        ),
    )
    quiz_form = {"csrf_token": csrf, "count": "5", "mode": "mock", "coding_round": "true"}
    started = reader.send("POST", "/quizzes", quiz_form, **{"Content-Type": "form"})
    record("browser POST /quizzes (mock)", started)
    where = str(started.body).removeprefix("-> ")
    if where.startswith("/quizzes/"):
        record("browser GET /quizzes/~ (mock)", reader.send("GET", where), True)
    record("browser GET /notes (after)", reader.send("GET", "/notes"))
    record("browser GET /dashboard (after)", reader.send("GET", "/dashboard"))
    return out


def lines(value: Any) -> list[str]:
    if isinstance(value, str):
        return value.splitlines()
    return json.dumps(value, indent=1, ensure_ascii=False).splitlines()


def view(answer: Answer, shape: bool) -> Any:
    if isinstance(answer.body, (dict, list)):
        return masked_json(answer.body, shape_only=shape)
    if shape:  # a page drawn at random: its status and kind only
        return answer.kind
    return masked_text(str(answer.body))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, required=True, help="the older checkout")
    parser.add_argument("--port", type=int, default=8731)
    args = parser.parse_args()
    ready = lambda health: health["sandbox"]["available"]  # noqa: E731
    answers = {}
    for label, root, port in (("before", args.before, args.port), ("after", ROOT, args.port + 1)):
        with served(port, {}, ready, root=root) as base:
            answers[label] = script(base)
    same = differ = 0
    print(f"{'request':58} {'before':>6} {'after':>6}  same")
    for (name, old, shape), (_, new, _) in zip(answers["before"], answers["after"], strict=True):
        equal = (
            old.status == new.status
            and old.kind == new.kind
            and view(old, shape) == view(new, shape)
        )
        same += equal
        differ += not equal
        print(f"{name[:58]:58} {old.status:>6} {new.status:>6}  {'yes' if equal else 'NO'}")
        if not equal:
            a, b = (lines(view(answer, shape)) for answer in (old, new))
            for line in list(difflib.unified_diff(a, b, lineterm="", n=1))[:20]:
                print("      " + line[:150])
    print(f"\n{same} answers the same, {differ} different")


if __name__ == "__main__":
    main()

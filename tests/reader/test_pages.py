"""Browser pages: full pages for normal requests, fragments for htmx, both varying on it."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

from tests.support.forms import sign_up

HX = {"HX-Request": "true"}


def test_home_lists_the_decks_with_counts(client: TestClient) -> None:
    response = client.get("/")
    assert response.status_code == 200
    assert response.template.name == "home.html"  # type: ignore[attr-defined]
    decks = {d.slug: d.item_count for d in response.context["catalogue"].decks}  # type: ignore[attr-defined]
    assert decks["deep-learning"] == 38
    assert decks["pytorch-essentials"] == 20
    assert "38" in response.text and "Deep learning" in response.text


def test_item_list_is_a_full_page_without_htmx(client: TestClient) -> None:
    response = client.get("/items")
    assert response.template.name == "items/list.html"  # type: ignore[attr-defined]
    assert "HX-Request" in response.headers["vary"].split(", ")
    assert "<html" in response.text and 'id="results"' in response.text
    assert len(response.context["hits"]) >= 58  # type: ignore[attr-defined]


def test_item_list_is_only_the_results_fragment_for_htmx(client: TestClient) -> None:
    response = client.get("/items", params={"q": "dropout"}, headers=HX)
    assert response.template.name == "items/_results.html"  # type: ignore[attr-defined]
    assert "HX-Request" in response.headers["vary"].split(", ")
    assert "<html" not in response.text
    assert 'id="results"' in response.text


def test_filters_work_as_a_plain_form_without_javascript(client: TestClient) -> None:
    response = client.get(
        "/items", params={"deck": "deep-learning", "topic": "", "difficulty": "advanced", "q": ""}
    )
    hits = response.context["hits"]  # type: ignore[attr-defined]
    assert hits
    assert {h.item.deck_slug for h in hits} == {"deep-learning"}
    assert {h.item.difficulty for h in hits} == {"advanced"}
    assert [h.item.number for h in hits] == sorted(h.item.number for h in hits)


def test_list_form_drives_htmx_and_keeps_real_links(client: TestClient) -> None:
    html = client.get("/items").text
    assert 'hx-get="/items"' in html and 'hx-push-url="true"' in html
    assert 'action="/items"' in html and 'method="get"' in html
    assert 'href="/items/neural-networks-forward-propagation"' in html


def test_search_with_no_results_says_so(client: TestClient) -> None:
    response = client.get("/items", params={"q": "zzzqqqxxx"})
    assert response.status_code == 200
    assert "No questions match" in response.text
    assert response.context["hits"] == []  # type: ignore[attr-defined]


def test_item_page_shows_question_table_code_and_prompts(client: TestClient) -> None:
    response = client.get("/items/activation-functions")
    assert response.status_code == 200
    assert response.template.name == "items/detail.html"  # type: ignore[attr-defined]
    page = response.context["page"]  # type: ignore[attr-defined]
    assert page.item.number == 3
    assert page.previous.number == 2 and page.next.number == 4
    html = response.text
    assert "What are the most common activation functions" in html
    assert "<table>" in html and "<th>Formula</th>" in html
    assert 'class="copy-btn"' in html and '<pre class="hl">' in html
    assert "What is the &#39;dying ReLU&#39; problem?" in html
    assert 'rel="next"' in html and 'rel="prev"' in html
    assert 'aria-label="Breadcrumb"' in html


def test_first_item_has_no_previous_and_last_no_next(client: TestClient) -> None:
    first = client.get("/items/neural-networks-forward-propagation").context["page"]  # type: ignore[attr-defined]
    last = client.get("/items/feedforward-network-from-scratch").context["page"]  # type: ignore[attr-defined]
    assert first.previous is None and first.next is not None
    assert last.next is None and last.previous is not None


def test_unknown_item_is_a_404_page(client: TestClient) -> None:
    response = client.get("/items/no-such-question")
    assert response.status_code == 404
    assert response.template.name == "errors/error.html"  # type: ignore[attr-defined]
    assert "No item is called" in response.text


def test_unknown_address_is_a_404_page(client: TestClient) -> None:
    response = client.get("/nowhere")
    assert response.status_code == 404
    assert "There is no page at this address" in response.text


def test_bad_filter_value_is_a_clear_422_page(client: TestClient) -> None:
    response = client.get("/items", params={"difficulty": "impossible"})
    assert response.status_code == 422
    assert "Difficulty must be one of" in response.text and "<html" in response.text
    response = client.get("/items", params={"deck": "cooking"})
    assert response.status_code == 422
    assert "no deck called" in response.text


def test_a_filter_too_long_is_a_422_page_naming_it_and_its_limit(client: TestClient) -> None:
    response = client.get("/items", params={"q": "x" * 201, "deck": "d" * 65})
    assert response.status_code == 422
    assert "<html" in response.text
    assert "q: String should have at most 200 characters" in response.text
    assert "deck: String should have at most 64 characters" in response.text
    # At the limit it is a search like any other: nothing found, and no error.
    assert client.get("/items", params={"q": "x" * 200}).status_code == 200


def test_a_filter_given_twice_counts_once_its_last_value(client: TestClient) -> None:
    response = client.get("/items?q=nothing-matches-this&q=dropout", headers=HX)
    assert response.status_code == 200
    assert response.context["filters"].q == "dropout"  # type: ignore[attr-defined]
    assert "/items/dropout" in response.text


def test_a_refused_filter_still_shows_who_is_signed_in(client: TestClient) -> None:
    sign_up(client, "list-reader")
    response = client.get("/items", params={"progress": "bogus"})
    assert response.status_code == 422
    assert "Progress must be one of" in response.text
    assert "list-reader" in response.text and "Sign out" in response.text


def test_pages_send_security_headers(client: TestClient) -> None:
    headers = client.get("/").headers
    assert "script-src 'self'" in headers["content-security-policy"]
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["x-frame-options"] == "DENY"


def test_static_assets_are_served_locally(client: TestClient) -> None:
    html = client.get("/").text
    assert "https://" not in html.split("<body")[0]  # no CDN in <head>
    for asset in ("/static/vendor/htmx-2.0.11.min.js", "/static/js/app.js", "/static/css/app.css"):
        assert asset in html
        assert client.get(asset).status_code == 200


def test_history_restore_gets_the_full_page(client: TestClient) -> None:
    headers = {**HX, "HX-History-Restore-Request": "true"}
    response = client.get("/items", params={"q": "dropout"}, headers=headers)
    assert response.template.name == "items/list.html"  # type: ignore[attr-defined]


def test_htmx_results_carry_the_new_page_title(client: TestClient) -> None:
    response = client.get("/items", params={"q": "dropout"}, headers=HX)
    assert "<title>“dropout” · Library · Backprop</title>" in response.text
    assert "<title>" not in client.get("/items", params={"q": "dropout"}).text.split("</head>")[1]


def test_search_box_keeps_history_short_and_enter_uses_htmx(client: TestClient) -> None:
    html = client.get("/items").text
    search_box = html[html.index('id="q"') : html.index(">", html.index('id="q"'))]
    assert 'hx-replace-url="true"' in search_box and "hx-push-url" not in search_box
    assert 'hx-disinherit="hx-push-url"' in html
    assert 'hx-trigger="change from:select, submit"' in html


def test_pages_answer_head_requests(client: TestClient) -> None:
    for path in ("/", "/items", "/items/dropout", "/api/health"):
        assert client.head(path).status_code == 200, path


def test_wrong_method_is_405_with_allow(client: TestClient) -> None:
    response = client.post("/items/dropout")
    assert response.status_code == 405
    assert "GET" in response.headers["allow"]


def test_item_headings_continue_the_page_outline(client: TestClient) -> None:
    html = client.get("/items/activation-functions").text
    assert '<h2 id="h-common-activation-functions">' in html
    assert "<h3" not in html.split('class="prose"')[1].split('<section id="study"')[0]


def test_api_docs_are_served_locally_with_a_csp_only_there(client: TestClient) -> None:
    docs = client.get("/docs")
    assert docs.status_code == 200
    assert "cdn." not in docs.text and "/static/vendor/swagger-ui-5.35.0/" in docs.text
    assert "'unsafe-inline'" in docs.headers["content-security-policy"]
    other = client.get("/docsXYZ")
    assert other.status_code == 404
    assert "script-src 'self';" in other.headers["content-security-policy"]
    assert (
        "'unsafe-inline'" not in other.headers["content-security-policy"].split("style-src-attr")[0]
    )
    assert other.headers["x-content-type-options"] == "nosniff"


def test_many_item_pages_at_once_while_the_sandbox_is_slow(settings, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Requests must not hold a database connection while they wait on the sandbox: with
    12 at once, each waiting 0.3 s for a slow worker, no connection is checked out by any of
    them while the worker keeps them waiting (holding them across the wait would exhaust the
    pool), and all 12 pages are served."""
    import asyncio
    import json

    import httpx2 as httpx

    from app.main import create_app
    from app.runqueue import local
    from app.settings import RunQueueKind

    monkeypatch.setattr(local, "STATUS_TTL_SECONDS", 0.0)  # every page asks the worker
    sock = tmp_path / "slow.sock"

    held_while_waiting: list[int] = []

    async def slow_worker(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readline()
        await asyncio.sleep(0.3)
        held_while_waiting.append(out["now"] - out["base"])
        writer.write(
            json.dumps(
                {"type": "status", "available": False, "backends": [], "detail": "slow"}
            ).encode()
            + b"\n"
        )
        await writer.drain()
        writer.close()

    from sqlalchemy import event

    out = {"now": 0, "base": 0}

    async def scenario() -> list[int]:
        server = await asyncio.start_unix_server(slow_worker, path=str(sock))
        local_queue = {"sandbox_socket": sock, "run_queue": RunQueueKind.local}
        app = create_app(settings.model_copy(update=local_queue))

        @event.listens_for(app.state.backprop.engine, "checkout")
        def checkout(*_: object) -> None:
            out["now"] += 1

        @event.listens_for(app.state.backprop.engine, "checkin")
        def checkin(*_: object) -> None:
            out["now"] -= 1

        async with (
            app.router.lifespan_context(app),
            httpx.AsyncClient(
                transport=httpx.ASGITransport(app=app), base_url="http://test"
            ) as client,
        ):
            # Requests only: on PostgreSQL, start-up holds its lock's connection while it
            # migrates on another.
            out["base"] = out["now"]
            responses = await asyncio.wait_for(
                asyncio.gather(*(client.get("/items/dropout") for _ in range(12))), timeout=20
            )
        server.close()
        return [r.status_code for r in responses]

    from concurrent.futures import ThreadPoolExecutor

    # A thread of its own: the browser tests' driver may hold this thread's event loop.
    with ThreadPoolExecutor(1) as pool:
        assert pool.submit(asyncio.run, scenario()).result() == [200] * 12
    assert len(held_while_waiting) >= 12
    assert held_while_waiting == [0] * len(held_while_waiting)


def test_pages_and_static_files_are_compressed_for_those_that_accept_it(
    client: TestClient,
) -> None:
    page = client.get("/items/dropout", headers={"Accept-Encoding": "gzip"})
    assert page.headers["content-encoding"] == "gzip" and "Accept-Encoding" in page.headers["vary"]
    plain = client.get("/items/dropout", headers={"Accept-Encoding": "identity"})
    assert "content-encoding" not in plain.headers
    for accept, encoding in (("gzip, br", "br"), ("gzip", "gzip"), ("identity", None)):
        css = client.get("/static/css/app.css", headers={"Accept-Encoding": accept})
        assert css.headers.get("content-encoding") == encoding, accept
        assert css.headers["vary"] == "Accept-Encoding"
        assert "body{" in css.text.replace(" ", "") or "body {" in css.text  # decoded intact
    tiny = client.get("/static/js/theme.js", headers={"Accept-Encoding": "gzip"})
    assert "content-encoding" not in tiny.headers, "too small to gain anything"


def test_filter_menus_say_how_many_items_each_choice_holds(client: TestClient) -> None:
    page = client.get("/items").text
    assert re.search(r'<option value="deep-learning"\s*>[^<]+\(38\)</option>', page)
    assert re.search(r'<option value="labs"\s*>[^<]+\(10\)</option>', page)


def heading_of(html: str) -> str:
    return re.search(r"<h1>(.*?)</h1>", html).group(1)  # type: ignore[union-attr]


def test_the_labs_page_is_called_labs_and_counts_labs(client: TestClient) -> None:
    response = client.get("/items", params={"deck": "labs"})
    labs = len(response.context["hits"])  # type: ignore[attr-defined]
    assert labs >= 2
    html = response.text
    assert heading_of(html) == "Labs" and "<title>Labs · Backprop</title>" in html
    assert f"{labs} labs" in html and "questions" not in html.split('id="results-count"')[1]
    assert '<a href="/items">Library</a>' in html  # the way back to every question
    start = html.index('aria-label="Main"')
    nav = html[start : html.index("</nav>", start)]
    assert 'href="/items?deck=labs" aria-current="page">Labs' in nav


def test_each_deck_page_is_titled_for_its_deck(client: TestClient) -> None:
    html = client.get("/items", params={"deck": "pytorch-essentials"}).text
    assert heading_of(html) == "PyTorch essentials"
    assert "<title>PyTorch essentials · Backprop</title>" in html and "20 questions" in html
    html = client.get("/items", params={"deck": "deep-learning", "q": "dropout"}).text
    assert "<title>“dropout” · Deep learning · Backprop</title>" in html
    html = client.get("/items").text
    assert heading_of(html) == "Library" and "<title>Library · Backprop</title>" in html


def test_changing_the_deck_with_htmx_renames_the_page(client: TestClient) -> None:
    html = client.get("/items", params={"deck": "labs"}, headers=HX).text
    assert "<title>Labs · Backprop</title>" in html
    assert '<div id="list-heading" hx-swap-oob="true">' in html and heading_of(html) == "Labs"
    full = client.get("/items", params={"deck": "labs"}).text
    assert '<div id="list-heading">' in full and "hx-swap-oob" not in full


def test_a_long_name_in_an_items_title_may_wrap_at_its_dots(client: TestClient) -> None:
    page = client.get("/items/dataparallel-vs-ddp").text
    title = re.search(r"<h1>(.*?)</h1>", page, re.S)
    assert title is not None
    assert "torch.<wbr>nn.<wbr>parallel.<wbr>DistributedDataParallel" in title.group(1)
    assert "<title>Explain the difference between torch.nn.DataParallel" in page  # plain there

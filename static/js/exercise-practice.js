// An exercise page's practice aids: the Hints panel (one hint at a time; after a failing
// submission the button names the failing category whose hint comes next), and the solution,
// shown only after a failed submission or when the learner gives up, each with a
// confirmation. Hint texts are inserted as text, never as HTML.
(function () {
  "use strict";
  const article = document.querySelector("article.exercise");
  if (!article) return;
  const slug = article.dataset.exercise;
  const $ = (id) => document.getElementById(id);

  function csrfToken() {
    const meta = document.querySelector('meta[name="csrf-token"]');
    return meta ? meta.content : "";
  }
  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }
  async function api(path, options) {
    const response = await fetch(`/api/exercises/${slug}/${path}`, Object.assign({
      headers: { "Accept": "application/json", "Content-Type": "application/json", "X-CSRF-Token": csrfToken() },
    }, options || {})).catch(() => null);
    if (!response) return { ok: false, body: { detail: "The server could not be reached; try again." } };
    const body = await response.json().catch(() => ({}));
    return { ok: response.ok, status: response.status, body };
  }

  // Hints
  const hintButton = $("get-hint");
  const hintList = $("hint-list");
  const hintNext = $("hint-next");
  const panel = $("hints");
  const total = panel ? Number(panel.dataset.total) : 0;
  const meta = (number, hint) => `Hint ${number} of ${total} · ${hint.level} · answers: ${hint.category}`;

  function showState(state) {
    const upcoming = state.next;
    hintButton.hidden = !upcoming;
    hintButton.textContent = upcoming && upcoming.answers_failing_test ? `Get a hint for ${upcoming.category}` : "Get a hint";
    hintNext.textContent = upcoming ? `Next: ${meta(upcoming.number, upcoming)}` : "Every hint is shown.";
  }
  function addHint(hint) {
    const item = el("li", `hint hint-${hint.level}`);
    item.append(el("p", "hint-meta", meta(hint.number, hint)), el("p", "hint-text", hint.text));
    hintList.append(item);
  }
  async function refreshHints() {
    if (!hintButton) return;
    const answer = await api("hints", { method: "GET" });
    if (answer.ok) showState(answer.body);
  }
  if (hintButton) {
    hintButton.addEventListener("click", async () => {
      hintButton.disabled = true;
      const answer = await api("hints", { method: "POST", body: "{}" });
      hintButton.disabled = false;
      if (!answer.ok) {
        hintNext.textContent = typeof answer.body.detail === "string" ? answer.body.detail : "No hint could be shown; try again.";
        return;
      }
      addHint(answer.body.hint);
      showState(answer.body);
      if (!hintButton.hidden) hintButton.focus();
    });
  }

  // Solution: each way in asks first, in a dialog; once shown, the server's section (the
  // reference, the editorial, the diff) replaces the buttons.
  let giveUp = false;
  let opener = null;
  function bindSolution() {
    const dialog = $("reveal-confirm");
    if (!dialog) return;
    const text = $("reveal-confirm-text");
    const error = $("reveal-error");
    function ask(event, givingUp) {
      giveUp = givingUp;
      opener = event.currentTarget;
      text.textContent = givingUp ? text.dataset.giveUp : text.dataset.reveal;
      error.hidden = true;
      dialog.showModal();
      $("reveal-yes").focus();
    }
    $("reveal-solution").addEventListener("click", (e) => ask(e, false));
    $("give-up").addEventListener("click", (e) => ask(e, true));
    $("reveal-cancel").addEventListener("click", () => dialog.close());
    dialog.addEventListener("close", () => { if (opener && document.contains(opener)) opener.focus(); });
    $("reveal-yes").addEventListener("click", async () => {
      const answer = await api("solution", { method: "POST", body: JSON.stringify({ give_up: giveUp }) });
      if (!answer.ok) {
        error.textContent = typeof answer.body.detail === "string" ? answer.body.detail : "The solution could not be loaded; try again.";
        error.hidden = false;
        return;
      }
      const section = await fetch(`/exercises/${slug}/solution`, { headers: { "Accept": "text/html" } })
        .then((r) => (r.ok ? r.text() : null)).catch(() => null);
      opener = null;
      dialog.close();
      if (!section) { window.location.reload(); return; }
      $("solution-section").outerHTML = section;
      $("solution-heading").focus();
    });
  }
  bindSolution();

  article.addEventListener("exercise:graded", (event) => {
    refreshHints();
    const result = event.detail || {};
    const reveal = $("reveal-solution");
    if (reveal && result.mode === "submit" && ["failed", "error", "timeout"].includes(result.verdict)) {
      reveal.disabled = false;
      const note = $("reveal-note");
      note.textContent = note.dataset.open;
    }
  });
})();

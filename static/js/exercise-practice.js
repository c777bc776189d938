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

  article.addEventListener("exercise:graded", () => refreshHints());
})();

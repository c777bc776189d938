// An exercise page's practice aids: the Hints panel (one hint at a time; after a failing
// submission the button names the failing category whose hint comes next), and the solution,
// behind one button whose words follow the learner's state (not tried, failed, passed, in a
// review), confirmed in a dialog. Hint texts are inserted as text, never as HTML.
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
    // The workspace points to the Hints tab from the results (exercise-workspace.js).
    article.dispatchEvent(new CustomEvent("exercise:hints", {
      detail: { answersFailure: Boolean(upcoming && upcoming.answers_failing_test), category: upcoming ? upcoming.category : "" },
    }));
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

  // Solution: its one button asks first, in a dialog whose focus starts on the safe choice;
  // once shown, the server's section (the reference, the editorial, the diff) replaces the
  // button. Its words follow the learner's state, so a graded Submit that changes the state
  // (a first failure, a first pass) brings the server's new section in.
  const section = () => $("solution-section");
  let opener = null;
  async function fetchSection() {
    return fetch(`/exercises/${slug}/solution`, { headers: { "Accept": "text/html" } })
      .then((r) => (r.ok ? r.text() : null)).catch(() => null);
  }
  function bindSolution() {
    bindCopy();
    const dialog = $("reveal-confirm");
    if (!dialog) return;
    const button = $("reveal-solution");
    const error = $("reveal-error");
    button.addEventListener("click", () => {
      opener = button;
      error.hidden = true;
      dialog.showModal();
      $("reveal-cancel").focus();
    });
    $("reveal-cancel").addEventListener("click", () => dialog.close());
    dialog.addEventListener("close", () => { if (opener && document.contains(opener)) opener.focus(); });
    $("reveal-yes").addEventListener("click", async () => {
      const giveUp = button.dataset.giveUp === "true";
      const answer = await api("solution", { method: "POST", body: JSON.stringify({ give_up: giveUp }) });
      if (!answer.ok) {
        error.textContent = typeof answer.body.detail === "string" ? answer.body.detail : "The solution could not be loaded; try again.";
        error.hidden = false;
        return;
      }
      const html = await fetchSection();
      opener = null;
      dialog.close();
      if (!html) { window.location.reload(); return; }
      section().outerHTML = html;
      bindSolution();
      $("solution-heading").focus();
    });
  }
  // Copy the reference; the status element says how it went (screen readers hear it).
  function bindCopy() {
    const copy = $("copy-solution");
    if (!copy) return;
    const status = $("copy-solution-status");
    let clear = null;
    copy.addEventListener("click", async () => {
      const code = $("solution-code");
      const how = await window.BackpropCopy(code.textContent, code); // static/js/app.js
      status.textContent = how === "copied" ? "Copied" : "Selected: press Ctrl+C to copy";
      clearTimeout(clear);
      clear = setTimeout(() => { status.textContent = ""; }, 4000);
    });
  }
  bindSolution();

  article.addEventListener("exercise:graded", async (event) => {
    refreshHints();
    const result = event.detail || {};
    const current = section();
    // A review keeps the solution behind its button whatever the Submit says; a revealed
    // solution stays as it is.
    if (!current || article.dataset.review || current.dataset.state === "revealed") return;
    if (result.mode !== "submit" || !result.verdict) return;  // only a graded Submit counts
    const html = await fetchSection();
    if (!html) return;
    const fresh = document.createRange().createContextualFragment(html).firstElementChild;
    const now = section();
    const dialog = $("reveal-confirm");
    if (!fresh || !now || fresh.dataset.state === now.dataset.state || (dialog && dialog.open)) return;
    now.replaceWith(fresh);
    bindSolution();
  });
})();

// An exercise page: the starter in the editor (drafts kept in this browser, or with the
// account), Run (visible tests) and Submit (every test) with Ctrl+Enter and Ctrl+Shift+Enter,
// Cancel (Esc) while grading, and each test's result shown under its category as it streams
// in, the first failure opened; the latest grading is drawn again after a reload. Anything
// the code or the grader says is inserted as text, never as HTML. A coding round's page uses
// it too: its submissions go to the round (data-submit-url), its draft is the round's
// (data-drafts "round", saved to data-draft-url as the learner types), and "I'm done" and
// the end of its clock send the editor's code with the form that ends the round.
(function () {
  "use strict";
  const article = document.querySelector("article.exercise");
  if (!article || !window.BackpropEditor) return;
  const slug = article.dataset.exercise;
  const backends = (article.dataset.backends || "").split(",").filter(Boolean);
  const submitUrl = article.dataset.submitUrl || `/api/exercises/${slug}/submissions`;
  const $ = (id) => document.getElementById(id);
  const runButton = $("run-tests");
  const submitButton = $("submit-tests");
  const cancelButton = $("cancel-run");
  const resetButton = $("reset-code");
  const picker = $("backend-picker");
  const state = $("grading-state");
  const loading = $("grading-loading");
  const panel = $("grading");
  const verdictBox = $("grading-verdict");
  const groups = $("grading-groups");
  const outputBox = $("grading-output");
  const stream = $("grading-stream");
  const draftNote = $("draft-note");

  const CATEGORIES = ["shape", "values", "gradients", "properties", "edge cases", "API rules", "performance"];
  const STATUS = { pass: "passed", fail: "failed", error: "error", timeout: "timed out" };
  const VERDICTS = {
    passed: "Every test passed", failed: "Some tests failed", error: "Your code could not be graded",
    timeout: "Out of time", rejected: "Not run", internal_error: "The sandbox failed", killed: "Stopped",
  };

  function el(tag, props, children) {
    const node = document.createElement(tag);
    Object.assign(node, props || {});
    (children || []).forEach((child) => node.append(child));
    return node;
  }
  function csrfToken() {
    const meta = document.querySelector('meta[name="csrf-token"]');
    return meta ? meta.content : "";
  }

  // The editor, with the learner's draft when there is one.
  const pre = $("starter-code");
  const original = pre.textContent.replace(/\n$/, "");
  // Drafts as for samples: a guest's in this browser, an account's on the server, so they
  // follow it to any device (and are not left in a shared browser).
  const roundDrafts = article.dataset.drafts === "round";
  const accountDrafts = article.dataset.drafts === "account" || roundDrafts;
  // A review re-solves from the starter: the saved draft is neither shown nor overwritten.
  const startsFresh = article.dataset.review === "1" || article.dataset.drafts === "none";
  const draftKey = `backprop-exercise-draft:${slug}`;
  let draft = null;
  if (startsFresh) {
    draft = null;
  } else if (accountDrafts) {
    const node = $("exercise-draft");
    try { draft = node ? JSON.parse(node.textContent) : null; } catch (e) { draft = null; }
  } else {
    try { draft = localStorage.getItem(draftKey); } catch (e) { draft = null; }
  }
  const saveDraft = startsFresh ? () => {} : accountDrafts ? serverSaver() : (text) => {
    try {
      if (text === original) localStorage.removeItem(draftKey);
      else localStorage.setItem(draftKey, text);
    } catch (e) { /* storage full or off: the draft lives as long as the page */ }
  };
  function serverSaver() {
    const url = article.dataset.draftUrl || `/exercises/${slug}/draft`;
    let pending = null; // the text not yet sent
    let timer = null;
    function send(text, beacon) {
      const form = new FormData();
      form.append("csrf_token", csrfToken());
      // A round keeps whatever its editor holds, the starter included; an exercise's draft
      // back at the starter is forgotten.
      const discard = text === original && !roundDrafts;
      if (!discard) form.append("code", text);
      const target = discard ? `${url}/discard` : url;
      if (beacon && navigator.sendBeacon) { navigator.sendBeacon(target, form); return; }
      fetch(target, { method: "POST", body: form, headers: { "X-CSRF-Token": csrfToken() } })
        .catch(() => { pending = text; }); // offline: sent again with the next change
    }
    function flush(beacon) {
      if (timer) clearTimeout(timer);
      timer = null;
      if (pending === null) return;
      const text = pending;
      pending = null;
      send(text, beacon);
    }
    window.addEventListener("pagehide", () => flush(true));
    const save = (text) => {
      pending = text;
      if (timer) clearTimeout(timer);
      timer = setTimeout(() => flush(false), 800);
    };
    // The code has gone with the form that ends a round: nothing is left to send.
    save.cancel = () => {
      if (timer) clearTimeout(timer);
      timer = null;
      pending = null;
    };
    return save;
  }
  const restored = typeof draft === "string" && draft !== original;
  const host = el("div", { className: "editor-host" });
  pre.replaceWith(host);
  const editor = window.BackpropEditor.create(host, {
    doc: restored ? draft : original,
    label: "Your solution, editable",
    onRun: () => start("run"),
    onChange: (text) => {
      resetButton.disabled = text === original;
      if (text === original) draftNote.hidden = true;
      saveDraft(text);
    },
  });
  const content = host.querySelector(".cm-content");
  if (content && !content.hasAttribute("tabindex")) content.setAttribute("tabindex", "0");
  resetButton.disabled = !restored;
  article.backpropEditor = editor; // as a sample's figure holds its editor
  if (restored) {
    const where = roundDrafts ? "with this round" : accountDrafts ? "with your account" : "in this browser";
    draftNote.textContent = `Your edited code is back (kept ${where}). Reset returns to the starter.`;
    draftNote.hidden = false;
  }
  // The form that ends a round ("I'm done", or sent by the clock at zero) carries the code
  // in the editor: code not yet submitted is graded as the round's last submission.
  const finishForm = roundDrafts ? document.getElementById("quiz-submit") : null;
  if (finishForm) {
    finishForm.addEventListener("formdata", (e) => {
      const code = editor.getValue();
      if (code !== original || restored) e.formData.set("code", code); // the starter, untouched, is not an answer
      if (saveDraft.cancel) saveDraft.cancel();
    });
  }

  let current = null; // {id, source}
  let cancelPending = false; // Cancel pressed while the grading was being sent
  const canRun = backends.length > 0;
  runButton.disabled = submitButton.disabled = !canRun;

  function busy(on) {
    runButton.disabled = submitButton.disabled = on || !canRun;
    loading.hidden = !on;
    if (cancelButton) cancelButton.hidden = !on;
    article.classList.toggle("is-running", on);
  }

  // One <details> per category, created as its first test arrives, in the usual order.
  function groupFor(category) {
    let group = groups.querySelector(`details[data-category="${CSS.escape(category)}"]`);
    if (group) return group;
    const list = el("ul", { className: "test-list" });
    const counts = el("span", { className: "group-counts" });
    group = el("details", { className: "test-group" }, [
      el("summary", {}, [el("span", { className: "group-name", textContent: category }), counts]),
      list,
    ]);
    group.dataset.category = category;
    group.dataset.passed = "0";
    group.dataset.total = "0";
    const order = CATEGORIES.indexOf(category);
    const after = Array.from(groups.children).find((g) => CATEGORIES.indexOf(g.dataset.category) > order);
    groups.insertBefore(group, after || null);
    return group;
  }

  function addTest(test) {
    const group = groupFor(test.category);
    const passed = test.status === "pass";
    const item = el("li", { className: `test test-${test.status}` }, [
      el("span", { className: "test-status", textContent: STATUS[test.status] || test.status }),
      el("span", { className: "test-name", textContent: test.name }),
    ]);
    if (test.hidden) item.append(el("span", { className: "badge", textContent: "hidden" }));
    if (test.message) item.append(el("pre", { className: "test-message", textContent: test.message }));
    const caseNode = window.BackpropCase && window.BackpropCase.render(test);
    if (caseNode) item.append(caseNode);
    group.querySelector(".test-list").append(item);
    group.dataset.total = String(Number(group.dataset.total) + 1);
    if (passed) group.dataset.passed = String(Number(group.dataset.passed) + 1);
    group.querySelector(".group-counts").textContent = ` ${group.dataset.passed} of ${group.dataset.total} passed`;
    group.classList.toggle("has-failure", group.classList.contains("has-failure") || !passed);
    // The first failure is opened; the learner opens the others.
    if (!passed && !groups.querySelector("details[open]")) group.open = true;
  }

  function finish(result, options) {
    const restored = options && options.restored;
    busy(false);
    if (current && current.source) current.source.close();
    current = null;
    // The stored submission is the whole truth: draw its tests again, in order.
    groups.replaceChildren();
    (result.tests || []).forEach(addTest);
    const cancelled = result.verdict === "killed" && cancelAsked === result.id;
    const title = cancelled ? "Cancelled" : VERDICTS[result.verdict] || result.verdict || "Finished";
    const facts = [];
    if (result.score !== null && result.score !== undefined) facts.push(`score ${Math.round(result.score)}%`);
    if (result.wall_ms) facts.push(`${(result.wall_ms / 1000).toFixed(2)} s`);
    if (result.backend) facts.push(`${result.backend.toUpperCase()}${result.device ? " · " + result.device : ""}`);
    if (result.performance) facts.push(`${result.performance.ratio.toFixed(2)}× the reference's time`);
    verdictBox.replaceChildren(
      el("span", { className: `verdict verdict-${result.verdict}`, textContent: title }),
      el("span", { className: "verdict-facts", textContent: facts.join(" · ") }),
    );
    if (result.detail && result.verdict !== "passed") {
      verdictBox.append(el("pre", { className: "verdict-detail", textContent: result.detail }));
    }
    if (result.mode === "run" && result.verdict === "passed") {
      verdictBox.append(el("p", { className: "muted", textContent: "The visible tests pass. Submit to be graded on the hidden ones too." }));
    }
    stream.textContent = result.output || "";
    outputBox.hidden = !result.output;
    state.textContent = `${title}.`;
    if (restored) {
      verdictBox.append(el("p", { className: "muted verdict-when", textContent: `Your latest ${result.mode === "run" ? "Run" : "Submit"}, kept from before. Every one is in the Submissions tab.` }));
    }
    if (restored) return;
    if (window.BackpropDevices) window.BackpropDevices.show(result);
    // The Hints panel, the solution (exercise-practice.js) and the Submissions tab
    // (exercise-workspace.js) follow each graded submission.
    article.dispatchEvent(new CustomEvent("exercise:graded", { detail: result }));
  }

  function fail(message) {
    busy(false);
    current = null;
    verdictBox.replaceChildren(el("span", { className: "verdict verdict-rejected", textContent: "Not graded" }),
      el("p", { className: "verdict-detail", textContent: message }));
    state.textContent = message;
  }

  async function start(mode) {
    if (current || !canRun) return;
    cancelPending = false;
    panel.hidden = false;
    groups.replaceChildren();
    verdictBox.replaceChildren();
    stream.textContent = "";
    outputBox.hidden = true;
    busy(true);
    state.textContent = mode === "run" ? "Running the visible tests…" : "Grading on every test…";
    const bothBox = $("both-devices");
    const fixed = $("backend-fixed");
    const chosen = picker ? picker.value : fixed ? fixed.dataset.backend : "";
    const backend = bothBox && bothBox.checked ? "both" : chosen || "auto";
    const devices = window.BackpropDevices;
    let response;
    try {
      response = await fetch(submitUrl, {
        method: "POST",
        headers: { "Content-Type": "application/json", "Accept": "application/json", "X-CSRF-Token": csrfToken() },
        body: JSON.stringify({ code: editor.getValue(), backend, mode }),
      });
    } catch (e) {
      fail("The server could not be reached. Check your connection and try again.");
      return;
    }
    const body = await response.json().catch(() => ({}));
    if (!response.ok) {
      fail(typeof body.detail === "string" ? body.detail : "The request was refused.");
      return;
    }
    if (devices) {
      if (backend === "both") devices.start(slug, body); else devices.stop();
    }
    follow(body.id);
  }

  // Stream a grading's events into the results (a fresh one, or one still running when the
  // page was reloaded).
  function follow(id) {
    const base = `/api/exercises/${slug}/submissions/${id}`;
    const source = new EventSource(`${base}/events`);
    current = { id, source };
    if (cancelPending) {
      cancelPending = false;
      cancel();
    }
    source.addEventListener("queued", (e) => {
      const { position } = JSON.parse(e.data);
      state.textContent = position === 1 ? "Waiting: next in line…" : `Waiting: ${position} in line…`;
    });
    source.addEventListener("started", () => { state.textContent = "Grading…"; });
    source.addEventListener("test", (e) => addTest(JSON.parse(e.data).test));
    source.addEventListener("result", (e) => finish(JSON.parse(e.data)));
    source.onerror = () => {
      if (!current || current.source !== source) return;
      source.close();
      fetch(base).then((r) => r.json()).then((r) => {
        if (r.status === "done") finish(r); else fail("Lost contact with the grader; reload to see how it ended.");
      }).catch(() => fail("Lost contact with the server."));
    };
  }

  // Cancel: the run ends "killed", and its result arrives on the stream as any result does.
  let cancelAsked = null; // the grading this page asked to stop
  async function cancel() {
    if (!cancelButton || cancelButton.hidden) return;
    if (!current) { // asked before the server gave the grading its id: stopped once it does
      cancelPending = true;
      state.textContent = "Cancelling…";
      return;
    }
    cancelAsked = current.id;
    cancelButton.disabled = true;
    state.textContent = "Cancelling…";
    try {
      const response = await fetch(`/api/runs/${current.id}/cancel`, {
        method: "POST", headers: { "Accept": "application/json", "X-CSRF-Token": csrfToken() },
      });
      if (!response.ok) {
        const body = await response.json().catch(() => ({}));
        state.textContent = typeof body.detail === "string" ? body.detail : "It could not be cancelled.";
      }
    } catch (e) {
      state.textContent = "The server could not be reached to cancel it.";
    } finally {
      cancelButton.disabled = false;
    }
  }
  if (cancelButton) cancelButton.addEventListener("click", cancel);
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && current && !document.querySelector("dialog[open]")) cancel();
  });

  // After a reload: the latest grading as it ended, or followed again if it still runs.
  const lastNode = $("last-result");
  if (lastNode && canRun) {
    let last = null;
    try { last = JSON.parse(lastNode.textContent); } catch (e) { last = null; }
    if (last && last.status === "done") {
      panel.hidden = false;
      finish(last, { restored: true });
    } else if (last) {
      panel.hidden = false;
      busy(true);
      state.textContent = "Grading…";
      follow(last.id);
    }
  }

  runButton.addEventListener("click", () => start("run"));
  submitButton.addEventListener("click", () => start("submit"));
  resetButton.addEventListener("click", () => {
    editor.setValue(original);
    resetButton.disabled = true;
    editor.focus();
  });
  // Ctrl+Enter runs (the editor's own binding too), Ctrl+Shift+Enter submits.
  document.addEventListener("keydown", (e) => {
    if (!(e.ctrlKey || e.metaKey) || e.key !== "Enter") return;
    e.preventDefault();
    e.stopPropagation();
    start(e.shiftKey ? "submit" : "run");
  }, true);
})();

// Live code on item pages: every sample becomes an editor with Run, Cancel, Reset and a
// backend picker; output streams in over server-sent events. Program output is only ever
// inserted as text, never as HTML.
(function () {
  "use strict";
  const article = document.querySelector("article.item");
  if (!article || !window.BackpropEditor) return;
  const backends = (article.dataset.backends || "").split(",").filter(Boolean);
  if (!backends.length) return; // the server says why in #runner-hint
  const devices = Object.fromEntries(
    (article.dataset.devices || "").split(";").filter(Boolean).map((pair) => pair.split("=")));

  // Drafts: what a learner typed in an editor survives a reload, j/k and closing the tab.
  // A guest's stay in this browser (localStorage); an account's go to the server, so they
  // follow it to any device (and are not left in a shared browser).
  const item = article.dataset.item;
  const accountDrafts = article.dataset.drafts === "account";
  const serverDrafts = (() => {
    const node = document.getElementById("drafts");
    try { return node ? JSON.parse(node.textContent) : {}; } catch (e) { return {}; }
  })();
  const draftKey = (index) => `backprop-draft:${item}:${index}`;
  function storedDraft(index) {
    if (accountDrafts) return serverDrafts[index] ?? null;
    try { return localStorage.getItem(draftKey(index)); } catch (e) { return null; }
  }
  function draftSaver(index, original) {
    const url = `/items/${item}/drafts/${index}`;
    let pending = null; // the text not yet sent to the server
    let timer = null;
    function send(text, beacon) {
      const form = new FormData();
      form.append("csrf_token", csrfToken());
      if (text !== original) form.append("code", text);
      const target = text === original ? `${url}/discard` : url;
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
    return function save(text) {
      if (!accountDrafts) {
        try {
          if (text === original) localStorage.removeItem(draftKey(index));
          else localStorage.setItem(draftKey(index), text);
        } catch (e) { /* storage full or off: the draft lives as long as the page */ }
        return;
      }
      pending = text;
      if (timer) clearTimeout(timer);
      timer = setTimeout(() => flush(false), 800);
    };
  }

  // State-changing requests carry the page's CSRF token (see app/identity.py).
  function csrfToken() {
    const meta = document.querySelector('meta[name="csrf-token"]');
    return meta ? meta.content : "";
  }

  const NEEDS = {
    cuda: "needs a CUDA GPU" + (backends.includes("cuda") ? "" : ", which this server does not have"),
    network: "downloads weights or data, and runs here have no network",
    incomplete: "uses names it never defines",
    broken: "raises an error because of a bug in its code",
    long: "runs for minutes on a CPU",
  };
  const VERDICTS = {
    ok: "Finished", error: "The code raised an error", timeout: "Time limit reached",
    memory_limit: "Memory limit reached", output_limit: "Output limit reached",
    killed: "Stopped", rejected: "Not run", internal_error: "The sandbox failed",
  };

  function el(tag, props, children) {
    const node = document.createElement(tag);
    Object.assign(node, props || {});
    (children || []).forEach((child) => node.append(child));
    return node;
  }

  function variantsOf(index) {
    return Array.from(document.querySelectorAll(`figure.sample[data-variant-of="${index}"]`))
      .map((f) => f.dataset.sample);
  }

  function explain(figure) {
    const needs = (figure.dataset.requires || "").split(",").filter((r) => NEEDS[r]);
    if (figure.dataset.variantOf) {
      return `You are running a variant of sample ${figure.dataset.variantOf} made to run on this server; the note above it says what changed.`;
    }
    if (!needs.length) return "";
    const variants = variantsOf(figure.dataset.sample);
    const why = `This is the sample as printed: it ${needs.map((r) => NEEDS[r]).join(", and ")}.`;
    if (!variants.length) return why;
    const which = variants.length === 1
      ? `Sample ${variants[0]} below is a variant that runs`
      : `Samples ${variants.slice(0, -1).join(", ")} and ${variants[variants.length - 1]} below are variants that run`;
    return `${why} ${which} here; you can still run this one and see what happens.`;
  }

  function setUp(figure) {
    const pre = figure.querySelector("pre");
    const original = pre.textContent.replace(/\n$/, "");
    const index = figure.dataset.sample;
    const host = el("div", { className: "editor-host" });
    pre.replaceWith(host);
    let run = null; // {id, source}

    const runButton = el("button", { type: "button", className: "btn btn-primary btn-run", textContent: "Run" });
    runButton.title = "Run (Ctrl+Enter)";
    const cancelButton = el("button", { type: "button", className: "btn btn-cancel", textContent: "Cancel", disabled: true });
    const resetButton = el("button", { type: "button", className: "btn btn-reset", textContent: "Reset to original", disabled: true });
    resetButton.title = "Back to the sample as printed";
    const picker = el("select", { className: "backend-picker" });
    const pickerId = `backend-${index}`;
    picker.id = pickerId;
    [...backends, ...(backends.length > 1 ? ["auto"] : [])].forEach((name) => {
      picker.append(el("option", { value: name, textContent: name === "auto" ? "auto" : `${name.toUpperCase()}` }));
    });
    const pickerLabel = el("label", { className: "backend-label", htmlFor: pickerId, textContent: "on" });
    const state = el("span", { className: "run-state" });
    state.setAttribute("role", "status");
    // Ticks ten times a second: kept out of the status region, which announces changes.
    const clock = el("span", { className: "run-clock" });
    clock.setAttribute("aria-hidden", "true");
    const toolbar = el("div", { className: "run-toolbar" }, [runButton, cancelButton, resetButton, pickerLabel, picker, state, clock]);

    const note = explain(figure);
    const noteEl = el("p", { className: "run-note", textContent: note, hidden: !note });
    const stream = el("pre", { className: "run-stream" });
    stream.setAttribute("aria-label", `Output of sample ${index}`);
    const verdict = el("div", { className: "run-verdict" });
    const output = el("div", { className: "run-output", hidden: true }, [stream, verdict]);
    figure.append(toolbar, noteEl, output);

    const draft = storedDraft(index);
    const restored = typeof draft === "string" && draft !== original;
    const saveDraft = draftSaver(index, original);
    const draftNote = el("p", {
      className: "draft-note",
      textContent: restored
        ? `Your edited code is back (kept ${accountDrafts ? "with your account" : "in this browser"}). Reset returns to the sample as printed.`
        : "",
      hidden: !restored,
    });
    host.before(draftNote);
    const editor = window.BackpropEditor.create(host, {
      doc: restored ? draft : original,
      label: `Code of sample ${index}, editable`,
      onRun: () => start(),
      onChange: (text) => {
        resetButton.disabled = text === original;
        if (text === original) draftNote.hidden = true;
        saveDraft(text);
      },
    });
    resetButton.disabled = !restored;
    // The editable area is keyboard-focusable (contenteditable); saying so with tabindex lets
    // checkers see that its scrolling box can be reached from the keyboard.
    const content = host.querySelector(".cm-content");
    if (content && !content.hasAttribute("tabindex")) content.setAttribute("tabindex", "0");
    figure.backpropEditor = editor; // the Copy button copies the current code

    let ticking = null;
    let tick = null;
    function startClock(prefix, began = performance.now()) {
      stopClock();
      tick = () => { clock.textContent = `${prefix}${((performance.now() - began) / 1000).toFixed(1)} s`; };
      tick();
      ticking = setInterval(tick, 100);
    }
    function stopClock() {
      // One last reading: a run that ends between two ticks would otherwise show the last.
      if (tick) tick();
      if (ticking) clearInterval(ticking);
      ticking = null;
      tick = null;
    }

    function busy(on) {
      runButton.disabled = on;
      cancelButton.disabled = !on;
      figure.classList.toggle("is-running", on);
    }

    function append(text, kind) {
      stream.append(el("span", { className: kind, textContent: text }));
      stream.scrollTop = stream.scrollHeight;
    }

    function finish(result) {
      busy(false);
      stopClock();
      if (run && run.source) run.source.close();
      run = null;
      const title = VERDICTS[result.verdict] || result.verdict;
      const facts = [];
      if (result.exit_code !== null && result.exit_code !== undefined) facts.push(`exit code ${result.exit_code}`);
      if (result.wall_ms !== null && result.wall_ms !== undefined) facts.push(`${(result.wall_ms / 1000).toFixed(2)} s`);
      if (result.backend) facts.push(`${result.backend.toUpperCase()}${result.device ? " · " + result.device : ""}`);
      verdict.replaceChildren(
        el("span", { className: `verdict verdict-${result.verdict}`, textContent: title }),
        el("span", { className: "verdict-facts", textContent: facts.join(" · ") }),
      );
      if (result.detail) verdict.append(el("p", { className: "verdict-detail", textContent: result.detail }));
      state.textContent = `${title}.`;
      if (!stream.childNodes.length) append("(no output)", "quiet");
      if (result.verdict === "ok") refreshMeasurements();
    }

    // A lab's page keeps its measurements above the code: a run of the unedited lab has
    // just been recorded (before its result was sent), so fetch them again.
    function refreshMeasurements() {
      const section = document.querySelector(".lab-results");
      if (!section || !window.htmx) return;
      const url = `${window.location.pathname.replace(/\/$/, "")}/measurements`;
      htmx.ajax("GET", url, { target: ".lab-results", select: ".lab-results", swap: "outerHTML" });
    }

    function fail(message) {
      busy(false);
      stopClock();
      clock.textContent = "";
      run = null;
      verdict.replaceChildren(el("span", { className: "verdict verdict-rejected", textContent: "Not run" }),
        el("p", { className: "verdict-detail", textContent: message }));
      state.textContent = message;
    }

    async function start() {
      if (run) return;
      output.hidden = false;
      stream.replaceChildren();
      verdict.replaceChildren();
      busy(true);
      state.textContent = "Sending…";
      startClock("waiting ");
      let response;
      try {
        response = await fetch("/api/runs", {
          method: "POST",
          headers: { "Content-Type": "application/json", "Accept": "application/json", "X-CSRF-Token": csrfToken() },
          body: JSON.stringify({ code: editor.getValue(), backend: picker.value, item: article.dataset.item, sample: Number(index) }),
        });
      } catch (e) {
        fail("The server could not be reached. Check your connection and try again.");
        return;
      }
      const body = await response.json().catch(() => ({}));
      if (!response.ok) {
        const detail = typeof body.detail === "string" ? body.detail : "The request was refused.";
        // The server's sentence already says when to try again (Retry-After holds the same).
        fail(detail);
        return;
      }
      run = { id: body.id, source: new EventSource(`/api/runs/${body.id}/events`) };
      state.textContent = "Queued…";
      const source = run.source;
      source.addEventListener("queued", (e) => {
        const { position, estimate_seconds: estimate } = JSON.parse(e.data);
        const place = position === 1 ? "next in line" : `${position} in line`;
        const wait = estimate ? `, starts in about ${Math.ceil(estimate)} s` : "";
        state.textContent = `Waiting: ${place}${wait}…`;
      });
      let running = "Running…";
      let runBegan = performance.now();
      source.addEventListener("started", (e) => {
        const { backend, device } = JSON.parse(e.data);
        running = `Running on ${backend.toUpperCase()}${device ? " (" + device + ")" : ""}…`;
        state.textContent = running;
        runBegan = performance.now();
        startClock("", runBegan);
      });
      // A lab's first call compiles: timed apart from the run's limit, up to its allowance.
      // Before it starts, a lab the server is still compiling for itself waits for that.
      source.addEventListener("phase", (e) => {
        const { phase, allowance_seconds: allowance } = JSON.parse(e.data);
        if (phase === "warming") {
          state.textContent = "The server is compiling this lab for every learner; it runs from that as soon as it is done…";
          startClock("compiling, ");
        } else if (phase === "compiling") {
          state.textContent = `Compiling (the first call; compiling may take up to ${Math.round(allowance)} s beyond the run's limit)…`;
          startClock("compiling, ");
        } else {
          state.textContent = running;
          startClock("", runBegan);
        }
      });
      source.addEventListener("stdout", (e) => append(JSON.parse(e.data).data, "out"));
      source.addEventListener("stderr", (e) => append(JSON.parse(e.data).data, "err"));
      source.addEventListener("result", (e) => finish(JSON.parse(e.data)));
      // A stream that lived its longest ends with `end`: the browser reconnects by itself
      // and, sending the last event's id, resumes after it.
      let resuming = false;
      source.addEventListener("end", () => { resuming = true; });
      source.addEventListener("open", () => { resuming = false; });
      source.onerror = () => {
        if (!run || run.source !== source) return;
        if (resuming && source.readyState === EventSource.CONNECTING) return;
        source.close();
        // The stream dropped: the stored run still has the outcome.
        fetch(`/api/runs/${run.id}`).then((r) => r.json()).then((r) => {
          if (r.status === "done") finish(r); else fail("Lost contact with the run; reload to see how it ended.");
        }).catch(() => fail("Lost contact with the server."));
      };
    }

    runButton.addEventListener("click", start);
    cancelButton.addEventListener("click", () => {
      if (!run) return;
      state.textContent = "Cancelling…";
      fetch(`/api/runs/${run.id}/cancel`, { method: "POST", headers: { "X-CSRF-Token": csrfToken() } });
    });
    resetButton.addEventListener("click", () => {
      editor.setValue(original);
      resetButton.disabled = true;
      editor.focus();
    });
  }

  document.querySelectorAll("figure.sample").forEach(setUp);
})();

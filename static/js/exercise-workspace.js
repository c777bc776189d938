// An exercise's workspace: the problem pane's tabs (Statement, Hints, Solution, Submissions,
// and on a narrow screen Code, which shows the editor pane instead), the splitter between
// the two panes on a wide screen (dragged, or moved with the arrow keys; kept in this
// browser), and the Submissions tab: loaded when first opened and after each grading, each
// past submission's code loaded into the editor or compared with it.
(function () {
  "use strict";
  const workspace = document.getElementById("workspace");
  const article = document.querySelector("article.exercise");
  if (!workspace || !article) return;
  const tablist = workspace.querySelector('[role="tablist"]');
  const tabs = Array.from(tablist.querySelectorAll('[role="tab"]'));
  const wide = window.matchMedia("(min-width: 1200px)");
  const SPLIT_KEY = "backprop-workspace-split";

  function csrfToken() {
    const meta = document.querySelector('meta[name="csrf-token"]');
    return meta ? meta.content : "";
  }
  const visibleTabs = () => tabs.filter((tab) => tab.offsetParent !== null);
  const panelOf = (tab) => document.getElementById(tab.getAttribute("aria-controls"));

  function select(tab, { focus = false } = {}) {
    tabs.forEach((other) => {
      const on = other === tab;
      other.setAttribute("aria-selected", String(on));
      other.tabIndex = on ? 0 : -1;
      // Code shows the other pane: the problem pane keeps its panel for the way back.
      if (tab.id !== "tab-code" && other.id !== "tab-code") panelOf(other).hidden = !on;
    });
    workspace.dataset.view = tab.id === "tab-code" ? "code" : "problem";
    if (focus) tab.focus();
    tab.classList.remove("has-news");
    if (tab.id === "tab-submissions") loadSubmissions();
    if (tab.id === "tab-code" && article.backpropEditor) article.backpropEditor.focus();
  }

  tabs.forEach((tab) => tab.addEventListener("click", () => select(tab)));
  tablist.addEventListener("keydown", (e) => {
    const shown = visibleTabs();
    const at = shown.indexOf(document.activeElement);
    if (at < 0) return;
    const next = { ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: shown.length - 1 }[e.key];
    if (next === undefined) return;
    e.preventDefault();
    select(shown[(next + shown.length) % shown.length], { focus: true });
  });

  // #hints, #solution, #submissions (links from a coding round's end) open their tab.
  function fromHash() {
    const tab = document.getElementById(`tab-${location.hash.slice(1)}`);
    if (tab && tabs.includes(tab)) select(tab);
  }
  window.addEventListener("hashchange", fromHash);

  // The panes fill the window below whatever sits above them (the header, a round's bar),
  // and a narrow screen's sticky tabs sit under a sticky header.
  const header = document.querySelector(".site-header");
  function measure() {
    const sticky = header && getComputedStyle(header).position === "sticky";
    const headerHeight = sticky ? header.offsetHeight : 0;
    document.documentElement.style.setProperty("--header-h", `${headerHeight}px`);
    const top = workspace.getBoundingClientRect().top + window.scrollY;
    document.documentElement.style.setProperty("--workspace-top", `${Math.round(top)}px`);
  }
  measure();
  window.addEventListener("resize", measure);
  // Widened past the breakpoint with Code chosen: the editor is beside the statement now.
  wide.addEventListener("change", () => {
    if (wide.matches && workspace.dataset.view === "code") select(tabs[0]);
  });

  // The splitter: the problem pane's share of the width, 25% to 75%.
  const splitter = document.getElementById("pane-splitter");
  if (splitter) {
    splitter.hidden = false;
    const apply = (percent) => {
      const value = Math.min(75, Math.max(25, Math.round(percent)));
      workspace.style.setProperty("--split", `${value}%`);
      splitter.setAttribute("aria-valuenow", String(value));
      splitter.setAttribute("aria-valuetext", `Statement ${value}% of the width`);
      return value;
    };
    const save = (value) => { try { localStorage.setItem(SPLIT_KEY, String(value)); } catch (e) { /* private mode */ } };
    let saved = null;
    try { saved = Number(localStorage.getItem(SPLIT_KEY)); } catch (e) { saved = null; }
    apply(saved || 45);
    splitter.addEventListener("pointerdown", (e) => {
      e.preventDefault();
      splitter.setPointerCapture(e.pointerId);
      workspace.classList.add("is-resizing");
      const box = workspace.getBoundingClientRect();
      const move = (event) => apply(((event.clientX - box.left) / box.width) * 100);
      const up = () => {
        splitter.removeEventListener("pointermove", move);
        workspace.classList.remove("is-resizing");
        save(Number(splitter.getAttribute("aria-valuenow")));
      };
      splitter.addEventListener("pointermove", move);
      splitter.addEventListener("pointerup", up, { once: true });
      splitter.addEventListener("pointercancel", up, { once: true });
    });
    splitter.addEventListener("keydown", (e) => {
      const now = Number(splitter.getAttribute("aria-valuenow"));
      const next = { ArrowLeft: now - 5, ArrowRight: now + 5, Home: 25, End: 75 }[e.key];
      if (next === undefined) return;
      e.preventDefault();
      save(apply(next));
    });
  }

  // A hint answers the failing test: the results say so, with a way to it, and the Hints
  // tab wears a dot until it is opened.
  const hintsTab = document.getElementById("tab-hints");
  article.addEventListener("exercise:hints", (e) => {
    const verdictBox = document.getElementById("grading-verdict");
    const old = document.getElementById("hint-nudge");
    if (old) old.remove();
    if (!hintsTab || !verdictBox || !e.detail.answersFailure) return;
    if (hintsTab.getAttribute("aria-selected") !== "true") hintsTab.classList.add("has-news");
    const nudge = document.createElement("p");
    nudge.id = "hint-nudge";
    nudge.className = "hint-nudge";
    const go = document.createElement("button");
    go.type = "button";
    go.className = "link-button";
    go.textContent = "Open the Hints tab";
    go.addEventListener("click", () => select(hintsTab, { focus: true }));
    nudge.append(`Stuck? A hint answers the failing ${e.detail.category} test. `, go);
    verdictBox.append(nudge);
  });

  // The Submissions tab.
  const submissionsPanel = document.getElementById("panel-submissions");
  let loaded = false;
  async function loadSubmissions() {
    if (!submissionsPanel) return;
    loaded = true;
    const list = document.getElementById("submissions-list");
    try {
      const response = await fetch(submissionsPanel.dataset.url, { headers: { "Accept": "text/html" } });
      if (!response.ok) throw new Error(String(response.status));
      list.outerHTML = await response.text();
    } catch (e) {
      list.replaceChildren(Object.assign(document.createElement("p"), {
        className: "form-error", textContent: "Your submissions could not be loaded. Check your connection, then open the tab again.",
      }));
      loaded = false;
    }
  }
  // A new grading joins the list (read again only if it has been opened).
  article.addEventListener("exercise:graded", () => { if (loaded) loadSubmissions(); });

  if (submissionsPanel) {
    submissionsPanel.addEventListener("click", async (e) => {
      const row = e.target.closest(".submission-row");
      if (!row) return;
      const editor = article.backpropEditor;
      const code = row.querySelector(".submission-code").textContent;
      if (e.target.closest(".submission-load") && editor) {
        editor.setValue(code.replace(/\n$/, ""));
        row.querySelector(".submission-diff").textContent = "Loaded into the editor.";
        if (!wide.matches) select(document.getElementById("tab-code"));
      } else if (e.target.closest(".submission-compare") && editor) {
        const button = e.target.closest(".submission-compare");
        const box = row.querySelector(".submission-diff");
        const form = new FormData();
        form.append("csrf_token", csrfToken());
        form.append("code", editor.getValue());
        button.disabled = true;
        try {
          const response = await fetch(button.dataset.url, { method: "POST", body: form, headers: { "X-CSRF-Token": csrfToken() } });
          if (!response.ok) throw new Error(String(response.status));
          box.innerHTML = await response.text(); // the server's own fragment, code escaped there
        } catch (err) {
          box.textContent = "The comparison could not be made. Try again.";
        } finally {
          button.disabled = false;
        }
      }
    });
  }

  select(tabs[0]);
  fromHash();
})();

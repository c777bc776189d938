// Page behaviour that needs a script: theme toggle, copy buttons, keyboard shortcuts.
// Everything here is an enhancement; links and forms work without it.
(function () {
  "use strict";
  const root = document.documentElement;
  const THEME_KEY = "backprop-theme";

  function currentTheme() {
    const set = root.getAttribute("data-theme");
    if (set) return set;
    return window.matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
  }

  function labelToggle() {
    const button = document.getElementById("theme-toggle");
    if (!button) return;
    const next = currentTheme() === "dark" ? "light" : "dark";
    button.setAttribute("aria-label", "Switch to " + next + " theme");
    button.setAttribute("aria-pressed", String(currentTheme() === "dark"));
  }

  function toggleTheme() {
    const next = currentTheme() === "dark" ? "light" : "dark";
    root.setAttribute("data-theme", next);
    try { localStorage.setItem(THEME_KEY, next); } catch (e) { /* not remembered */ }
    labelToggle();
  }

  // Copy `text` to the clipboard; where the clipboard is refused (an insecure context, or
  // permissions), select `node`'s contents instead for Ctrl+C. "copied" or "selected".
  // Other pages' scripts use it too (window.BackpropCopy).
  async function copyText(text, node) {
    try {
      await navigator.clipboard.writeText(text);
      return "copied";
    } catch (e) {
      const range = document.createRange();
      range.selectNodeContents(node);
      const selection = window.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      return "selected";
    }
  }
  window.BackpropCopy = copyText;

  async function copySample(button) {
    const figure = document.getElementById(button.dataset.copy);
    if (!figure) return;
    // Once the runner has made the sample an editor, copy what the editor holds now.
    const editor = figure.backpropEditor;
    const code = figure.querySelector("pre code, .cm-content");
    const label = button.querySelector(".copy-label") || button;
    const how = await copyText(editor ? editor.getValue() : code.textContent, code);
    label.textContent = how === "copied" ? "Copied" : "Press Ctrl+C";
    setTimeout(() => { label.textContent = "Copy"; }, 1600);
  }

  function isTyping(target) {
    return target.closest("input, textarea, select, [contenteditable=true], dialog[open]");
  }

  function focusSearch() {
    const box = document.getElementById("q") || document.getElementById("site-search");
    if (box) { box.focus(); box.select(); }
  }

  // j/k: the next or previous question. On an item page that is the next page; on the
  // library's list it moves the focus down or up the results (Enter opens one).
  function go(attribute) {
    const article = document.querySelector("article.item");
    if (article) {
      const href = article.dataset[attribute];
      if (href) window.location.assign(href);
      return;
    }
    const links = Array.from(document.querySelectorAll("#results .item-link"));
    if (!links.length) return;
    const at = links.indexOf(document.activeElement);
    const next = at === -1
      ? (attribute === "next" ? 0 : links.length - 1)
      : Math.min(links.length - 1, Math.max(0, at + (attribute === "next" ? 1 : -1)));
    links[next].focus();
    links[next].scrollIntoView({ block: "nearest" });
  }

  // Single-key shortcuts can be switched off (WCAG 2.1.4), e.g. for speech input users.
  const SHORTCUTS_KEY = "backprop-shortcuts";
  function shortcutsOn() {
    try { return localStorage.getItem(SHORTCUTS_KEY) !== "off"; } catch (e) { return true; }
  }

  document.addEventListener("change", (event) => {
    if (event.target.id === "shortcuts-enabled") {
      try { localStorage.setItem(SHORTCUTS_KEY, event.target.checked ? "on" : "off"); } catch (e) { /* not kept */ }
    }
  });

  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (!shortcutsOn() && event.key !== "Escape") return;
    if (event.key === "Escape" && event.target.matches("input[type=search]")) {
      event.target.blur();
      return;
    }
    if (isTyping(event.target)) return;
    const actions = {
      "/": focusSearch,
      "j": () => go("next"),
      "k": () => go("prev"),
      "t": toggleTheme,
      "?": openShortcuts,
    };
    const action = actions[event.key];
    if (action) {
      event.preventDefault();
      action();
    }
  });

  document.addEventListener("click", (event) => {
    const copy = event.target.closest("[data-copy]");
    if (copy) copySample(copy);
    if (event.target.closest("#theme-toggle")) toggleTheme();
    if (event.target.closest("[data-open-shortcuts]")) openShortcuts();
  });

  // Phones: the library's filters fold into one control, so the results start near the top.
  const fold = document.querySelector(".filter-fold");
  if (fold && window.matchMedia("(max-width: 820px)").matches) fold.open = false;

  // Closing the dialog gives the focus back to what had it (not to the dialog's checkbox).
  let beforeShortcuts = null;
  function openShortcuts() {
    const box = document.getElementById("shortcuts-enabled");
    if (box) box.checked = shortcutsOn();
    const dialog = document.getElementById("shortcuts");
    beforeShortcuts = document.activeElement;
    dialog.addEventListener("close", () => {
      const back = beforeShortcuts && document.contains(beforeShortcuts) ? beforeShortcuts : null;
      if (back && back !== document.body) back.focus();
      else document.activeElement && document.activeElement.blur();
    }, { once: true });
    dialog.showModal();
  }

  // After htmx swaps the results, say what changed where screen readers listen.
  document.addEventListener("htmx:afterSwap", (event) => {
    const status = document.getElementById("results-status");
    const target = event.detail && event.detail.target;
    if (!status || !target || target.id !== "results") return;
    const summary = document.querySelector("#results .results-count, #results .empty-state h2");
    status.textContent = summary ? summary.textContent.replace(/\s+/g, " ").trim() : "";
  });
  // A swap replaces the button that was pressed: give focus back to its replacement (same
  // id), so keyboard and screen-reader users stay where they were.
  let focusedId = null;
  document.addEventListener("htmx:beforeSwap", () => {
    focusedId = document.activeElement && document.activeElement.id;
  });
  document.addEventListener("htmx:afterSettle", () => {
    if (!focusedId || (document.activeElement && document.activeElement !== document.body)) return;
    const again = document.getElementById(focusedId);
    if (again) again.focus();
    focusedId = null;
  });

  // A refused htmx request (a note too long, an expired form, a lost connection) swaps
  // nothing: say why in a live region instead of failing silently.
  function toast(text) {
    let box = document.getElementById("toast");
    if (!box) {
      box = document.createElement("div");
      box.id = "toast";
      box.className = "toast";
      box.setAttribute("role", "alert");
      document.body.appendChild(box);
    }
    box.textContent = text;
    box.hidden = false;
    clearTimeout(box.hideTimer);
    box.hideTimer = setTimeout(() => { box.hidden = true; }, 8000);
  }
  document.addEventListener("htmx:responseError", (event) => {
    const xhr = event.detail.xhr;
    const doc = new DOMParser().parseFromString(xhr.responseText || "", "text/html");
    const message = doc.querySelector(".error-page p:not(.error-code)");
    toast(message ? message.textContent.trim() : `The server answered ${xhr.status}; nothing was changed.`);
  });
  document.addEventListener("htmx:sendError", () => {
    toast("Could not reach the server; nothing was changed. Check your connection and try again.");
  });

  // Back restores a page rendered by the server: label the theme toggle again.
  document.addEventListener("htmx:historyRestore", labelToggle);

  labelToggle();
})();

// A failing visible test's case (sandbox/grading/cases.py): a table of its inputs, the
// learner's output, the expected output and the largest difference, and "Copy as code",
// which copies a snippet that rebuilds the case. static/js/exercise.js calls render(test)
// for each test it lists. Every value is inserted as text, never as HTML: the output is the
// learner's own and could hold anything.
window.BackpropCase = (function () {
  "use strict";

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  // One value's summary as a line of facts and its values (all of them, or a corner).
  function describe(summary) {
    const box = el("div", "case-value");
    if (!summary) return box;
    const facts = [];
    if (summary.kind === "tensor") {
      facts.push(`${summary.dtype} [${(summary.shape || []).join(", ")}]`);
      if (summary.corner) facts.push(`corner ${summary.corner}`);
      if (summary.min !== undefined) facts.push(`min ${summary.min}, max ${summary.max}`);
      if (summary.nan) facts.push(`${summary.nan} NaN`);
      if (summary.inf) facts.push(`${summary.inf} inf`);
      if (summary.true !== undefined) facts.push(`${summary.true} true`);
    } else if (summary.items) {
      facts.push(summary.text);
    }
    if (facts.length) box.append(el("span", "case-facts", facts.join(" · ")));
    if (summary.items) {
      const list = el("ul", "case-items");
      summary.items.forEach((item) => {
        const li = el("li");
        li.append(el("span", "case-key", `${item.key}: `), describe(item));
        list.append(li);
      });
      box.append(list);
    } else if (summary.text !== undefined) {
      // A long value scrolls in its box: focusable, so a keyboard can scroll it too.
      const values = el("code", "case-values", summary.text);
      values.tabIndex = 0;
      box.append(values);
    }
    return box;
  }

  function row(table, label, content) {
    const tr = el("tr");
    const th = el("th", "", label);
    th.scope = "row";
    const td = el("td");
    td.append(content);
    tr.append(th, td);
    table.append(tr);
  }

  function inputs(list) {
    const box = el("div", "case-inputs");
    (list || []).forEach((input) => {
      const line = el("div", "case-input");
      line.append(el("span", "case-key", `${input.name} = `), describe(input));
      box.append(line);
    });
    return box;
  }

  async function copy(text, area, status) {
    try {
      if (!navigator.clipboard || !window.isSecureContext) throw new Error("no clipboard");
      await navigator.clipboard.writeText(text);
      status.textContent = "Copied";
    } catch (err) {
      // No clipboard here (an insecure page, a refused permission): the code is shown,
      // selected, for the learner to copy with the keyboard.
      area.hidden = false;
      area.focus();
      area.select();
      status.textContent = "Selected: press Ctrl+C (⌘C) to copy";
    }
  }

  function render(test) {
    const c = test && !test.hidden ? test.case : null;
    if (!c || typeof c !== "object") return null;
    const box = el("div", "case");
    const table = el("table", "case-table");
    const caption = el("caption", "", `The failing case (seed ${c.seed})`);
    table.append(caption);
    row(table, "Input", inputs(c.inputs));
    if (c.output) row(table, "Your output", describe(c.output));
    if (c.expected) row(table, c.compared && c.compared !== "output" ? `Expected (${c.compared})` : "Expected", describe(c.expected));
    if (c.difference) {
      const d = c.difference;
      row(table, "Largest difference", el("span", "case-diff", `${d.abs} at ${d.where}: expected ${d.expected}, got ${d.got}`));
    }
    box.append(table);
    if (c.snippet) {
      const actions = el("div", "case-actions");
      const button = el("button", "btn btn-small case-copy", "Copy as code");
      button.type = "button";
      const status = el("span", "case-copy-status muted");
      status.setAttribute("role", "status");
      const area = el("textarea", "case-snippet");
      area.readOnly = true;
      area.rows = 8;
      area.value = c.snippet;
      area.hidden = true;
      area.setAttribute("aria-label", "The failing case as Python");
      button.addEventListener("click", () => copy(c.snippet, area, status));
      actions.append(button, status);
      box.append(actions, area);
    }
    return box;
  }

  return { render };
})();

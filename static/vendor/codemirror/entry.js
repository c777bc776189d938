// Backprop's CodeMirror 6 bundle: one global, window.BackpropEditor.
// Built into ../codemirror-editor.min.js by `npm ci && npm run build` (see README.md).
//
//   const handle = BackpropEditor.create(parentElement, { doc, label, onRun, onChange });
//   handle.getValue(); handle.setValue(text); handle.focus(); handle.destroy();

import { EditorState, Prec } from "@codemirror/state";
import {
  Decoration, EditorView, ViewPlugin, highlightActiveLine, highlightActiveLineGutter, keymap, lineNumbers,
} from "@codemirror/view";
import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import {
  HighlightStyle, bracketMatching, indentOnInput, indentUnit, syntaxHighlighting, syntaxTree,
} from "@codemirror/language";
import { pythonLanguage } from "@codemirror/lang-python";
import { styleTags, tags as t } from "@lezer/highlight";
import { StyleModule } from "style-mod";

// ---------------------------------------------------------------------------------------------
// CSP: the app sends `style-src 'self'` (no 'unsafe-inline', no nonce). style-mod, which mounts
// CodeMirror's generated CSS, uses a constructable stylesheet only for shadow roots; for a
// Document it inserts a <style> element, which that policy blocks (the editor then renders
// unstyled and Chromium logs "Refused to apply inline style"). Constructable stylesheets are
// CSSOM, which style-src does not govern, so mount the same rules, in the same order, into one
// adopted sheet per document instead. Shadow roots, and browsers without constructable
// stylesheets, keep style-mod's own behaviour.
const originalMount = StyleModule.mount;
const sheets = new WeakMap(); // Document -> { sheet, modules }

function constructableSheets(root) {
  try {
    return root.nodeType === 9 && "adoptedStyleSheets" in root &&
      typeof root.defaultView.CSSStyleSheet.prototype.replaceSync === "function";
  } catch (_) {
    return false;
  }
}

StyleModule.mount = function mount(root, modules, options) {
  if (!constructableSheets(root)) return originalMount.call(this, root, modules, options);
  let set = sheets.get(root);
  if (!set) {
    set = { sheet: new root.defaultView.CSSStyleSheet(), modules: [] };
    sheets.set(root, set);
  }
  // Same ordering rule as style-mod: later modules take precedence; a call that reorders
  // already-mounted modules moves them.
  let changed = false;
  let j = 0;
  for (const mod of Array.isArray(modules) ? modules : [modules]) {
    let index = set.modules.indexOf(mod);
    if (index > -1 && index < j) {
      set.modules.splice(index, 1);
      j--;
      index = -1;
      changed = true;
    }
    if (index === -1) {
      set.modules.splice(j++, 0, mod);
      changed = true;
    } else {
      j = index + 1;
    }
  }
  if (changed) set.sheet.replaceSync(set.modules.map((mod) => mod.getRules()).join("\n"));
  if (!root.adoptedStyleSheets.includes(set.sheet)) {
    root.adoptedStyleSheets = [set.sheet, ...root.adoptedStyleSheets];
  }
};

// ---------------------------------------------------------------------------------------------
// Colours come from the page's CSS variables (static/css/app.css), so light/dark need no JS.
const tint = (percent) => `color-mix(in srgb, var(--accent) ${percent}%, transparent)`;

const theme = EditorView.theme({
  "&": { color: "var(--code-text)", backgroundColor: "var(--code-bg)", fontSize: "0.86rem" },
  // Focus ring drawn by an overlay: an outline on the editor itself would be painted under the
  // sticky gutter, and the .sample box clips anything drawn outside.
  "&.cm-focused": { outline: "none" },
  "&.cm-focused::after": {
    content: '""', position: "absolute", inset: "0", zIndex: "300", pointerEvents: "none",
    border: "2px solid var(--focus)",
  },
  ".cm-scroller": { fontFamily: "var(--mono)", lineHeight: "1.6" },
  ".cm-content": { padding: "14px 0", caretColor: "var(--code-text)" },
  ".cm-line": { padding: "0 16px 0 12px" },
  ".cm-content ::selection": { backgroundColor: tint(28) },
  ".cm-activeLine": { backgroundColor: tint(7) },
  ".cm-gutters": {
    backgroundColor: "var(--surface-2)", color: "var(--muted)", borderRight: "1px solid var(--border)",
  },
  ".cm-lineNumbers .cm-gutterElement": { padding: "0 10px 0 12px" },
  ".cm-activeLineGutter": { backgroundColor: tint(12), color: "var(--code-text)" },
  "&.cm-focused .cm-matchingBracket": { backgroundColor: tint(22), outline: "1px solid var(--accent)" },
  "&.cm-focused .cm-nonmatchingBracket": { backgroundColor: "transparent", color: "var(--tok-operator)", textDecoration: "underline wavy" },
});

const builtinTag = t.standard(t.variableName);

const highlightStyle = HighlightStyle.define([
  { tag: [t.keyword, t.controlKeyword, t.definitionKeyword, t.moduleKeyword, t.operatorKeyword, t.modifier, t.bool, t.null],
    color: "var(--tok-keyword)" },
  { tag: [t.string, t.special(t.string), t.escape], color: "var(--tok-string)" },
  { tag: [t.comment, t.lineComment], color: "var(--tok-comment)", fontStyle: "italic" },
  { tag: t.number, color: "var(--tok-number)" },
  { tag: [t.function(t.definition(t.variableName)), t.definition(t.className)],
    color: "var(--tok-function)", fontWeight: "600" },
  { tag: [builtinTag, t.self], color: "var(--tok-builtin)" },
  { tag: [t.arithmeticOperator, t.compareOperator, t.bitwiseOperator, t.updateOperator, t.definitionOperator],
    color: "var(--tok-operator)" },
  { tag: t.meta, color: "var(--tok-decorator)" },
]);

// The Python grammar tags only the "@" of a decorator; colour the whole name, as Pygments does.
const python = pythonLanguage.configure({
  props: [styleTags({ "Decorator/VariableName Decorator/PropertyName": t.meta })],
});

// The grammar has no notion of builtins; mark the ones Pygments calls Name.Builtin(.Pseudo).
const BUILTINS = new Set((
  "abs aiter all anext any ascii bin bool breakpoint bytearray bytes callable chr classmethod compile " +
  "complex delattr dict dir divmod enumerate eval exec filter float format frozenset getattr globals " +
  "hasattr hash help hex id input int isinstance issubclass iter len list locals map max memoryview min " +
  "next object oct open ord pow print property range repr reversed round set setattr slice sorted " +
  "staticmethod str sum super tuple type vars zip __import__ self cls NotImplemented Ellipsis"
).split(" "));
const builtinMark = Decoration.mark({ class: highlightStyle.style([builtinTag]) || "" });

function builtinDecorations(view) {
  const ranges = [];
  for (const { from, to } of view.visibleRanges) {
    syntaxTree(view.state).iterate({
      from, to,
      enter(node) {
        if (node.name !== "VariableName") return;
        const parent = node.node.parent;
        if (parent && (parent.name === "FunctionDefinition" || parent.name === "ClassDefinition" || parent.name === "Decorator")) return;
        if (BUILTINS.has(view.state.doc.sliceString(node.from, node.to))) ranges.push(builtinMark.range(node.from, node.to));
      },
    });
  }
  return Decoration.set(ranges);
}

const builtins = ViewPlugin.fromClass(class {
  constructor(view) { this.decorations = builtinDecorations(view); }
  update(u) {
    if (u.docChanged || u.viewportChanged || syntaxTree(u.startState) !== syntaxTree(u.state)) {
      this.decorations = builtinDecorations(u.view);
    }
  }
}, { decorations: (plugin) => plugin.decorations });

// ---------------------------------------------------------------------------------------------
// Escape leaves the editor (Tab indents, so keyboard users need a way out): focus the next
// focusable element after it in document order, or just blur when there is none.
const FOCUSABLE = "a[href], area[href], button, input:not([type=hidden]), select, textarea, iframe, summary, " +
  "[contenteditable=''], [contenteditable='true'], [tabindex]";

function leaveEditor(view) {
  const root = view.dom;
  for (const el of root.ownerDocument.querySelectorAll(FOCUSABLE)) {
    if (root.contains(el) || !(root.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING)) continue;
    if (el.disabled || el.tabIndex < 0 || el.closest("[inert]") || !el.getClientRects().length) continue;
    el.focus();
    if (el.ownerDocument.activeElement === el) return true;
  }
  view.contentDOM.blur();
  return true;
}

function create(parent, { doc = "", label = "Code editor", onRun, onChange } = {}) {
  const run = () => {
    if (typeof onRun !== "function") return false;
    onRun();
    return true;
  };
  const view = new EditorView({
    parent,
    state: EditorState.create({
      doc,
      extensions: [
        // Highest precedence: ahead of defaultKeymap's Mod-Enter (insertBlankLine) and Escape.
        // Ctrl-Enter and Meta-Enter both bound, so Ctrl+Enter and Cmd+Enter work on every platform.
        Prec.highest(keymap.of([
          { key: "Ctrl-Enter", run },
          { key: "Meta-Enter", run },
          { key: "Escape", run: leaveEditor },
        ])),
        lineNumbers(),
        highlightActiveLineGutter(),
        highlightActiveLine(),
        history(),
        indentUnit.of("    "), // PEP 8; CodeMirror's default unit is two spaces
        indentOnInput(),
        bracketMatching(),
        python,
        syntaxHighlighting(highlightStyle),
        builtins,
        theme,
        keymap.of([...defaultKeymap, ...historyKeymap, indentWithTab]),
        EditorView.contentAttributes.of({ "aria-label": label }),
        EditorView.updateListener.of((update) => {
          if (update.docChanged && typeof onChange === "function") onChange(update.state.doc.toString());
        }),
      ],
    }),
  });
  return {
    getValue: () => view.state.doc.toString(),
    setValue(text) {
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: String(text ?? "") } });
    },
    focus: () => view.focus(),
    destroy: () => view.destroy(),
  };
}

window.BackpropEditor = { create };

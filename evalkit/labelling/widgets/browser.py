"""The little the browser must do that ipywidgets cannot: style, keys, selection, scrolling.

ipywidgets has no key events, no text selection and no way to scroll an
element, so the notebook displays :data:`SCRIPT` once (a plain Javascript
output, which JupyterLab runs with no extension to build). It holds no logic
of its own; it only forwards to the Python side through hidden text widgets:

* a key pressed while the focus is inside a labelling app (``.evk-app``), not in
  a text box, and listed in the app's key map, goes to the app's key channel
  (``.evk-keys``) instead of JupyterLab's own shortcuts. ipywidgets sends only
  the latest value of a widget while a message is in flight, so the channel
  holds the last :data:`KEY_WINDOW` keys, each numbered (``<page>:<n>:<key>``,
  joined by :data:`EVENT_SEPARATOR`), and the Python side acts on those it has
  not seen: keys typed fast are never lost;
* text selected with the mouse in a document (``.evk-doc-scroll``) goes to the
  selection channel (``.evk-selection``) with the document's name;
* a document scrolls to the element marked ``evk-jump`` whenever its
  ``data-jump`` counter changes.

The Python side (:meth:`LabellingApp.press`, ``select``) is what tests drive.
"""

from __future__ import annotations

__all__ = [
    "EVENT_SEPARATOR",
    "FIELD_SEPARATOR",
    "KEY_WINDOW",
    "SCRIPT",
    "STYLE",
    "TOKEN_SEPARATOR",
    "new_keys",
]

# What the script writes into a channel: "<value>\u241e<counter>", so that the same key
# pressed twice still changes the widget's value; a selection is "<source>\u241f<text>".
TOKEN_SEPARATOR = "\u241e"
FIELD_SEPARATOR = "\u241f"
EVENT_SEPARATOR = "\u241d"
KEY_WINDOW = 64


def new_keys(value: str, seen: tuple[str, int]) -> tuple[list[str], tuple[str, int]]:
    """The keys in a key channel's ``value`` not yet acted on, and the new ``seen`` mark.

    ``seen`` is ``(page, number)`` of the last key acted on; a new page (the browser
    reloaded) starts its numbers again.
    """
    keys: list[str] = []
    page, last = seen
    for event in value.split(EVENT_SEPARATOR):
        parts = event.split(":", 2)
        if len(parts) != 3 or not parts[1].isdigit():
            continue
        number = int(parts[1])
        if parts[0] != page:
            page, last = parts[0], 0
        if number > last:
            keys.append(parts[2])
            last = number
    return keys, (page, last)


STYLE = """
<style>
.evk-app { outline: none; }
.evk-app:focus-within .evk-focus-hint { color: #2b8a3e; }
.evk-hidden { display: none !important; }
.evk-doc-scroll { border: 1px solid #ced4da; background: #fff; }
.evk-doc { position: relative; padding: 4px 8px 4px 3.8em; font-size: 13px; line-height: 1.45;
  color: #212529; }
.evk-doc [data-line]::before { content: attr(data-line); position: absolute; left: 0;
  width: 3.1em; text-align: right; color: #adb5bd; font: 11px monospace; user-select: none; }
.evk-doc pre.evk-code { background: #f8f9fa; padding: 4px; }
.evk-doc pre.evk-code > code { white-space: normal; }
.evk-doc pre.evk-code .evk-line { display: block; white-space: pre-wrap;
  overflow-wrap: anywhere; }
/* A table as narrow as its words allow; one wider than the pane scrolls in itself. */
.evk-doc table { border-collapse: collapse; font-size: 12px; display: block; max-width: 100%;
  overflow-x: auto; }
.evk-doc td, .evk-doc th { border: 1px solid #dee2e6; padding: 2px 4px; }
.evk-doc .evk-hl-quote { background: #fff3bf; }
.evk-doc .evk-hl-penalty { background: #ffe3e3; }
.evk-doc .evk-hl-side0 { background: #d0ebff; }
.evk-doc .evk-hl-side1 { background: #d3f9d8; }
.evk-doc .evk-hl-side2 { background: #f3d9fa; }
.evk-doc .evk-hl-side3 { background: #ffe8cc; }
.evk-doc .evk-hl-current { outline: 2px solid #f08c00; }
.evk-doc mark.evk-match { background: #ffec99; padding: 0; }
.evk-doc mark.evk-match.evk-jump { background: #ff922b; }
/* A long word wraps at the pane's edge (its content may be narrower than its longest word). */
.evk-doc-scroll > .widget-html-content { min-width: 0; }
.evk-doc { overflow-wrap: break-word; }
.evk-doc h1 { font-size: 1.5em; } .evk-doc h2 { font-size: 1.3em; }
.evk-doc code { white-space: pre-wrap; overflow-wrap: anywhere; }
.evk-criteria { line-height: 1.4; }
.evk-criteria h3 { margin: 4px 0; }
.evk-criteria table { border-collapse: collapse; font-size: 13px; }
.evk-criteria th { text-align: left; vertical-align: top; padding: 1px 12px 1px 0;
  white-space: nowrap; }
.evk-criteria td { padding: 1px 0; overflow-wrap: anywhere; }
.evk-reason { font-size: 12px; color: #495057; line-height: 1.35; }
.evk-ok, .evk-reason.evk-ok { color: #2b8a3e; }
.evk-bad, .evk-reason.evk-bad { color: #c92a2a; }
.evk-side { border: 2px solid #dee2e6; padding: 4px; margin: 2px; }
.evk-side .widget-html-content { line-height: 1.35; }
.evk-side.evk-taken { border-color: #2b8a3e; background: #ebfbee; }
.evk-reason.evk-took { color: #2b8a3e; font-weight: bold; font-size: 13px; }
.evk-reason.evk-edited { color: #1864ab; font-weight: bold; font-size: 13px; }
.evk-differs { background: #ffe3e3; font-weight: bold; }
/* Every button shows its whole label: as wide as its label needs, never squeezed; a quote's
   button wraps its text instead. */
.evk-app .jupyter-widgets.widget-button { width: auto; flex-shrink: 0; max-width: 100%;
  padding: 0 12px; }
.evk-app .jupyter-widgets.widget-button.evk-quote { flex-shrink: 1; white-space: normal;
  height: auto; min-height: var(--jp-widgets-inline-height); text-align: left;
  line-height: 1.3; padding: 4px 8px; }
/* The chosen 0 or 1: dark blue, white and bold, beside a light grey one. */
.evk-app .widget-toggle-buttons .widget-toggle-button.mod-active { background: #1864ab;
  color: #fff; font-weight: 700; box-shadow: none; }
/* The documents' column stays in view beside the toggles while the page scrolls: sticky,
   which needs every box from it up to the notebook's scroller to let it overflow (and then
   to shrink with the window, as a scrolling box does by itself). */
.evk-documents { position: sticky; top: 0; align-self: flex-start; z-index: 1; }
.jp-OutputArea:has(.evk-documents), .jp-OutputArea-child:has(.evk-documents),
.jp-OutputArea-output:has(.evk-documents), .evk-app .widget-box:has(.evk-documents),
.evk-app { overflow: visible; min-width: 0; }
</style>
"""

SCRIPT = r"""
(function () {
  if (window.__evalkitLabelling) { return; }
  window.__evalkitLabelling = true;
  let counter = 0;
  const TOKEN = "\u241e", FIELD = "\u241f", EVENTS = "\u241d", WINDOW = 64;
  const page = Math.random().toString(36).slice(2, 10);
  function editable(el) {
    if (!el || !el.tagName) { return false; }
    if (el.isContentEditable || ["TEXTAREA", "SELECT"].includes(el.tagName)) { return true; }
    return el.tagName === "INPUT" && !["checkbox", "button", "radio"].includes(el.type);
  }
  function write(app, channel, value) {
    const input = app.querySelector("." + channel + " input, ." + channel + " textarea");
    if (!input) { return; }
    input.value = value;
    input.dispatchEvent(new Event("input", { bubbles: true }));
    input.dispatchEvent(new Event("change", { bubbles: true }));
  }
  function send(app, channel, value) {
    counter += 1;
    write(app, channel, value + TOKEN + counter);
  }
  window.addEventListener("keydown", function (event) {
    const target = event.target;
    const app = target && target.closest ? target.closest(".evk-app") : null;
    if (!app || editable(target) || event.ctrlKey || event.metaKey || event.altKey) { return; }
    const map = app.querySelector(".evk-keymap [data-keys]");
    const keys = map ? map.getAttribute("data-keys").split(" ") : [];
    if (!keys.includes(event.key)) { return; }
    event.preventDefault();
    event.stopImmediatePropagation();
    counter += 1;
    const queue = (app.__evkKeys = app.__evkKeys || []);
    queue.push(page + ":" + counter + ":" + event.key);
    if (queue.length > WINDOW) { queue.splice(0, queue.length - WINDOW); }
    write(app, "evk-keys", queue.join(EVENTS));
  }, true);
  document.addEventListener("mouseup", function (event) {
    const target = event.target;
    const scroller = target && target.closest ? target.closest(".evk-doc-scroll") : null;
    if (!scroller) { return; }
    const text = String(window.getSelection ? window.getSelection() : "");
    if (text.trim().length < 3) { return; }
    const source = scroller.classList.contains("evk-source-plan") ? "plan" : "report";
    const app = scroller.closest(".evk-app");
    if (app) { send(app, "evk-selection", source + FIELD + text); }
  });
  setInterval(function () {
    document.querySelectorAll(".evk-app:not([tabindex])").forEach(function (app) {
      app.tabIndex = 0;
      app.setAttribute("data-lm-suppress-shortcuts", "true");
    });
    document.querySelectorAll(".evk-doc-scroll").forEach(function (scroller) {
      const target = scroller.querySelector(".evk-jump");
      if (!target || scroller.offsetParent === null) { return; }
      const token = target.getAttribute("data-jump") || "";
      if (scroller.__evkJump === token) { return; }
      scroller.__evkJump = token;
      const offset = target.getBoundingClientRect().top - scroller.getBoundingClientRect().top;
      scroller.scrollTop += offset - scroller.clientHeight / 3;
      scroller.setAttribute("data-jumped", token);
    });
  }, 200);
})();
"""

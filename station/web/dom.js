// Small DOM helpers: every text goes in through textContent, never as HTML.

export const $ = (id) => document.getElementById(id);

/** An element with attributes and children (strings become text nodes). */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === false || v == null) continue;
    if (k === "class") el.className = v;
    else if (k === "text") el.textContent = v;
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children) if (c != null) el.append(c);
  return el;
}

const SVG = "http://www.w3.org/2000/svg";

/** An SVG element with attributes and children. */
export function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) if (v != null) el.setAttribute(k, String(v));
  for (const c of children) if (c != null) el.append(c);
  return el;
}

/** Replace an element's children in one go (one layout, not one per child). */
export function fill(el, children) {
  el.replaceChildren(...children);
}

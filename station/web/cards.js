// Card faces: rank and suit symbol, red or black, and the card's words for screen readers.

import { h } from "./dom.js";
import { rankText, SUITS } from "./format.js";

const RANKS = { A: "ace", T: "10", J: "jack", Q: "queen", K: "king" };

/** The face of a card code; null or "?" for an unreadable card. */
export function face(code, role = "") {
  if (!code || code.length !== 2 || !(code[1] in SUITS)) {
    return h("span", { class: "card unknown", role: "img", "aria-label": "unreadable card" }, "?");
  }
  const [sym, suitName] = SUITS[code[1]];
  const red = code[1] === "H" || code[1] === "D";
  return h("span", { class: `card${red ? " red" : ""}`, role: "img", "data-card": code,
                     "data-role": role || null,
                     "aria-label": `${RANKS[code[0]] || code[0]} of ${suitName}` },
           h("span", { class: "rank", text: rankText(code) }), h("span", { class: "suit", text: sym }));
}

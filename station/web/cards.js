// Card faces: rank and suit symbol, red or black, and the card's words for screen readers.

import { h } from "./dom.js";

const SUITS = { S: ["♠", "spades"], H: ["♥", "hearts"], D: ["♦", "diamonds"], C: ["♣", "clubs"] };
const RANKS = { A: "ace", T: "10", J: "jack", Q: "queen", K: "king" };
const POINTS = { A: 1, T: 0, J: 0, Q: 0, K: 0 };

/** Baccarat points of a card code ("7H" -> 7, "KD" -> 0). */
export function points(code) {
  const r = code[0];
  return r in POINTS ? POINTS[r] : Number(r);
}

/** A hand's total: the sum of its points, mod 10. */
export function total(codes) {
  return codes.reduce((sum, c) => sum + points(c), 0) % 10;
}

/** The face of a card code; null or "?" for an unreadable card. */
export function face(code, role = "") {
  if (!code || code.length !== 2 || !(code[1] in SUITS)) {
    return h("span", { class: "card unknown", role: "img", "aria-label": "unreadable card" }, "?");
  }
  const [sym, suitName] = SUITS[code[1]];
  const rank = code[0] === "T" ? "10" : code[0];
  const red = code[1] === "H" || code[1] === "D";
  return h("span", { class: `card${red ? " red" : ""}`, role: "img", "data-card": code,
                     "data-role": role || null,
                     "aria-label": `${RANKS[code[0]] || code[0]} of ${suitName}` },
           h("span", { class: "rank", text: rank }), h("span", { class: "suit", text: sym }));
}

/** Short text of a card code, e.g. "10♥". */
export function label(code) {
  if (!code) return "unreadable";
  const s = SUITS[code[1]];
  return (code[0] === "T" ? "10" : code[0]) + (s ? s[0] : code[1]);
}

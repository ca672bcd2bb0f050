// Card faces: rank and suit symbol, red or black, and the card's words for screen readers.

import { h } from "./dom.js";
import { rankText, SUITS, suitName } from "./format.js";
import { t } from "./i18n.js";

/** A rank in words for a screen reader ("ace", "as", "A"); a number stays a number. */
function rankWords(rank) {
  return rank === "T" ? "10" : "AJQK".includes(rank) ? t(`rank.${rank}`) : rank;
}

/** The face of a card code; null or "?" for an unreadable card. */
export function face(code, role = "") {
  if (!code || code.length !== 2 || !(code[1] in SUITS)) {
    return h("span", { class: "card unknown", role: "img", "aria-label": t("card.unreadable_card") }, "?");
  }
  const sym = SUITS[code[1]];
  const red = code[1] === "H" || code[1] === "D";
  return h("span", { class: `card${red ? " red" : ""}`, role: "img", "data-card": code,
                     "data-role": role || null,
                     "aria-label": t("card.of", { rank: rankWords(code[0]), suit: suitName(code[1]) }) },
           h("span", { class: "rank", text: rankText(code) }), h("span", { class: "suit", text: sym }));
}

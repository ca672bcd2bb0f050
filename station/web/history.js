// The shoe's history: every complete round, newest first, from /api/history. Until a new
// shoe has its first result, the shoe before it stays on show, marked as the previous one.

import { $, fill, h } from "./dom.js";
import { label, plural, roundFlags } from "./format.js";

/** The shoe the history and the roads show: this one, or while it has no round yet the
 * previous one (`previous` true). */
export function shownShoe(hist) {
  if (!hist.rounds.length && hist.previous) return { ...hist.previous, previous: true };
  return { shoe: hist.shoe, rounds: hist.rounds, voided: hist.voided, roads: hist.roads, previous: false };
}

function render({ history: hist }) {
  if (!hist) return;
  const shown = shownShoe(hist);
  const voided = shown.voided.length ? `, voided: ${shown.voided.join(", ")}` : "";
  const about = `shoe #${shown.shoe}, ${plural(shown.rounds.length, "round")}${voided}`;
  $("history-shoe").textContent = !hist.shoe ? ""
    : shown.previous ? `shoe #${hist.shoe}: no round yet · previous ${about} (finished)` : about;
  $("history").classList.toggle("previous-shoe", shown.previous);
  const rows = shown.rounds.slice().reverse().map((r) => h("tr", { class: r.winner, "data-round": r.round },
    h("td", { text: String(r.round) }),
    h("td", { class: "cardtext", text: r.player.map(label).join(" ") }),
    h("td", { class: "cardtext", text: r.banker.map(label).join(" ") }),
    h("td", { class: "num", text: `${r.player_total} – ${r.banker_total}` }),
    h("td", { class: "winner", text: r.winner }),
    h("td", { text: roundFlags(r, true).join(", ") })));
  fill($("history-body"), rows);
}

export function mountHistory(store) {
  store.subscribe(["history"], render);
}

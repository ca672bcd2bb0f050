// The shoe's history: every complete round, newest first, from /api/history.

import { $, fill, h } from "./dom.js";
import { label, roundFlags } from "./format.js";

function render({ history: hist }) {
  if (!hist) return;
  $("history-shoe").textContent = hist.shoe ? `shoe #${hist.shoe}, ${hist.rounds.length} rounds${hist.voided.length ? `, voided: ${hist.voided.join(", ")}` : ""}` : "";
  const rows = hist.rounds.slice().reverse().map((r) => h("tr", { class: r.winner, "data-round": r.round },
    h("td", { text: String(r.round) }),
    h("td", { class: "cardtext", text: r.player.map(label).join(" ") }),
    h("td", { class: "cardtext", text: r.banker.map(label).join(" ") }),
    h("td", { text: `${r.player_total} – ${r.banker_total}` }),
    h("td", { class: "winner", text: r.winner }),
    h("td", { text: roundFlags(r, true).join(", ") })));
  fill($("history-body"), rows);
}

export function mountHistory(store) {
  store.subscribe(["history"], render);
}

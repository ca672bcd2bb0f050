// The odds of the next round from the cards left in the shoe: each bet's house edge and
// return, and an alert when a bet favours the player.

import { $, fill, h } from "./dom.js";
import { pct, spaced } from "./format.js";

function render({ odds: read }) {
  if (!read) return;
  if (read.error) {
    $("odds-note").textContent = read.error;
    return;
  }
  const { answer } = read;
  const o = answer.odds;
  $("odds-round").textContent = o ? `round ${o.next_round}${answer.betting_closed ? " (betting closed)" : ""} · ${o.cards_left} cards left` : "";
  $("odds-note").textContent = o ? `${answer.paytable} paytable · banker ${pct(o.outcomes.banker)}, player ${pct(o.outcomes.player)}, tie ${pct(o.outcomes.tie)}` : answer.reason || "";
  const advantage = o ? o.advantage : [];
  const alert = $("odds-alert");
  alert.hidden = !advantage.length;
  alert.textContent = advantage.length ? `ADVANTAGE: the player has the edge on ${advantage.map(spaced).join(", ")}` : "";
  const rows = o ? Object.entries(o.house_edge).map(([bet, edge]) => h("tr", {
    class: [o.advantage.includes(bet) && "advantage", o.closed.includes(bet) && "closed"].filter(Boolean).join(" ") || null },
    h("th", { scope: "row", text: spaced(bet) + (o.closed.includes(bet) ? " (closed)" : "") }),
    h("td", { text: pct(edge, 3) }), h("td", { text: pct(1 - edge, 3) }))) : [];
  fill($("odds-body"), rows);
}

export function mountOdds(store) {
  store.subscribe(["odds"], render);
}

// The odds of the next round from the cards left in the shoe: each bet's house edge and
// return, and an alert when a bet favours the player. Says so while they are worked out
// (the first answer takes seconds) and when they cannot be had.

import { $, fill, h } from "./dom.js";
import { gameTitle, pct, plural, spaced } from "./format.js";

/** What the odds were worked out over, in words that agree with the Cards field. While
 * betting is open they are the next round's from the shoe as it is now: "over the 306
 * cards not seen: 304 left in the shoe + 2 unreadable (…)", the same counts as Cards.
 * Once betting is closed they are the ones the round was bet at, and stay so while its
 * cards come out: said as such, without counts the next card would contradict. */
function unseenWords(o, cards, closed) {
  const n = plural(o.cards_left, "card");
  if (closed) return `the odds round ${o.next_round} was bet at, over the ${n} not seen when betting closed`;
  if (!cards) return `over ${n} not seen`;
  const parts = [[cards.left, "left in the shoe"], [cards.unreadable, "unreadable (out, never identified)"]];
  const shown = parts.filter(([k]) => k);
  if (parts.reduce((sum, [k]) => sum + k, 0) !== o.cards_left) return `over ${n} not seen`;
  if (shown.length === 1 && shown[0] === parts[0]) return `over the ${n} left in the shoe`;
  return `over the ${n} not seen: ${shown.map(([k, words]) => `${k} ${words}`).join(" + ")}`;
}

function render({ odds: read }) {
  const status = $("odds-status");
  status.classList.toggle("error", Boolean(read?.error));
  if (!read || (read.pending && !read.answer)) {
    status.textContent = "working out the odds…";
    return;
  }
  const { answer } = read;
  // A cercle game's table: the station offers no odds (its answer says why); the panel
  // says so rather than showing punto banco's figures.
  const notOffered = answer?.offered === false;
  $("odds").classList.toggle("not-offered", notOffered);
  if (read.error) {
    status.textContent = `The odds could not be worked out: ${read.error}. They are asked for again when a round opens or ends.`;
  } else if (notOffered) {
    status.textContent = `Odds are not offered for ${gameTitle(answer.game)}.`;
  } else {
    status.textContent = read.pending ? "working out the odds…" : "";
  }
  if (!answer) return;
  const o = answer.odds;
  $("odds-round").textContent = o ? `round ${o.next_round}${answer.betting_closed ? " (betting closed)" : ""}` : "";
  $("odds-note").textContent = o ? `${answer.paytable} paytable, ${unseenWords(o, answer.cards, answer.betting_closed)} · banker ${pct(o.outcomes.banker)}, player ${pct(o.outcomes.player)}, tie ${pct(o.outcomes.tie)}` : answer.reason || "";
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
  render(store.get());
}

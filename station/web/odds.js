// The odds of the next round from the cards left in the shoe: each bet's house edge and
// return, and an alert when a bet favours the player. Says so while they are worked out
// (the first answer takes seconds) and when they cannot be had.

import { $, fill, h } from "./dom.js";
import { betWords, gameTitle, pct } from "./format.js";
import { list, num, t } from "./i18n.js";

/** What the odds were worked out over, in words that agree with the Cards field. While
 * betting is open they are the next round's from the shoe as it is now: "over the 306
 * cards not seen: 304 left in the shoe + 2 unreadable (…)", the same counts as Cards.
 * Once betting is closed they are the ones the round was bet at, and stay so while its
 * cards come out: said as such, without counts the next card would contradict. */
function unseenWords(o, cards, closed) {
  const n = num(o.cards_left);
  if (closed) return t("dash.odds_over_closed", { n: o.next_round, cards: n });
  if (!cards || cards.left + cards.unreadable !== o.cards_left) return t("dash.odds_over", { cards: n });
  if (!cards.unreadable) return t("dash.odds_over_left", { cards: n });
  return t("dash.odds_over_split", { cards: n, left: num(cards.left), unreadable: num(cards.unreadable) });
}

/** Why there are no odds: a game without odds, no shoe in play, in the page's words; anything else (a shoe the odds cannot be worked out from) as the station
 * said it. */
function reasonWords(answer) {
  if (answer.offered === false) return t("dash.odds_not_offered_why", { game: gameTitle(answer.game) });
  if (answer.reason === "no shoe in play") return t("dash.no_shoe");
  return answer.reason || "";
}

function render({ odds: read }) {
  const status = $("odds-status");
  status.classList.toggle("error", Boolean(read?.error));
  if (!read || (read.pending && !read.answer)) {
    status.textContent = t("dash.odds_working");
    return;
  }
  const { answer } = read;
  // A cercle game's table: the station offers no odds (its answer says why); the panel
  // says so rather than showing punto banco's figures.
  const notOffered = answer?.offered === false;
  $("odds").classList.toggle("not-offered", notOffered);
  if (read.error) {
    status.textContent = t("dash.odds_failed", { error: read.error });
  } else if (notOffered) {
    status.textContent = t("dash.odds_not_offered", { game: gameTitle(answer.game) });
  } else {
    status.textContent = read.pending ? t("dash.odds_working") : "";
  }
  if (!answer) return;
  const o = answer.odds;
  $("odds-round").textContent = o ? t(answer.betting_closed ? "dash.odds_round_closed" : "dash.odds_round", { n: o.next_round }) : "";
  const paytable = t(`paytable.${answer.paytable}`);
  $("odds-note").textContent = o ? t("dash.odds_note", { paytable: paytable === `paytable.${answer.paytable}` ? answer.paytable : paytable, over: unseenWords(o, answer.cards, answer.betting_closed),
    b: pct(o.outcomes.banker), p: pct(o.outcomes.player), t: pct(o.outcomes.tie) }) : reasonWords(answer);
  const advantage = o ? o.advantage : [];
  const alert = $("odds-alert");
  alert.hidden = !advantage.length;
  alert.textContent = advantage.length ? t("dash.advantage", { bets: list(advantage.map(betWords)) }) : "";
  const rows = o ? Object.entries(o.house_edge).map(([bet, edge]) => h("tr", {
    class: [o.advantage.includes(bet) && "advantage", o.closed.includes(bet) && "closed"].filter(Boolean).join(" ") || null },
    h("th", { scope: "row", text: o.closed.includes(bet) ? t("dash.odds_closed", { bet: betWords(bet) }) : betWords(bet) }),
    h("td", { text: pct(edge, 3) }), h("td", { text: pct(1 - edge, 3) }))) : [];
  fill($("odds-body"), rows);
}

export function mountOdds(store) {
  store.subscribe(["odds"], render);
  render(store.get());
}

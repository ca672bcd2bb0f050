// The shoe's history: every complete round, newest first, from /api/history. Until a new
// shoe has its first result, the shoe before it stays on show, marked as the previous one.

import { $, fill, h } from "./dom.js";
import { handTitle, handWord, label, roundFlags, winnerName } from "./format.js";
import { count, list, t } from "./i18n.js";

/** The shoe the history and the roads show: this one, or while it has no round yet the
 * previous one (`previous` true). */
export function shownShoe(hist) {
  if (!hist.rounds.length && hist.previous) return { ...hist.previous, previous: true };
  return { shoe: hist.shoe, rounds: hist.rounds, voided: hist.voided, roads: hist.roads, previous: false };
}

function render({ history: hist }) {
  if (!hist) return;
  const shown = shownShoe(hist);
  const values = { n: shown.shoe, rounds: count(shown.rounds.length, "dash.n_rounds"), list: list(shown.voided, "unit") };
  const about = t(shown.voided.length ? "dash.history_about_voided" : "dash.history_about", values);
  $("history-shoe").textContent = !hist.shoe ? ""
    : shown.previous ? t("dash.history_previous", { n: hist.shoe, about }) : about;
  $("history").classList.toggle("previous-shoe", shown.previous);
  const game = hist.game || "punto_banco";
  drawHead(game);
  const rows = shown.rounds.slice().reverse().map((r) => (game === "baccarat_banque" ? banqueRow(r) : h("tr", { class: r.winner, "data-round": r.round },
    h("td", { text: String(r.round) }),
    h("td", { class: "cardtext", text: r.player.map(label).join(" ") }),
    h("td", { class: "cardtext", text: r.banker.map(label).join(" ") }),
    h("td", { class: "num", text: `${r.player_total} – ${r.banker_total}` }),
    h("td", { class: "winner", text: winnerName(r.winner, game) }),
    h("td", { text: list(roundFlags(r, true), "unit") }))));
  fill($("history-body"), rows);
}

/** The columns of the table's game: its hands, then totals and outcome(s). */
function drawHead(game) {
  const head = $("history-head");
  if (head.dataset.game === game) return;
  head.dataset.game = game;
  const hands = game === "baccarat_banque" ? ["tableau1", "tableau2", "banker"] : ["player", "banker"];
  const outcome = game === "baccarat_banque" ? [t("tableau1"), t("tableau2"), t("dash.h_naturals")] : [t("dash.h_winner"), t("dash.h_flags")];
  const names = [t("dash.h_round"), ...hands.map((hand) => handTitle(game, hand)), t("dash.h_totals"), ...outcome];
  fill(head, [h("tr", {}, ...names.map((n) => h("th", { scope: "col", text: n })))]);
}

/** A baccarat banque round: each tableau's and the banker's cards, the totals (tableau 1,
 * tableau 2, banker) and each tableau's outcome against the banker. */
function banqueRow(r) {
  return h("tr", { "data-round": r.round },
    h("td", { text: String(r.round) }),
    ...["tableau1", "tableau2", "banker"].map((hand) => h("td", { class: "cardtext", text: r[hand].map(label).join(" ") })),
    h("td", { class: "num", text: `${r.tableau1_total} · ${r.tableau2_total} – ${r.banker_total}` }),
    h("td", { class: `outcome ${r.tableau1_outcome}`, text: t(`outcome.${r.tableau1_outcome}`) }),
    h("td", { class: `outcome ${r.tableau2_outcome}`, text: t(`outcome.${r.tableau2_outcome}`) }),
    h("td", { text: list((r.naturals || []).map((hand) => handWord("baccarat_banque", hand)), "unit") }));
}

export function mountHistory(store) {
  store.subscribe(["history"], render);
}

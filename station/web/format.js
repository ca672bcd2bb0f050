// The page's words for what the station sends, in one place so every panel says a thing
// the same way: card labels, totals, times, percentages, outcomes, events and verdicts.

export const SUITS = { S: ["♠", "spades"], H: ["♥", "hearts"], D: ["♦", "diamonds"], C: ["♣", "clubs"] };
const POINTS = { A: 1, T: 0, J: 0, Q: 0, K: 0 };

/** The rank as printed on the card ("T" is "10"). */
export function rankText(code) {
  return code[0] === "T" ? "10" : code[0];
}

/** Baccarat points of a card code ("7H" -> 7, "KD" -> 0). */
export function points(code) {
  const r = code[0];
  return r in POINTS ? POINTS[r] : Number(r);
}

/** A hand's total: the sum of its points, mod 10. */
export function total(codes) {
  return codes.reduce((sum, c) => sum + points(c), 0) % 10;
}

/** Short text of a card code, e.g. "10♥"; "unreadable" for none. */
export function label(code) {
  if (!code) return "unreadable";
  const s = SUITS[code[1]];
  return rankText(code) + (s ? s[0] : code[1]);
}

/** Local time of a journal timestamp ("2026-01-02T03:04:05.123456Z"). */
export function clock(ts) {
  if (!ts) return "";
  const d = new Date(ts.replace(/(\.\d{3})\d*Z$/, "$1Z"));
  return Number.isNaN(d.getTime()) ? ts : d.toLocaleTimeString([], { hour12: false });
}

/** A count and its noun, singular for one: "1 round", "2 rounds", "1 card". */
export function plural(n, one, many = `${one}s`) {
  return `${n} ${n === 1 ? one : many}`;
}

/** The shoe's cards in words that add up: "112 out (2 unreadable), 304 left of 416". An
 * unreadable card is out of the shoe like any other, only never identified. */
export function cardsWords({ cards_out: out, unreadable, decks }) {
  const size = decks * 52;
  return `${out} out${unreadable ? ` (${unreadable} unreadable)` : ""}, ${Math.max(size - out, 0)} left of ${size}`;
}

/** Who acted, so that a supervisor can tell them apart: a token's name (source `api`)
 * stands alone; anything else gets a badge: `station`, a card `reader`, or the `demo bot`
 * (the demo's `sim` reader sending a dealer's or supervisor's event under a demo name,
 * which a person's token may also be called). */
export function actorOf({ source, actor, event }, rules) {
  if (source === "api") return { name: actor, badge: null };
  if (source === "reader") {
    const readerSends = event?.type === "notice" || rules?.events?.[event?.type]?.reader;
    return { name: actor, badge: readerSends ? "reader" : "demo bot" };
  }
  return { name: actor, badge: source };
}

/** `actorOf` as one line of text: "ana", "demo-supervisor (demo bot)". */
export function actorText(row, rules) {
  const { name, badge } = actorOf(row, rules);
  return badge && badge !== name ? `${name} (${badge})` : name;
}

export function pct(x, digits = 2) {
  return `${(x * 100).toFixed(digits)} %`;
}

/** A bet's or a road's code in words ("banker_pair" -> "banker pair"). */
export function spaced(code) {
  return code.replaceAll("_", " ");
}

/** The station's explanation of an error code ("ok" for none). */
export function explain(errors, code) {
  return code ? errors[code] || code : "ok";
}

/** The games' names and their hands' names as the page titles them (the station's hand
 * codes: `player`, `banker`, `tableau1`, `tableau2`; in chemin de fer the player is the
 * ponte). Words only: what each hand does comes from the state. */
export const GAME_TITLES = { punto_banco: "punto banco", chemin_de_fer: "chemin de fer", baccarat_banque: "baccarat banque" };
const HAND_TITLES = { player: "Player", banker: "Banker", tableau1: "Tableau 1", tableau2: "Tableau 2" };
const CHEMIN_HANDS = { player: "Ponte", banker: "Banker" };

export function gameTitle(game) {
  return GAME_TITLES[game] || spaced(game || "");
}

/** A hand's title at the table's game: "Player", "Ponte", "Tableau 1". */
export function handTitle(game, hand) {
  return (game === "chemin_de_fer" ? CHEMIN_HANDS[hand] : HAND_TITLES[hand]) || spaced(hand);
}

/** Whether a result is baccarat banque's (an outcome per tableau, not one winner). */
export function isBanque(r) {
  return Boolean(r && "tableau1_outcome" in r);
}

const OUTCOME_WORDS = { win: "wins", lose: "loses", tie: "ties" };

/** "Tableau 1 wins 9 to 7 · tableau 2 ties 7 to 7 · naturals: tableau 1": each tableau
 * against the banker, as the result says. */
export function banqueWords(r) {
  const sides = ["tableau1", "tableau2"].map((t, i) =>
    `${i ? "tableau" : "Tableau"} ${i + 1} ${OUTCOME_WORDS[r[`${t}_outcome`]] || r[`${t}_outcome`]} ${r[`${t}_total`]} to ${r.banker_total}`);
  const naturals = r.naturals?.length ? ` · ${r.naturals.length === 1 ? "natural" : "naturals"}: ${r.naturals.map((h) => handTitle("baccarat_banque", h).toLowerCase()).join(", ")}` : "";
  return `${sides.join(" · ")}${naturals}`;
}

/** A decision in words: "tableau 1: card", "banker: no card". */
export function decisionWords(decision, game) {
  if (!decision) return "";
  const who = decision.hand ? `${handTitle(game, decision.hand).toLowerCase()}: ` : "";
  return `${who}${decision.draw ? "card" : "no card"}`;
}

/** What an action did, for the last-action line: the event's words, and for a decision
 * (or a resume with one) which hand and what it decided. */
export function doneWords(done, event, game) {
  const decision = event?.type === "decision" ? event : event?.decision;
  return decision ? `${done} (${decisionWords(decision, game)})` : done;
}

/** The naturals and pairs of a round result, in words or (`short`) as P/B. */
export function roundFlags(r, short = false, game = "punto_banco") {
  const [p, b] = short ? ["P", "B"] : [handTitle(game, "player").toLowerCase(), "banker"];
  return [r.player_natural && `${p} natural`, r.banker_natural && `${b} natural`,
          r.player_pair && `${p} pair`, r.banker_pair && `${b} pair`].filter(Boolean);
}

/** "Player wins 9 to 7 · player natural", "Tie 6 to 6". */
export function winnerWords(r, game = "punto_banco") {
  if (isBanque(r)) return banqueWords(r);
  const pt = r.player_total;
  const bt = r.banker_total;
  if (r.winner === "tie") return `Tie ${pt} to ${bt}`;
  const flags = roundFlags(r, false, game);
  const score = r.winner === "player" ? `${pt} to ${bt}` : `${bt} to ${pt}`;
  return `${handTitle(game, r.winner)} wins ${score}${flags.length ? ` · ${flags.join(", ")}` : ""}`;
}

/** A result in a few words for the journal: "player 9–7", "tableau 1 win, tableau 2 tie". */
export function resultText(r) {
  if (isBanque(r)) return `tableau 1 ${r.tableau1_outcome}, tableau 2 ${r.tableau2_outcome}`;
  return `${r.winner} ${r.player_total}–${r.banker_total}`;
}

/** A journal event in words. */
export function describe(event) {
  const { type } = event;
  if (type === "notice") return `notice: ${event.message}`;
  if (type === "card") return `card ${event.card ? label(event.card) : "unreadable"}`;
  if (type === "decision") return `decision: ${decisionWords(event)}`;
  if (type === "resume" && (event.card || event.decision)) {
    const parts = [event.decision && decisionWords(event.decision), event.card && label(event.card)];
    return `resume with ${parts.filter(Boolean).join(", ")}`;
  }
  if (type === "fault") return `fault${event.detail ? `: ${event.detail}` : ""}`;
  return spaced(type);
}

/** A journal verdict in words: the error explained, or what the event did. */
export function verdictText(v, errors) {
  if (!v) return "";
  if (!v.ok) return `${v.error}: ${errors[v.error] || ""}`;
  const parts = [v.role, v.round != null && `round ${v.round}`, v.voided_round != null && `voided round ${v.voided_round}`,
                 v.result && resultText(v.result)];
  return parts.filter(Boolean).join(" · ") || "ok";
}

/** A dealer's or supervisor's action with who did it: "12:01:02 void round by ana (row 7)",
 * "… by demo-supervisor (demo bot) …", and the refusal explained if the table refused it. */
export function actionLine({ ts, done, card, verdict, seq, ...who }, rules) {
  const { errors } = rules;
  const refused = verdict && !verdict.ok ? ` → ${verdict.error}: ${explain(errors, verdict.error)}` : "";
  const when = ts ? `${clock(ts)} ` : "";
  const by = actorText({ source: "api", ...who }, rules);
  return { text: `${when}${done}${card ? ` ${label(card)}` : ""} by ${by}${refused} (row ${seq})`, bad: Boolean(refused) };
}

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

/** A journal timestamp ("2026-01-02T03:04:05.123456Z", or "+00:00") as a Date (a Date
 * stays itself); the microseconds are more than Date reads. */
function dateOf(ts) {
  return ts instanceof Date ? ts : new Date(ts.replace(/(\.\d{3})\d*(Z|[+-]\d{2}:\d{2})$/, "$1$2"));
}

/** The local time of a timestamp or Date on the 24-hour clock every page of the station
 * uses: "06:43:32" (never "6:43:32 AM"). */
export function clock(ts) {
  if (!ts) return "";
  const d = dateOf(ts);
  return Number.isNaN(d.getTime()) ? String(ts) : d.toLocaleTimeString([], { hourCycle: "h23" });
}

/** `clock`, with the date when it is not today's: "06:43:32", "Dec 2 06:43:32". */
export function moment(ts, now = new Date()) {
  if (!ts) return "";
  const d = dateOf(ts);
  if (Number.isNaN(d.getTime()) || d.toDateString() === now.toDateString()) return clock(ts);
  return `${d.toLocaleDateString([], { day: "numeric", month: "short" })} ${clock(d)}`;
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
 * stands alone; everything else carries a badge saying what sent it, the same on every
 * row: `station`, the card `reader`, or the `demo bot` (everything the demo's `sim` reader
 * sends, cards and a dealer's or supervisor's events alike, under names a person's token
 * may also have). A name that only repeats the badge ("reader", "station") is left out,
 * never the badge. `readerDriver` is the station's reader (`sim` for the demo). */
export function actorOf({ source, actor }, readerDriver) {
  if (source === "api") return { name: actor, badge: null };
  const badge = source === "reader" ? (readerDriver === "sim" ? "demo bot" : "reader") : source;
  return { name: actor === source || actor === badge ? null : actor, badge };
}

/** `actorOf` as one line of text: "ana", "demo-supervisor (demo bot)", "station". */
export function actorText(row, readerDriver) {
  const { name, badge } = actorOf(row, readerDriver);
  if (!badge) return name;
  return name ? `${name} (${badge})` : badge;
}

/** What the OS said, in words for the pit: "[Errno 2] could not open port /dev/ttyUSB0:
 * [Errno 2] No such file or directory: '/dev/ttyUSB0'" -> "not there (is it plugged in?)". */
const OS_WORDS = [
  [/no such file or directory|no such device/i, "not there (is it plugged in?)"],
  [/permission denied/i, "not allowed (the station's user may not use it)"],
  [/device or resource busy|resource busy/i, "in use by another program"],
  [/input\/output error/i, "not answering (a cable or adapter fault?)"],
];

/** A reader's problem without the operating system's codes: "cannot open the reader port
 * /dev/ttyUSB0: not there (is it plugged in?)"; text the station wrote itself stays. */
export function plainProblem(text) {
  if (!/\[Errno \d+\]/.test(text)) return text;
  const head = text.slice(0, text.search(/:\s*\[Errno \d+\]/));
  const last = text.split(/\[Errno \d+\]\s*/).pop().replace(/:\s*'[^']*'\s*$/, "");
  const known = OS_WORDS.find(([pattern]) => pattern.test(last));
  return `${head}: ${known ? known[1] : last.trim().toLowerCase()}`;
}

/** The reader's "…; retrying in 10 s" (or "reconnecting to it in", "reopening it in"). */
const RETRY = /;\s*(?:retrying|reconnecting to it|reopening it) in ([\d.]+) s$/;

/** The reader's state in words: "serial: connected"; when it is down, why (`plainProblem`)
 * and when the station tries again, counted down from `since` (ms, when the station said
 * it): the wait grows to its longest and then repeats, so the count starts over at 0. */
export function readerWords(reader, since, now) {
  if (reader.driver === "none") return "none configured";
  if (reader.connected) return `${reader.driver}: connected`;
  const detail = reader.detail || "";
  const retry = RETRY.exec(detail);
  const problem = plainProblem(retry ? detail.slice(0, retry.index) : detail);
  let next = "";
  if (retry) {
    const every = Number(retry[1]);
    const left = Math.max(1, Math.ceil(every - (((now - since) / 1000) % every)));
    next = ` · trying again in ${left} s`;
  }
  return `${reader.driver}: disconnected${problem ? ` (${problem})` : ""}${next}`;
}

/** Whether `readerWords` counts down (to draw it again every second). */
export function readerRetries(reader) {
  return Boolean(reader && !reader.connected && RETRY.test(reader.detail || ""));
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

/** Why a tableau's outcome is not what its points alone say: a natural (two cards, 8 or
 * 9) wins against a banker without one whatever the banker draws to ("Tableau 1 wins 9
 * to 9: its natural beats the banker's drawn 9"). Empty when the points say it. */
function banqueReason(r, tableau, outcome, total) {
  const banker = r.banker_total;
  const byPoints = total > banker ? "win" : total < banker ? "lose" : "tie";
  if (outcome === byPoints) return "";
  const naturals = r.naturals || [];
  if (outcome === "win" && naturals.includes(tableau)) return `: its natural beats the banker's drawn ${banker}`;
  if (outcome === "lose" && naturals.includes("banker")) return `: the banker's natural beats its drawn ${total}`;
  return "";
}

/** "Tableau 1 wins 9 to 7 · tableau 2 ties 7 to 7 · naturals: tableau 1": each tableau
 * against the banker, as the result says, with the reason where the points do not say
 * it. */
export function banqueWords(r) {
  const sides = ["tableau1", "tableau2"].map((t, i) => {
    const outcome = r[`${t}_outcome`];
    const total = r[`${t}_total`];
    return `${i ? "tableau" : "Tableau"} ${i + 1} ${OUTCOME_WORDS[outcome] || outcome} ${total} to ${r.banker_total}${banqueReason(r, t, outcome, total)}`;
  });
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

/** What an accepted event that placed no card and opened no round did, where "ok" would
 * hide it: a reader fault or a restart with no shoe in play suspends nothing. */
const QUIET = {
  fault: "recorded: no shoe in play, nothing to suspend",
  restart: "no shoe in play: nothing to check",
};

/** A journal verdict in words: the error explained, or what the event did. */
export function verdictText(v, errors, event) {
  if (!v) return "";
  if (!v.ok) return `${v.error}: ${errors[v.error] || ""}`;
  const parts = [v.role, v.round != null && `round ${v.round}`, v.voided_round != null && `voided round ${v.voided_round}`,
                 v.result && resultText(v.result)];
  return parts.filter(Boolean).join(" · ") || QUIET[event?.type] || "ok";
}

/** A dealer's or supervisor's action with who did it: "12:01:02 void round by ana (row 7)",
 * "… by demo-supervisor (demo bot) …", and the refusal explained if the table refused it.
 * `readerDriver` as for `actorOf`. */
export function actionLine({ ts, done, card, verdict, seq, ...who }, rules, readerDriver) {
  const { errors } = rules;
  const refused = verdict && !verdict.ok ? ` → ${verdict.error}: ${explain(errors, verdict.error)}` : "";
  const when = ts ? `${clock(ts)} ` : "";
  const by = actorText({ source: "api", ...who }, readerDriver);
  return { text: `${when}${done}${card ? ` ${label(card)}` : ""} by ${by}${refused} (row ${seq})`, bad: Boolean(refused) };
}

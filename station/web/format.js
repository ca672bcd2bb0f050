// The page's words for what the station sends, in one place so every panel says a thing
// the same way: card labels, totals, times, percentages, outcomes, events and verdicts.
// The station sends codes (a verdict's, a suspension's, an event's type, what is due);
// the words are the catalogue's, in the page's language (i18n.js), and numbers, times and
// dates are the browser's Intl, the locale's way.

import { count, dayOf, list, locale, num, percent, t, timeOf } from "./i18n.js";

export const SUITS = { S: "♠", H: "♥", D: "♦", C: "♣" };
const POINTS = { A: 1, T: 0, J: 0, Q: 0, K: 0 };

/** The rank as printed on the card ("T" is "10"). */
export function rankText(code) {
  return code[0] === "T" ? "10" : code[0];
}

/** A suit's name in words ("hearts", "cœur", "紅心"). */
export function suitName(suit) {
  return t(`suit.${suit}`);
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
  if (!code) return t("card.unreadable");
  const s = SUITS[code[1]];
  return rankText(code) + (s || code[1]);
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
  return Number.isNaN(d.getTime()) ? String(ts) : timeOf(d);
}

/** `clock`, with the date when it is not today's: "06:43:32", "2 Dec 06:43:32". */
export function moment(ts, now = new Date()) {
  if (!ts) return "";
  const d = dateOf(ts);
  if (Number.isNaN(d.getTime()) || d.toDateString() === now.toDateString()) return clock(ts);
  return `${dayOf(d)} ${clock(d)}`;
}

/** A number the locale's way (re-exported for the panels). */
export { num };

/** The shoe's cards in words that add up: "112 out (2 unreadable), 304 left of 416". An
 * unreadable card is out of the shoe like any other, only never identified. */
export function cardsWords({ cards_out: out, unreadable, decks }) {
  const size = decks * 52;
  const values = { out: num(out), unreadable: num(unreadable), left: num(Math.max(size - out, 0)), size: num(size) };
  return t(unreadable ? "dash.cards_words_unreadable" : "dash.cards_words", values);
}

/** Who acted, so that a supervisor can tell them apart: a token's name (source `api`)
 * stands alone; everything else carries a badge saying what sent it, the same on every
 * row: `station`, the card `reader`, or the `demo bot` (everything the demo's `sim` reader
 * sends, cards and a dealer's or supervisor's events alike, under names a person's token
 * may also have). A name that only repeats the badge ("reader", "station") is left out,
 * never the badge. `readerDriver` is the station's reader (`sim` for the demo). The
 * badge is a code (`demo_bot`, `reader`, `station`, ...); `badgeWords` says it. */
export function actorOf({ source, actor }, readerDriver) {
  if (source === "api") return { name: actor, badge: null };
  const badge = source === "reader" ? (readerDriver === "sim" ? "demo_bot" : "reader") : source;
  const repeats = actor === source || actor === badge || actor === badge.replace("_", " ");
  // A part of the station by its name (the protection checks): said in the page's words.
  const named = t(`badge.${actor}`);
  return { name: repeats ? null : named === `badge.${actor}` ? actor : named, badge };
}

/** A badge's words ("demo bot", "robot de démo"); a source the catalogue does not know
 * stays as the station named it. */
export function badgeWords(badge) {
  const words = t(`badge.${badge}`);
  return words === `badge.${badge}` ? badge : words;
}

/** `actorOf` as one line of text: "ana", "demo-supervisor (demo bot)", "station". */
export function actorText(row, readerDriver) {
  const { name, badge } = actorOf(row, readerDriver);
  if (!badge) return name;
  return name ? t("dash.actor_badge", { name, badge: badgeWords(badge) }) : badgeWords(badge);
}

/** A role's name ("supervisor", "chef de table", "主管"). */
export function roleWords(role) {
  return role ? t(`role.${role}`) : "";
}

/** What the OS said, in words for the pit: "[Errno 2] could not open port /dev/ttyUSB0:
 * [Errno 2] No such file or directory: '/dev/ttyUSB0'" -> "not there (is it plugged in?)". */
const OS_WORDS = [
  [/no such file or directory|no such device/i, "dash.os_missing"],
  [/permission denied/i, "dash.os_denied"],
  [/device or resource busy|resource busy/i, "dash.os_busy"],
  [/input\/output error/i, "dash.os_io"],
];

/** A reader's problem without the operating system's codes: "cannot open the reader port
 * /dev/ttyUSB0: not there (is it plugged in?)"; text the station wrote itself stays. */
export function plainProblem(text) {
  if (!/\[Errno \d+\]/.test(text)) return text;
  const head = text.slice(0, text.search(/:\s*\[Errno \d+\]/));
  const last = text.split(/\[Errno \d+\]\s*/).pop().replace(/:\s*'[^']*'\s*$/, "");
  const known = OS_WORDS.find(([pattern]) => pattern.test(last));
  return `${head}: ${known ? t(known[1]) : last.trim().toLowerCase()}`;
}

/** The reader's "…; retrying in 10 s" (or "reconnecting to it in", "reopening it in"). */
const RETRY = /;\s*(?:retrying|reconnecting to it|reopening it) in ([\d.]+) s$/;

/** The reader's state in words: "serial: connected"; when it is down, why (`plainProblem`)
 * and when the station tries again, counted down from `since` (ms, when the station said
 * it): the wait grows to its longest and then repeats, so the count starts over at 0. */
export function readerWords(reader, since, now) {
  if (reader.driver === "none") return t("dash.reader_none");
  if (reader.connected) return t("dash.reader_connected", { driver: reader.driver });
  const detail = reader.detail || "";
  const retry = RETRY.exec(detail);
  const problem = plainProblem(retry ? detail.slice(0, retry.index) : detail);
  const words = problem ? t("dash.reader_down_why", { driver: reader.driver, problem })
    : t("dash.reader_down", { driver: reader.driver });
  if (!retry) return words;
  const every = Number(retry[1]);
  const left = Math.max(1, Math.ceil(every - (((now - since) / 1000) % every)));
  return t("dash.reader_retry", { words, n: num(left) });
}

/** Whether `readerWords` counts down (to draw it again every second). */
export function readerRetries(reader) {
  return Boolean(reader && !reader.connected && RETRY.test(reader.detail || ""));
}

/** A share as a percentage, the locale's way ("1.24%", "1,24 %"). */
export function pct(x, digits = 2) {
  return percent(x, digits);
}

/** A bet's name ("banker_pair" -> "Banker pair", "Paire banque", "莊對"); a numbered
 * variant (`lucky_six_2`) is its bet's; a bet the catalogue does not know, spaced. */
export function betWords(code) {
  const words = t(`bet_${code}`);
  if (words !== `bet_${code}`) return words;
  const variant = /^(.*)_(\d+)$/.exec(code); // lucky_six_2: lucky six's second paytable line
  if (variant && t(`bet_${variant[1]}`) !== `bet_${variant[1]}`) return `${t(`bet_${variant[1]}`)} ${variant[2]}`;
  return spaced(code);
}

/** A code in words when nothing better is known ("banker_pair" -> "banker pair"). */
export function spaced(code) {
  return code.replaceAll("_", " ");
}

/** A verdict's or suspension's code in words (the catalogue's; "ok" for none). */
export function explain(code) {
  if (!code) return t("dash.v_ok");
  const words = t(`error.${code}`);
  return words === `error.${code}` ? code : words;
}

/** The games' names and their hands' names as the page titles them (the station's hand
 * codes: `player`, `banker`, `tableau1`, `tableau2`; in chemin de fer the player is the
 * ponte). Words only: what each hand does comes from the state. */
export function gameTitle(game) {
  if (!game) return "";
  const words = t(`game_${game}`);
  return words === `game_${game}` ? spaced(game) : words;
}

/** A hand's title at the table's game: "Player", "Ponte", "Tableau 1". */
export function handTitle(game, hand) {
  if (game === "chemin_de_fer" && hand === "player") return t("ponte");
  const words = t(hand);
  return ["player", "banker", "tableau1", "tableau2"].includes(hand) ? words : spaced(hand);
}

/** A hand's name inside a sentence: "player", "joueur" (lower case where the script has it). */
export function handWord(game, hand) {
  return handTitle(game, hand).toLocaleLowerCase();
}

/** Whether a result is baccarat banque's (an outcome per tableau, not one winner). */
export function isBanque(r) {
  return Boolean(r && "tableau1_outcome" in r);
}

/** Why a tableau's outcome is not what its points alone say: a natural (two cards, 8 or
 * 9) wins against a banker without one whatever the banker draws to ("Tableau 1 wins 9
 * to 9: its natural beats the banker's drawn 9"). */
function banqueReason(r, tableau, outcome, total, words) {
  const banker = r.banker_total;
  const byPoints = total > banker ? "win" : total < banker ? "lose" : "tie";
  if (outcome === byPoints) return words;
  const naturals = r.naturals || [];
  if (outcome === "win" && naturals.includes(tableau)) return t("dash.banque_natural_wins", { words, n: banker });
  if (outcome === "lose" && naturals.includes("banker")) return t("dash.banque_natural_loses", { words, n: total });
  return words;
}

/** "Tableau 1 wins 9 to 7 · tableau 2 ties 7 to 7 · naturals: tableau 1": each tableau
 * against the banker, as the result says, with the reason where the points do not say
 * it. */
export function banqueWords(r) {
  const sides = ["tableau1", "tableau2"].map((tableau, i) => {
    const outcome = r[`${tableau}_outcome`];
    const total = r[`${tableau}_total`];
    const hand = i ? handWord("baccarat_banque", tableau) : handTitle("baccarat_banque", tableau);
    const words = t("dash.tableau_outcome", { hand, outcome: t(`outcome.${outcome}`), total, banker: r.banker_total });
    return banqueReason(r, tableau, outcome, total, words);
  });
  if (r.naturals?.length) {
    const key = r.naturals.length === 1 ? "dash.natural_of" : "dash.naturals_of";
    sides.push(t(key, { list: list(r.naturals.map((h) => handWord("baccarat_banque", h))) }));
  }
  return sides.join(" · ");
}

/** A decision in words: "tableau 1: card", "banker: no card". */
export function decisionWords(decision, game) {
  if (!decision) return "";
  const draw = t(decision.draw ? "dash.draw_card" : "dash.draw_none");
  return decision.hand ? t("dash.decision_words", { hand: handWord(game, decision.hand), draw }) : draw;
}

/** What an action did, for the last-action line: the event's words, and for a decision
 * (or a resume with one) which hand and what it decided. */
export function doneWords(done, event, game) {
  const decision = event?.type === "decision" ? event : event?.decision;
  return decision ? t("dash.done_with", { done, decision: decisionWords(decision, game) }) : done;
}

/** The words of an event a person sends ({label, confirm, done}), from the catalogue by
 * its type; null for an event no person confirms (the station says which: `rules`). */
export function eventWords(type) {
  return { label: t(`event.${type}.label`), confirm: t(`event.${type}.confirm`), done: t(`event.${type}.done`) };
}

/** The naturals and pairs of a round result, in words or (`short`) as the letters. */
export function roundFlags(r, short = false, game = "punto_banco") {
  const [p, b] = short ? [t("letter_player"), t("letter_banker")] : [handWord(game, "player"), handWord(game, "banker")];
  return [r.player_natural && t("dash.flag_natural", { hand: p }), r.banker_natural && t("dash.flag_natural", { hand: b }),
          r.player_pair && t("dash.flag_pair", { hand: p }), r.banker_pair && t("dash.flag_pair", { hand: b })].filter(Boolean);
}

/** "Player wins 9 to 7 · player natural", "Tie 6 to 6". */
export function winnerWords(r, game = "punto_banco") {
  if (isBanque(r)) return banqueWords(r);
  const pt = r.player_total;
  const bt = r.banker_total;
  if (r.winner === "tie") return t("dash.winner_tie", { p: pt, b: bt });
  const flags = roundFlags(r, false, game);
  const [a, b] = r.winner === "player" ? [pt, bt] : [bt, pt];
  const words = t("dash.winner_wins", { hand: handTitle(game, r.winner), a, b });
  return flags.length ? `${words} · ${list(flags, "unit")}` : words;
}

/** A side's name for a winner code ("banker", "player", "tie"). */
export function winnerName(winner, game = "punto_banco") {
  return winner === "tie" ? t("bet_tie").toLocaleLowerCase() : handWord(game, winner);
}

/** A result in a few words for the journal: "player 9–7", "tableau 1 win, tableau 2 tie". */
export function resultText(r) {
  if (isBanque(r)) return t("dash.result_banque", { o1: t(`outcome.${r.tableau1_outcome}`), o2: t(`outcome.${r.tableau2_outcome}`) });
  return t("dash.result_winner", { winner: winnerName(r.winner), p: r.player_total, b: r.banker_total });
}

/** An alert's sentence in the page's words, from the figures the notice carries (the
 * run's length and where it starts, the shuffle's riffles and gathering, ...); the
 * station's sentence when the figures are not all there. An earlier shoe is named by
 * its label, as the station's history keeps it. */
export function alertSentence(a) {
  const shoe = (label) => (label === "new deck order" ? t("protect.new_deck_order") : label);
  if (a.alert === "SHOE_SEQUENCE" && a.k != null && a.start != null) {
    const also = a.others?.length ? t("protect.also", { list: list(a.others.map(shoe), "unit") }) : "";
    if (a.earlier === "new deck order") return t("protect.new_deck", { k: num(a.k), start: num(a.start), also });
    return t("protect.repeat", { k: num(a.k), start: num(a.start), earlier: a.earlier, earlier_start: num(a.earlier_start), also });
  }
  const how = a.gathering != null ? t(`protect.gathered.${a.gathering}`) : null;
  if (a.alert === "WEAK_SHUFFLE" && a.riffles != null && a.part && how !== `protect.gathered.${a.gathering}`) {
    const what = a.riffles === 0 ? t("protect.cut_only") : count(a.riffles, "protect.riffles");
    const pile = t(a.turned_over ? "protect.pile_turned" : "protect.pile", { how });
    return t("protect.weak", { what, pile, first: num(a.part[0]), last: num(a.part[1]), cards: num(a.cards),
      p: new Intl.NumberFormat(locale, { maximumSignificantDigits: 2, notation: a.probability < 0.001 ? "scientific" : "standard" }).format(a.probability) });
  }
  return a.message;
}

/** A journal notice's message in the page's words: the station's notices are fixed
 * sentences (the journal's language-free record: "journal restored", "webhook events
 * refused", ...), each a catalogue key `notice.<message>`; another (a reader's own words,
 * a refusal naming its reason) is shown as it was journaled. */
export function noticeWords(message) {
  const key = `notice.${message}`;
  const words = t(key);
  return words === key ? message : words;
}

/** A journal event in words. A notice's message and a fault's detail are the station's or
 * the reader's own text (a record of what was said, kept as said). */
export function describe(event) {
  const { type } = event;
  if (type === "notice") return t("dash.ev_notice", { message: event.alert ? alertSentence(event) : noticeWords(event.message) });
  if (type === "card") return t("dash.ev_card", { card: label(event.card) });
  if (type === "decision") return t("dash.ev_decision", { decision: decisionWords(event) });
  if (type === "resume" && (event.card || event.decision)) {
    const parts = [event.decision && decisionWords(event.decision), event.card && label(event.card)];
    return t("dash.ev_resume_with", { what: list(parts.filter(Boolean), "unit") });
  }
  if (type === "fault" && event.detail) return t("dash.ev_fault_detail", { detail: event.detail });
  const done = t(`event.${type}.done`);
  return done === `event.${type}.done` ? spaced(type) : done;
}

/** What an accepted event that placed no card and opened no round did, where "ok" would
 * hide it: a reader fault or a restart with no shoe in play suspends nothing. */
const QUIET = { fault: "dash.v_fault_quiet", restart: "dash.v_restart_quiet" };

/** A journal verdict in words: the error explained, or what the event did. */
export function verdictText(v, event) {
  if (!v) return "";
  if (!v.ok) return t("dash.v_error", { code: v.error, words: explain(v.error) });
  const role = v.role && (/^([PB][123]|T[12]\.[123]|B\.[123])$/.test(v.role) ? v.role : dueWords(v.role));
  const parts = [role, v.round != null && t("dash.v_round", { n: v.round }),
                 v.voided_round != null && t("dash.v_voided", { n: v.voided_round }), v.result && resultText(v.result)];
  return parts.filter(Boolean).join(" · ") || (QUIET[event?.type] ? t(QUIET[event.type]) : t("dash.v_ok"));
}

/** A dealer's or supervisor's action with who did it: "12:01:02 void round by ana (row 7)",
 * "… by demo-supervisor (demo bot) …", and the refusal explained if the table refused it.
 * `readerDriver` as for `actorOf`. */
export function actionLine({ ts, done, card, verdict, seq, ...who }, readerDriver) {
  const refused = Boolean(verdict && !verdict.ok);
  const time = ts ? `${clock(ts)} ` : "";
  const what = card ? `${done} ${label(card)}` : done;
  const by = actorText({ source: "api", ...who }, readerDriver);
  const values = { time, done: what, who: by, seq, code: refused ? verdict.error : "", words: refused ? explain(verdict.error) : "" };
  return { text: t(refused ? "dash.action_line_refused" : "dash.action_line", values), bad: refused };
}

/** What the table waits for (`state.due`, a card role such as `B2`, `burn`, ...) in words. */
export function dueWords(due) {
  if (due == null) return t("due.suspended");
  const role = /^(P|B|T1\.|T2\.|B\.)([123])$/.exec(due);
  if (role) {
    const hand = { P: "player", B: "banker", "T1.": "tableau1", "T2.": "tableau2", "B.": "banker" }[role[1]];
    return t("due.card", { hand: handWord(null, hand), nth: t(`nth.${role[2]}`) });
  }
  const words = t(`due.${due}`);
  return words === `due.${due}` ? due : words;
}

/** An option waiting for its decision, in words, from its codes (the state's `option`:
 * the hand, its total, and what the banker plays against), not the station's sentence. */
export function optionWords(option, game) {
  if (!option) return "";
  const hand = handTitle(game, option.hand);
  const against = (option.against || []).map((a) => (a.third != null
    ? t("dash.against_third", { hand: handWord(game, a.hand), n: a.third })
    : t("dash.against_standing", { hand: handWord(game, a.hand) })));
  if (!option.against && option.words) return option.words; // a station too old to send the codes
  return against.length ? t("dash.option_against", { hand, total: option.total, list: list(against) })
    : t("dash.option_words", { hand, total: option.total });
}

/** What the station waits for next, from the state's codes (never its `expecting` words). */
export function expectingWords(state) {
  if (state.due === "burn") return t("dash.burn_to_go", { n: state.burns_due });
  if (state.due === "decision") return optionWords(state.option, state.game);
  return dueWords(state.due);
}

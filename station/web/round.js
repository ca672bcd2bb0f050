// The round on the table card by card, its outcome, what is due next, and the shoe's
// progress (cards out, burn, cut card, rounds, the reader).

import { face } from "./cards.js";
import { $, fill, h } from "./dom.js";
import { cardsWords, expectingWords, handTitle, isBanque, label, optionWords, readerRetries, readerWords, total, winnerWords } from "./format.js";
import { list, num, t } from "./i18n.js";

const ROLES = {
  player: ["P1", "P2", "P3"],
  banker: ["B1", "B2", "B3"],
  tableau1: ["T1.1", "T1.2", "T1.3"],
  tableau2: ["T2.1", "T2.2", "T2.3"],
};
const BANQUE_ROLES = { ...ROLES, banker: ["B.1", "B.2", "B.3"] };
const OUTCOME_MARK = { win: "dash.mark_win", lose: "dash.mark_lose", tie: "dash.mark_tie" };

/** The hands in the order the page lays them out, left to right. Punto banco and chemin
 * de fer: the state's order (player or ponte, then banker). Baccarat banque: the table
 * seen from the punters' side, facing the banker: tableau 1 (on the banker's right) on
 * the left, the banker in the middle, tableau 2 (on the banker's left) on the right. */
export function layout(hands) {
  if (hands.length === 3) return [hands[0], hands[2], hands[1]];
  return hands;
}

/** Draw the hands' boxes for the table's game, once per game (the ids stay those of
 * punto banco's page: `player-cards`, `banker-total`, ...). */
function layHands(st) {
  const box = $("hands");
  const key = `${st.game}:${st.hands.join(",")}`; // drawn once per game (the page is in one language)
  if (box.dataset.game === key) return;
  box.dataset.game = key;
  box.className = `hands hands-${st.hands.length}`;
  fill(box, layout(st.hands).map((hand) => h("div", { class: `hand ${hand}`, id: `${hand}-hand`, "data-hand": hand },
    h("h3", { "data-won": t("dash.mark_win") }, h("span", { class: "hand-title", text: handTitle(st.game, hand) }),
      h("span", { class: "mark", id: `${hand}-mark` }), h("span", { class: "total", id: `${hand}-total` })),
    h("div", { class: "cards", id: `${hand}-cards`, "aria-label": t("dash.cards_of", { hand: handTitle(st.game, hand) }) }))));
}

/** Add only the cards that are new, so a card already shown is not redrawn (and not
 * re-announced by a screen reader). */
function fillCards(id, codes, roles) {
  const box = $(id);
  const shown = [...box.children].map((c) => c.dataset.card || "?");
  const same = shown.length <= codes.length && shown.every((c, i) => c === (codes[i] || "?"));
  if (!same) box.replaceChildren();
  for (let i = box.children.length; i < codes.length; i++) box.append(face(codes[i], roles[i]));
}

function renderRound(st) {
  const rnd = st.round;
  const last = st.last_result;
  const hands = st.hands || ["player", "banker"];
  let shown = null; // the cards of each hand on show
  let title;
  let outcome = "";
  if (rnd) {
    shown = rnd;
    title = t(st.last_round === rnd.number ? "dash.round_last" : "dash.round", { n: rnd.number });
  } else if (last) {
    shown = last;
    title = t("dash.round_complete", { n: last.round });
    outcome = winnerWords(last, st.game);
  } else {
    title = t(st.in_play ? "dash.waiting_first" : "dash.no_shoe");
  }
  $("round-title").textContent = title;
  layHands({ ...st, hands });
  const banque = hands.length === 3;
  const done = !rnd && last;
  const naturals = done && isBanque(last) ? last.naturals : [];
  for (const hand of hands) {
    const cards = shown?.[hand] || [];
    fillCards(`${hand}-cards`, cards, (banque ? BANQUE_ROLES : ROLES)[hand] || []);
    $(`${hand}-total`).textContent = cards.length ? String(total(cards)) : "";
    const el = $(`${hand}-hand`);
    // Punto banco and chemin de fer: the winner's box. Banque: each tableau's outcome
    // against the banker, and a natural wherever the result lists one.
    const outcomeOf = done && banque ? last[`${hand}_outcome`] : null;
    el.classList.toggle("won", Boolean(done && (last.winner === hand || outcomeOf === "win")));
    el.classList.toggle("lost", outcomeOf === "lose");
    el.classList.toggle("tied", outcomeOf === "tie");
    el.classList.toggle("option", Boolean(st.option && st.option.hand === hand));
    const marks = [outcomeOf && t(OUTCOME_MARK[outcomeOf]), naturals.includes(hand) && t("dash.mark_natural")].filter(Boolean);
    $(`${hand}-mark`).textContent = marks.join(" · ");
  }
  $("outcome").textContent = outcome;
  $("expecting").textContent = expectingWords(st);
  $("option-words").textContent = st.option ? optionWords(st.option, st.game) : "";
}

function renderProgress(st) {
  $("p-shoe").textContent = st.shoes_started ? t(st.in_play ? "dash.shoe_in_play" : "dash.shoe_finished", { n: st.shoes_started }) : t("dash.none_yet");
  $("p-cards").textContent = cardsWords(st);
  let burn = "–";
  if (st.burn === "none") burn = t("dash.burn_none");
  else if (st.in_play || st.burned.length) {
    const reveal = st.burned[0];
    const values = { card: reveal ? label(reveal) : "", n: num(st.burned.length - 1), left: num(st.burns_due) };
    if (st.reveal_due) burn = t("dash.burn_reveal_due");
    else if (reveal) burn = t(st.burns_due ? "dash.burn_reveal_to_go" : "dash.burn_reveal", values);
  }
  $("p-burn").textContent = burn;
  $("p-cut").textContent = t(st.cut_seen ? "dash.cut_seen" : "dash.cut_not_yet");
  $("p-rounds").textContent = st.voided.length
    ? t("dash.rounds_voided", { n: num(st.rounds_complete), v: num(st.voided.length), list: list(st.voided, "unit") })
    : num(st.rounds_complete);
  $("p-last").textContent = st.last_round != null ? t("dash.last_is", { n: st.last_round }) : t("dash.not_announced");
  $("p-last").classList.toggle("warn", st.last_round != null);
}

let readerSince = { detail: null, at: 0 }; // when the station said the detail on show
let readerTick = null; // redraws the countdown to the reader's next try, every second

/** The reader as it is now (its status comes with every state the station publishes),
 * and whether the table is stopped on a fault it reported. Connected, it is only that (a
 * reader's running commentary, such as the demo bot's "betting open for round 6", would
 * contradict the table); down, why in plain words and a countdown to the next try. */
function renderReader({ reader, state }) {
  if (!reader) return;
  const el = $("p-reader");
  const fault = state?.suspension?.code === "SCANNER_FAULT";
  if (reader.detail !== readerSince.detail) readerSince = { detail: reader.detail, at: Date.now() };
  const words = readerWords(reader, readerSince.at, Date.now());
  el.textContent = fault ? t("dash.reader_fault", { words }) : words;
  el.title = reader.driver === "none" ? "" : reader.detail || ""; // the driver's own words, for a technician
  el.dataset.connected = String(Boolean(reader.connected));
  el.classList.toggle("warn", !reader.connected || fault);
}

function tickReader(store) {
  const { reader } = store.get();
  const counting = readerRetries(reader);
  if (counting && readerTick == null) readerTick = setInterval(() => renderReader(store.get()), 1000);
  if (!counting && readerTick != null) {
    clearInterval(readerTick);
    readerTick = null;
  }
}

export function mountRound(store) {
  store.subscribe(["state"], ({ state }) => {
    if (!state) return;
    renderRound(state);
    renderProgress(state);
  });
  store.subscribe(["reader", "state"], (value) => {
    renderReader(value);
    tickReader(store);
  });
}

// The round on the table card by card, its outcome, what is due next, and the shoe's
// progress (cards out, burn, cut card, rounds, the reader).

import { face } from "./cards.js";
import { $ } from "./dom.js";
import { cardsWords, label, total, winnerWords } from "./format.js";

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
  let player = [];
  let banker = [];
  let title;
  let outcome = "";
  if (rnd) {
    player = rnd.player;
    banker = rnd.banker;
    title = `Round ${rnd.number}${st.last_round === rnd.number ? " (last round)" : ""}`;
  } else if (last) {
    player = last.player;
    banker = last.banker;
    title = `Round ${last.round} (complete)`;
    outcome = winnerWords(last);
  } else {
    title = st.in_play ? "Waiting for the first round" : "No shoe in play";
  }
  $("round-title").textContent = title;
  fillCards("player-cards", player, ["P1", "P2", "P3"]);
  fillCards("banker-cards", banker, ["B1", "B2", "B3"]);
  $("player-total").textContent = player.length ? String(total(player)) : "";
  $("banker-total").textContent = banker.length ? String(total(banker)) : "";
  $("player-hand").classList.toggle("won", Boolean(!rnd && last?.winner === "player"));
  $("banker-hand").classList.toggle("won", Boolean(!rnd && last?.winner === "banker"));
  $("outcome").textContent = outcome;
  $("expecting").textContent = st.expecting;
}

function renderProgress(st) {
  $("p-shoe").textContent = st.shoes_started ? `#${st.shoes_started}${st.in_play ? " in play" : " finished"}` : "none yet";
  $("p-cards").textContent = cardsWords(st);
  let burn = "–";
  if (st.in_play || st.burned.length) {
    const reveal = st.burned[0];
    if (st.reveal_due) burn = "reveal card due";
    else if (reveal) burn = `reveal ${label(reveal)}, ${st.burned.length - 1} burned${st.burns_due ? `, ${st.burns_due} to go` : ""}`;
  }
  $("p-burn").textContent = burn;
  $("p-cut").textContent = st.cut_seen ? "seen" : "not yet";
  $("p-rounds").textContent = `${st.rounds_complete}${st.voided.length ? ` (+${st.voided.length} voided: ${st.voided.join(", ")})` : ""}`;
  $("p-last").textContent = st.last_round != null ? `round ${st.last_round} is the last` : "not announced";
  $("p-last").classList.toggle("warn", st.last_round != null);
}

/** The reader as it is now (its status comes with every state the station publishes),
 * and whether the table is stopped on a fault it reported. */
function renderReader({ reader, state }) {
  if (!reader) return;
  const el = $("p-reader");
  const fault = state?.suspension?.code === "SCANNER_FAULT";
  const link = reader.driver === "none" ? "none configured" : reader.connected ? "connected" : "disconnected";
  const detail = reader.detail && reader.driver !== "none" ? ` (${reader.detail})` : "";
  el.textContent = `${reader.driver === "none" ? "" : `${reader.driver}: `}${link}${detail}${fault ? " · a fault was reported" : ""}`;
  el.dataset.connected = String(Boolean(reader.connected));
  el.classList.toggle("warn", !reader.connected || fault);
}

export function mountRound(store) {
  store.subscribe(["state"], ({ state }) => {
    if (!state) return;
    renderRound(state);
    renderProgress(state);
  });
  store.subscribe(["reader", "state"], renderReader);
}

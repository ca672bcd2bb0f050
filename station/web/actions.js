// The dealer's and supervisor's buttons. A button shows if the role may send its event
// and is enabled if the table accepts it now (the snapshot's `actions`): the page decides
// no rule itself. Each asks the station's confirmation question first, and the result
// goes on the last-action line with who did it.

import { ApiError, post } from "./api.js";
import { $ } from "./dom.js";
import { actionLine, decisionWords, doneWords, dueWords, label, optionWords, suitName } from "./format.js";
import { t } from "./i18n.js";
import { accepts, actionWords, may } from "./rules.js";
import { say } from "./store.js";

function confirmAction(text) {
  const dialog = $("confirm");
  $("confirm-text").textContent = text;
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "ok"), { once: true });
    dialog.returnValue = "";
    dialog.showModal();
  });
}

/** The card the supervisor read by eye in the banner's picker, or null. */
function pickedCard() {
  const r = $("pick-rank").value;
  const s = $("pick-suit").value;
  return r && s ? r + s : null;
}

/** Where a card read by eye goes on `resume`: what the table waits for once the suspension
 * is lifted (the burn, else the round's next card, as the state says), in the page's
 * words for its code: "banker second card (B2)"; "" when no card is due. */
export function slotWords(state) {
  if (!state?.in_play) return "";
  const due = state.reveal_due ? "burn_reveal" : state.burns_due ? "burn" : state.round ? state.round.due : state.gated ? null : "P1";
  if (!due || due === "decision") return ""; // an option waits: no card is due before its decision
  const words = dueWords(due);
  return /^([PB]\d|(T1|T2|B)\.\d)$/.test(due) ? t("dash.slot_as", { words, code: due }) : words;
}

/** The decision the supervisor chose in the banner for the option that waits, or null. */
function chosenDecision(state) {
  const draw = $("resume-draw").value;
  if (!draw || !state?.option) return null;
  return { hand: state.option.hand, draw: draw === "true" };
}

/** The event a button sends and the question it asks first, or null when it has nothing
 * to send (a card or a decision not chosen yet). What the option is, which hand it is,
 * and whether a card is held all come from the state. */
function eventOf(button, state, words) {
  const type = button.dataset.event;
  const event = { type };
  let question = words.confirm;
  if (button.hasAttribute("data-with-card")) {
    const card = pickedCard();
    if (!card) return null;
    event.card = card;
    const slot = slotWords(state);
    question = slot ? t("dash.ask_card_slot", { card: label(card), slot }) : t("dash.ask_card_none", { card: label(card) });
  } else if (button.hasAttribute("data-with-decision")) {
    const decision = chosenDecision(state);
    if (!decision) return null;
    event.decision = decision;
    const card = pickedCard(); // a card read by eye goes with it (the station refuses one while a card is held)
    if (card) event.card = card;
    const values = { decision: decisionWords(decision, state.game), option: optionWords(state.option, state.game) };
    question = state.held ? t("dash.ask_decision_held", { ...values, card: label(state.held) })
      : card ? t("dash.ask_decision_card", { ...values, card: label(card) }) : t("dash.ask_decision", values);
  } else if (type === "decision") {
    if (!state?.option) return null;
    event.hand = state.option.hand;
    event.draw = button.dataset.draw === "true";
    question = t("dash.ask_record", { option: optionWords(state.option, state.game), decision: decisionWords(event, state.game) });
  }
  return { event, question };
}

/** `onUnauthorized` is called when the station no longer knows the token. */
export function mountActions(store, { onUnauthorized }) {
  const buttons = [...document.querySelectorAll("button.act")];

  async function act(button) {
    const { rules } = store.get();
    const type = button.dataset.event;
    const words = actionWords(rules, type);
    if (!words) return;
    const { state } = store.get();
    const asked = eventOf(button, state, words);
    if (!asked) return;
    const { event, question } = asked;
    const done = doneWords(words.done, event, state?.game);
    if (!(await confirmAction(question))) return;
    button.disabled = true;
    try {
      const verdict = await post(event);
      const row = store.get().rows.at(verdict.seq); // the journal's row says who did it
      const line = actionLine(row ? { ...row, card: row.event.card, done }
        : { seq: verdict.seq, verdict, card: event.card, done, actor: store.get().me.name },
        store.get().reader?.driver);
      say(store, line.text, line.bad);
      if (verdict.ok && event.card) {
        $("pick-rank").value = "";
        $("pick-suit").value = "";
      }
      if (verdict.ok && event.decision) $("resume-draw").value = "";
    } catch (err) {
      say(store, t("dash.action_failed", { done, error: err.message }), true);
      if (err instanceof ApiError && err.status === 401) await onUnauthorized();
    } finally {
      render(store.get());
    }
  }

  function render({ state, me, rules }) {
    const journalDown = state?.journal?.writable === false; // every event refused: say so, not 503s
    for (const b of buttons) {
      const type = b.dataset.event;
      b.hidden = !may(me, rules, type);
      b.disabled = journalDown || !accepts(state, type) || (b.hasAttribute("data-with-card") && !pickedCard())
        || (b.hasAttribute("data-with-decision") && !chosenDecision(state));
    }
    // The dealer's Card / No card pair: only while an option waits for its decision.
    $("decision").hidden = !accepts(state, "decision") || !may(me, rules, "decision");
    // The supervisor's resume with a decision: while suspended with an option waiting
    // (a card held or not); the held card is shown, to be placed after the decision.
    const option = state?.suspension ? state.option : null;
    $("resume-decision").hidden = !option || !may(me, rules, "resume");
    $("resume-option").textContent = option ? optionWords(option, state.game) : "";
    $("resume-held").hidden = !state?.held;
    $("resume-held").textContent = state?.held ? t("dash.held", { card: label(state.held) }) : "";
    // The table's supervisor buttons live in the banner while suspended.
    if (state?.suspension) {
      for (const b of document.querySelectorAll("#table-actions button.act[data-event=void], #table-actions button.act[data-event=end_shoe]")) {
        b.hidden = true;
      }
    }
    const supervisor = may(me, rules, "resume");
    const slot = slotWords(state);
    $("picker-legend").textContent = slot ? t("dash.picker_legend_for", { slot }) : t("dash.picker_legend");
    document.querySelector("fieldset.picker").hidden = !supervisor;
    $("supervisor-actions").hidden = !supervisor;
    document.querySelector("[data-viewer-note]").hidden = supervisor;
  }

  function renderSaid({ said }) {
    const el = $("last-action");
    el.textContent = said ? said.text : "";
    el.classList.toggle("error", Boolean(said?.bad));
  }

  for (const option of $("pick-suit").options) if (option.value) option.textContent = `${option.textContent.trim()[0]} ${suitName(option.value)}`;
  for (const b of buttons) b.addEventListener("click", () => act(b));
  for (const id of ["pick-rank", "pick-suit", "resume-draw"]) $(id).addEventListener("change", () => render(store.get()));
  store.subscribe(["state", "me", "rules"], render);
  store.subscribe(["said"], renderSaid);
}

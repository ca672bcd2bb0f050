// The suspension banner: why the table stopped, since when, what else went wrong after,
// in the station's own words. The supervisor's buttons in it belong to actions.js.

import { $, fill, h } from "./dom.js";
import { clock, explain, label } from "./format.js";
import { num, t } from "./i18n.js";
import { may } from "./rules.js";

/** A station integrity alert's code in words (its message is the station's record). */
function integrityWords(code) {
  const key = `integrity.${code}`;
  const words = t(key);
  return words === key ? code : words;
}

/** A station integrity alert's sentence in the page's words, from its code and figures
 * (`params`; `variant`: which of the code's sentences); the station's message when it
 * sent none (an older station). Its `detail` is the station's record of what it found,
 * kept as it said it. */
export function integritySentence(a) {
  const p = a.params || {};
  const key = `integrity.said.${a.code}${p.variant ? `_${p.variant}` : ""}`;
  const figures = Object.fromEntries(Object.entries(p).map(([k, v]) => [k, typeof v === "number" ? num(v) : String(v)]));
  const words = Object.keys(p).length ? t(key, figures) : key;
  return words === key ? a.message : words;
}

export function mountBanner(store) {
  let waitingFor = null; // the seq whose row would give the banner its time

  function render({ state, me, rules, rows }) {
    const susp = state?.suspension;
    $("banner").hidden = !susp;
    document.body.classList.toggle("suspended", Boolean(susp));
    waitingFor = null;
    if (!susp || !rules) return;
    $("banner-reason").textContent = explain(susp.code);
    const row = rows.at(susp.since_seq);
    if (!row && susp.since_seq) waitingFor = susp.since_seq;
    const card = susp.card ? t("dash.banner_card", { card: label(susp.card) })
      : susp.code === "UNREADABLE_CARD" ? t(may(me, rules, "resume") ? "dash.banner_unreadable_enter" : "dash.banner_unreadable") : null;
    const seq = susp.since_seq ?? "?";
    const since = row ? t("dash.banner_since_at", { seq, time: clock(row.ts) }) : t("dash.banner_since", { seq });
    // A fault's own words (the journal's outage, a reader's message): what happened, where
    // the code's explanation can only say what such faults usually are.
    const said = row?.event?.type === "fault" && row.event.detail ? row.event.detail : null;
    $("banner-detail").textContent = [susp.code, card, since, said].filter(Boolean).join(" · ");
    fill($("banner-later"), susp.later.map((l) => h("li", {
      text: l.card ? t("dash.banner_then_card", { code: l.code, card: label(l.card), words: explain(l.code) })
        : t("dash.banner_then", { code: l.code, words: explain(l.code) }) })));
    if (susp.later_total > susp.later.length) $("banner-later").append(h("li", { text: t("dash.more_in_journal", { n: num(susp.later_total - susp.later.length) }) }));
  }

  /** The journal cannot be written (disk full, read-only, ...): no row can say so, the
   * state does (`state.journal`), and every event is refused meanwhile. */
  function renderJournal({ state }) {
    const journal = state?.journal;
    const down = Boolean(journal && journal.writable === false);
    $("journal-banner").hidden = !down;
    if (!down) return;
    // The station's words, less the heading's (and the refusal's tail, said below).
    const words = (journal.detail || "").replace(/^the journal cannot be (written|opened): /, "").split(" — ")[0];
    $("journal-reason").textContent = words || t("dash.journal_default");
    $("journal-since").textContent = journal.since ? t("dash.journal_since", { time: clock(journal.since) }) : "";
  }

  /** The station's own integrity alerts (a forged outbox, a journal discontinuity):
   * `state.journal.alerts`, until the station restarts on a journal that is whole. */
  function renderAlerts({ state }) {
    const alerts = state?.journal?.alerts || [];
    $("integrity-banner").hidden = alerts.length === 0;
    fill($("integrity-alerts"), alerts.map((a) => h("li", { text: t("floor.alert_words", { kind: integrityWords(a.code), message: integritySentence(a) }) })));
  }

  store.subscribe(["state"], renderJournal);
  store.subscribe(["state"], renderAlerts);
  store.subscribe(["state", "me", "rules"], render);
  store.subscribe(["rows"], (value) => {
    if (waitingFor != null && value.rows.at(waitingFor)) render(value);
  });
}

// The suspension banner: why the table stopped, since when, what else went wrong after,
// in the station's own words. The supervisor's buttons in it belong to actions.js.

import { $, fill, h } from "./dom.js";
import { clock, label } from "./format.js";
import { may } from "./rules.js";

export function mountBanner(store) {
  let waitingFor = null; // the seq whose row would give the banner its time

  function render({ state, me, rules, rows }) {
    const susp = state?.suspension;
    $("banner").hidden = !susp;
    document.body.classList.toggle("suspended", Boolean(susp));
    waitingFor = null;
    if (!susp || !rules) return;
    const { errors } = rules;
    $("banner-reason").textContent = errors[susp.code] || susp.code;
    const row = rows.at(susp.since_seq);
    if (!row && susp.since_seq) waitingFor = susp.since_seq;
    const when = row ? ` at ${clock(row.ts)}` : "";
    const card = susp.card ? ` · card: ${label(susp.card)}`
      : susp.code === "UNREADABLE_CARD" ? ` · card: unreadable${may(me, rules, "resume") ? " (enter it below as read by eye)" : ""}` : "";
    // A fault's own words (the journal's outage, a reader's message): what happened, where
    // the code's explanation can only say what such faults usually are.
    const said = row?.event?.type === "fault" && row.event.detail ? ` · ${row.event.detail}` : "";
    $("banner-detail").textContent = `${susp.code}${card} · since row ${susp.since_seq ?? "?"}${when}${said}`;
    fill($("banner-later"), susp.later.map((l) =>
      h("li", { text: `then ${l.code}${l.card ? ` (${label(l.card)})` : ""}: ${errors[l.code] || ""}` })));
    if (susp.later_total > susp.later.length) $("banner-later").append(h("li", { text: `and ${susp.later_total - susp.later.length} more (the journal has them all)` }));
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
    $("journal-reason").textContent = words || "the journal cannot be written";
    $("journal-since").textContent = journal.since ? `since ${clock(journal.since)}` : "";
  }

  /** The station's own integrity alerts (a forged outbox, a journal discontinuity):
   * `state.journal.alerts`, until the station restarts on a journal that is whole. */
  function renderAlerts({ state }) {
    const alerts = state?.journal?.alerts || [];
    $("integrity-banner").hidden = alerts.length === 0;
    fill($("integrity-alerts"), alerts.map((a) => h("li", { text: `${a.code}: ${a.message}` })));
  }

  store.subscribe(["state"], renderJournal);
  store.subscribe(["state"], renderAlerts);
  store.subscribe(["state", "me", "rules"], render);
  store.subscribe(["rows"], (value) => {
    if (waitingFor != null && value.rows.at(waitingFor)) render(value);
  });
}

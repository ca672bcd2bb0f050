// A supervisor's decisions on the floor view: acknowledge an alert, accept a table's gap
// (the missing rows will not come), its new chain or a restored journal's new epoch, or
// the key its station named on first use. Each button opens the decide dialog:
// what will be recorded, a reason (required), Cancel or Confirm. The floor service
// decides and records who; the page only asks. Everything goes in as text.

import { api } from "./api.js";
import { $, h } from "./dom.js";
import { moment } from "./format.js";
import { t } from "./i18n.js";

let pending = null;

/** An alert's kind in words (the floor view's `kindWords`, kept here to avoid a cycle). */
function kind(code) {
  for (const key of [`alert.${code}`, `kind.${code}`]) {
    const words = t(key);
    if (words !== key) return words;
  }
  return code;
}

/** Whether this login may decide (the floor API checks it again). */
export function maySupervise(me) {
  return me?.acts_as === "supervisor";
}

function rows(from, to) {
  return t(from === to ? "floor.row" : "floor.rows", { from, to });
}

/** Open the dialog for one decision; `after` runs once the floor service has recorded it. */
function ask(question, path, body, after) {
  const dialog = $("decide");
  pending = { path, body, after };
  $("decide-text").textContent = question;
  $("decide-reason").value = "";
  $("decide-error").textContent = "";
  dialog.returnValue = "";
  dialog.showModal();
  $("decide-reason").focus();
}

async function confirm(ev) {
  ev.preventDefault();
  if (!pending) return;
  const reason = $("decide-reason").value.trim();
  if (!reason) {
    $("decide-error").textContent = t("floor.reason_needed");
    return;
  }
  const { path, body, after } = pending;
  $("decide-ok").disabled = true;
  try {
    await api(path, { method: "POST", body: JSON.stringify({ ...body, reason }) });
  } catch (err) {
    $("decide-error").textContent = err.message;
    return;
  } finally {
    $("decide-ok").disabled = false;
  }
  pending = null;
  $("decide").close("ok");
  after();
}

/** Wire the dialog's buttons (once, at start). */
export function setUpDecisions() {
  $("decide-form").addEventListener("submit", confirm);
  $("decide-cancel").addEventListener("click", () => {
    pending = null;
    $("decide").close("cancel");
  });
}

/** The buttons of a table's line: accept its gap, its new chain, a new epoch, its key. */
export function tableButtons(t_, after) { // t_: the table (t is the catalogue's words)
  const buttons = [];
  const table = encodeURIComponent(t_.id);
  if (t_.gap) {
    const { from_seq: from, to_seq: to } = t_.gap;
    const button = h("button", { type: "button", class: "decide accept-gap", text: t("floor.accept_gap", { rows: rows(from, to) }) });
    button.addEventListener("click", () =>
      ask(
        t("floor.accept_gap_ask", { name: t_.name, rows: rows(from, to), next: to + 1 }),
        `/api/floor/tables/${table}/accept-gap`,
        { from_seq: from, to_seq: to },
        after,
      ),
    );
    buttons.push(button);
  }
  if (t_.broken_chain != null) {
    const seq = t_.broken_chain;
    const button = h("button", { type: "button", class: "decide accept-chain", text: t("floor.accept_chain", { seq }) });
    button.addEventListener("click", () =>
      ask(
        t("floor.accept_chain_ask", { name: t_.name, seq, prev: seq - 1 }),
        `/api/floor/tables/${table}/accept-chain`,
        { seq },
        after,
      ),
    );
    buttons.push(button);
  }
  if (t_.new_epoch) {
    const { seq, epoch } = t_.new_epoch;
    const button = h("button", { type: "button", class: "decide accept-epoch", text: t("floor.accept_epoch", { epoch, seq }) });
    button.addEventListener("click", () =>
      ask(
        t("floor.accept_epoch_ask", { name: t_.name, seq, epoch, prev: epoch - 1 }),
        `/api/floor/tables/${table}/accept-chain`,
        { seq },
        after,
      ),
    );
    buttons.push(button);
  }
  if (t_.key && t_.key.state === "pending" && t_.key.fingerprint) {
    const fingerprint = t_.key.fingerprint;
    const button = h("button", { type: "button", class: "decide accept-key", text: t("floor.accept_key", { fp: fingerprint.slice(0, 8) }) });
    button.addEventListener("click", () =>
      ask(
        t("floor.accept_key_ask", { name: t_.name, fp: fingerprint }),
        `/api/floor/tables/${table}/accept-key`,
        { fingerprint },
        after,
      ),
    );
    buttons.push(button);
  }
  return buttons.length ? h("p", { class: "decisions" }, ...buttons) : null;
}

/** One alert's line: its words, who acknowledged or resolved it, and (for a supervisor,
 * on an open alert not yet acknowledged) the Acknowledge button. */
export function alertLine(a, me, after, words) {
  const line = h("li", { class: a.resolved ? "resolved" : a.acknowledged ? "open acknowledged" : "open", "data-alert": a.id, text: words });
  const by = a.resolved_by || a.acknowledged;
  if (by) {
    const key = a.resolved_by ? "floor.resolved_by" : "floor.acknowledged_by";
    line.append(h("span", { class: "decided", text: t(key, { by: by.by, when: moment(by.decided), reason: by.reason }) }));
  }
  if (maySupervise(me) && a.id && !a.resolved && !a.acknowledged) {
    const button = h("button", { type: "button", class: "decide acknowledge", text: t("floor.acknowledge") });
    button.addEventListener("click", () =>
      ask(t(a.table ? "floor.acknowledge_ask_table" : "floor.acknowledge_ask", { id: a.id, kind: kind(a.kind), table: a.table }),
        `/api/floor/alerts/${a.id}/acknowledge`, {}, after),
    );
    line.append(" ", button);
  }
  return line;
}

/** A table's accepted gaps and chains, as its line shows them. */
export function acceptedLines(table) {
  if (!table.accepted.length) return null;
  return h(
    "ul",
    { class: "accepted" },
    ...table.accepted.map((d) => {
      const what =
        d.kind === "accept_gap" ? t("floor.accepted_gap", { rows: rows(d.from_seq, d.to_seq) })
        : d.kind === "accept_key" ? t("floor.accepted_key", { hash: d.hash })
        : d.kind === "set_key" ? t("floor.accepted_set_key", { hash: d.hash })
        : d.epoch != null ? t("floor.accepted_epoch", { epoch: d.epoch, seq: d.from_seq })
        : t("floor.accepted_chain", { seq: d.from_seq });
      return h("li", { text: t("floor.accepted_line", { what, by: d.by, when: moment(d.decided), reason: d.reason }) });
    }),
  );
}

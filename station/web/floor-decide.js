// A supervisor's decisions on the floor view: acknowledge an alert, accept a table's gap
// (the missing rows will not come), its new chain or a restored journal's new epoch, or
// the key its station named on first use. Each button opens the decide dialog:
// what will be recorded, a reason (required), Cancel or Confirm. The floor service
// decides and records who; the page only asks. Everything goes in as text.

import { api } from "./api.js";
import { $, h } from "./dom.js";
import { moment } from "./format.js";

let pending = null;

/** Whether this login may decide (the floor API checks it again). */
export function maySupervise(me) {
  return me?.acts_as === "supervisor";
}

function rows(from, to) {
  return from === to ? `row ${from}` : `rows ${from}–${to}`;
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
    $("decide-error").textContent = "Give a reason: what was checked and why this is right.";
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
export function tableButtons(t, after) {
  const buttons = [];
  const table = encodeURIComponent(t.id);
  if (t.gap) {
    const { from_seq: from, to_seq: to } = t.gap;
    const button = h("button", { type: "button", class: "decide accept-gap", text: `Accept gap (${rows(from, to)})…` });
    button.addEventListener("click", () =>
      ask(
        `Table ${t.name}: accept ${rows(from, to)} as missing? The archive goes on from row ${to + 1} without them, and this is recorded with your name.`,
        `/api/floor/tables/${table}/accept-gap`,
        { from_seq: from, to_seq: to },
        after,
      ),
    );
    buttons.push(button);
  }
  if (t.broken_chain != null) {
    const seq = t.broken_chain;
    const button = h("button", { type: "button", class: "decide accept-chain", text: `Accept new chain from row ${seq}…` });
    button.addEventListener("click", () =>
      ask(
        `Table ${t.name}: accept row ${seq}, which does not link to row ${seq - 1}, as the start of a new chain? This is recorded with your name.`,
        `/api/floor/tables/${table}/accept-chain`,
        { seq },
        after,
      ),
    );
    buttons.push(button);
  }
  if (t.new_epoch) {
    const { seq, epoch } = t.new_epoch;
    const button = h("button", { type: "button", class: "decide accept-epoch", text: `Accept epoch ${epoch} from row ${seq}…` });
    button.addEventListener("click", () =>
      ask(
        `Table ${t.name}: its journal was restored from a backup without the floor's rows, or its station found its journal rolled back and began a new epoch (see the table's alert). Accept row ${seq} as the start of the table's epoch ${epoch}? The archived rows from row ${seq} on stay archived under epoch ${epoch - 1}; this is recorded with your name.`,
        `/api/floor/tables/${table}/accept-chain`,
        { seq },
        after,
      ),
    );
    buttons.push(button);
  }
  if (t.key && t.key.state === "pending" && t.key.fingerprint) {
    const fingerprint = t.key.fingerprint;
    const button = h("button", { type: "button", class: "decide accept-key", text: `Accept key ${fingerprint.slice(0, 8)}…` });
    button.addEventListener("click", () =>
      ask(
        `Table ${t.name}: its station names key ${fingerprint}. Compare it with \`station key show\` at the table: is it the table's key? Once accepted, only what this key signs counts for the table; this is recorded with your name.`,
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
    const what = a.resolved_by ? "resolved by" : "acknowledged by";
    line.append(h("span", { class: "decided", text: ` · ${what} ${by.by} at ${moment(by.decided)}: ${by.reason}` }));
  }
  if (maySupervise(me) && a.id && !a.resolved && !a.acknowledged) {
    const button = h("button", { type: "button", class: "decide acknowledge", text: "Acknowledge…" });
    button.addEventListener("click", () =>
      ask(`Acknowledge alert ${a.id} (${a.kind}${a.table ? `, table ${a.table}` : ""})? It stays open and in the history, with your name.`, `/api/floor/alerts/${a.id}/acknowledge`, {}, after),
    );
    line.append(" ", button);
  }
  return line;
}

/** A table's accepted gaps and chains, as its line shows them. */
export function acceptedLines(t) {
  if (!t.accepted.length) return null;
  return h(
    "ul",
    { class: "accepted" },
    ...t.accepted.map((d) => {
      const what =
        d.kind === "accept_gap" ? `${rows(d.from_seq, d.to_seq)} accepted as missing`
        : d.kind === "accept_key" ? `key ${d.hash} accepted`
        : d.kind === "set_key" ? `key ${d.hash} set by a supervisor`
        : d.epoch != null ? `epoch ${d.epoch} accepted from row ${d.from_seq}`
        : `new chain accepted from row ${d.from_seq}`;
      return h("li", { text: `${what} by ${d.by} at ${moment(d.decided)}: ${d.reason}` });
    }),
  );
}

// The journal: the newest rows first, filtered by errors or by who acted, and the export
// download. Drawn at most once per frame, however many rows a burst brings.

import { api } from "./api.js";
import { $, fill, h } from "./dom.js";
import { clock, describe, verdictText } from "./format.js";
import { say } from "./store.js";

const JOURNAL_SHOW = 200; // rows drawn (newest first)

export function mountJournal(store) {
  const actors = new Set();
  let queued = false;

  function noteActors(rows) {
    let fresh = false;
    for (const r of rows) {
      if (!actors.has(r.actor)) {
        actors.add(r.actor);
        fresh = true;
      }
    }
    if (!fresh) return;
    const select = $("j-actor");
    const chosen = select.value;
    const options = [...actors].sort().map((a) => h("option", { value: a, text: a }));
    fill(select, [h("option", { value: "", text: "everyone" }), ...options]);
    select.value = chosen;
  }

  function draw() {
    const { rows, rules } = store.get();
    const list = rows.list;
    noteActors(list);
    const errorsOnly = $("j-errors").checked;
    const actor = $("j-actor").value;
    const shown = [];
    for (let i = list.length - 1; i >= 0 && shown.length < JOURNAL_SHOW; i--) {
      const r = list[i];
      const bad = r.verdict && !r.verdict.ok;
      if (errorsOnly && !bad) continue;
      if (actor && r.actor !== actor) continue;
      shown.push(h("tr", { class: bad ? "bad" : r.event.type === "notice" ? "notice" : null, "data-seq": r.seq },
        h("td", { text: String(r.seq) }), h("td", { text: clock(r.ts) }),
        h("td", { class: "actor", text: r.actor }), h("td", { text: describe(r.event) }),
        h("td", { text: verdictText(r.verdict, rules.errors) })));
    }
    fill($("journal-body"), shown);
  }

  function queueDraw() {
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => {
      queued = false;
      draw();
    });
  }

  async function download() {
    try {
      const response = await api("/api/export", { raw: true });
      const blob = await response.blob();
      const name = /filename="([^"]+)"/.exec(response.headers.get("Content-Disposition") || "");
      const a = h("a", { href: URL.createObjectURL(blob), download: name ? name[1] : "journal.jsonl" });
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
    } catch (err) {
      say(store, `export: ${err.message}`, true);
    }
  }

  $("j-errors").addEventListener("change", draw);
  $("j-actor").addEventListener("change", draw);
  $("j-download").addEventListener("click", download);
  store.subscribe(["rows"], queueDraw);
}

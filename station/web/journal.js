// The journal: the newest rows first, filtered by errors or by who acted (a token's name,
// or the demo bot, a reader or the station with a badge: the demo bot's names are the demo
// tokens' names too), and the export download. Drawn at most once per frame, however many
// rows a burst brings. On a phone each row is two lines (style.css), so the verdict stays
// on the screen.

import { api } from "./api.js";
import { $, fill, h } from "./dom.js";
import { actorOf, actorText, badgeWords, clock, describe, verdictText } from "./format.js";
import { t } from "./i18n.js";
import { say } from "./store.js";

const JOURNAL_SHOW = 200; // rows drawn (newest first)

/** Who acted: the name, and a badge unless it is a token's name ("demo bot", "reader",
 * "station"). */
function actorCell(row, readerDriver) {
  const { name, badge } = actorOf(row, readerDriver);
  const tag = badge ? h("span", { class: `badge badge-${badge.replace("_", "-")}`, text: badgeWords(badge) }) : null;
  return h("td", { class: "actor", "data-source": row.source }, name, name && tag && " ", tag);
}

export function mountJournal(store) {
  const actors = new Set(); // actorText of every row seen: the filter's choices
  let queued = false;
  let readerDriver = null; // the station's reader: its rows are the demo bot's if it is `sim`

  function noteActors(rows) {
    let fresh = false;
    for (const r of rows) {
      const who = actorText(r, readerDriver);
      if (!actors.has(who)) {
        actors.add(who);
        fresh = true;
      }
    }
    if (!fresh) return;
    const select = $("j-actor");
    const chosen = select.value;
    const options = [...actors].sort().map((a) => h("option", { value: a, text: a }));
    fill(select, [h("option", { value: "", text: t("dash.everyone") }), ...options]);
    select.value = chosen;
  }

  function draw() {
    const { rows } = store.get();
    const list = rows.list;
    noteActors(list);
    const errorsOnly = $("j-errors").checked;
    const actor = $("j-actor").value;
    const shown = [];
    for (let i = list.length - 1; i >= 0 && shown.length < JOURNAL_SHOW; i--) {
      const r = list[i];
      const bad = r.verdict && !r.verdict.ok;
      if (errorsOnly && !bad) continue;
      if (actor && actorText(r, readerDriver) !== actor) continue;
      shown.push(h("tr", { class: bad ? "bad" : r.event.type === "notice" ? "notice" : null, "data-seq": r.seq },
        h("td", { class: "seq", text: String(r.seq) }), h("td", { class: "time", text: clock(r.ts) }),
        actorCell(r, readerDriver), h("td", { class: "event", text: describe(r.event) }),
        h("td", { class: "verdict", text: verdictText(r.verdict, r.event) })));
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
      say(store, t("dash.feed_failed", { what: t("dash.what_export"), error: err.message }), true);
    }
  }

  $("j-errors").addEventListener("change", draw);
  $("j-actor").addEventListener("change", draw);
  $("j-download").addEventListener("click", download);
  store.subscribe(["rows"], queueDraw);
  store.subscribe(["reader"], ({ reader }) => {
    const driver = reader?.driver ?? null;
    if (driver === readerDriver) return;
    readerDriver = driver;
    actors.clear(); // the badges changed: the filter's choices are made again
    queueDraw();
  });
}

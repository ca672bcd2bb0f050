// The protection alerts (SHOE_SEQUENCE, WEAK_SHUFFLE): a banner of their own, newest
// first, with what the station advises. They come as journal notices (actor
// "protection"), live on the WebSocket like every row; after a reload the latest are
// read from /api/protection. "Seen" hides those shown until a new one comes (this tab).

import { api } from "./api.js";
import { $, fill, h } from "./dom.js";
import { clock } from "./format.js";

const SEEN = "station-protection-seen";
const SHOWN = 5;

function fromRow(row) {
  return { ...row.event, seq: row.seq, ts: row.ts };
}

export function mountProtection(store) {
  let fetched = [];
  let asked = false;
  let seen = Number(sessionStorage.getItem(SEEN) || 0);

  function alerts() {
    const bySeq = new Map(fetched.filter((a) => a.seq != null).map((a) => [a.seq, a]));
    for (const row of store.get().rows.list) {
      if (row.verdict == null && row.event.type === "notice" && row.event.alert) bySeq.set(row.seq, fromRow(row));
    }
    return [...bySeq.values()].sort((a, b) => b.seq - a.seq);
  }

  function render() {
    const list = alerts().filter((a) => a.seq > seen);
    $("protection").hidden = list.length === 0;
    if (!list.length) return;
    fill($("protection-list"), list.slice(0, SHOWN).map((a) =>
      h("li", {},
        h("strong", { text: `${a.alert}: ` }),
        `${a.message} `,
        h("span", { class: "advice", text: `What to do: ${a.advice}.` }),
        h("span", { class: "when", text: ` (row ${a.seq}${a.ts ? `, ${clock(a.ts)}` : ""})` }))));
    if (list.length > SHOWN) $("protection-list").append(h("li", { text: `and ${list.length - SHOWN} more (the journal has them all)` }));
  }

  async function load() {
    try {
      const answer = await api("/api/protection");
      fetched = answer.alerts || [];
      render();
    } catch { /* a detail: the live rows still bring new alerts */ }
  }

  $("protection-seen").addEventListener("click", () => {
    const [newest] = alerts();
    if (newest) seen = newest.seq;
    sessionStorage.setItem(SEEN, String(seen));
    render();
  });
  store.subscribe(["rows"], render);
  store.subscribe(["conn"], ({ conn }) => {
    if (conn.status === "live" && !asked) {
      asked = true;
      load();
    } else if (conn.status !== "live") {
      asked = false;
    }
  });
}

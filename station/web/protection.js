// The protection alerts (SHOE_SEQUENCE, WEAK_SHUFFLE): a banner of their own, newest
// first, with what the station advises. They come as journal notices (actor
// "protection"), live on the WebSocket like every row; after a reload the latest are
// read from /api/protection. "Seen" hides those shown until a new one comes (this tab).

import { api } from "./api.js";
import { $, fill, h } from "./dom.js";
import { alertSentence, clock } from "./format.js";
import { num, t } from "./i18n.js";

const SEEN = "station-protection-seen";
const SHOWN = 5;

/** An alert's code in words ("SHOE_SEQUENCE" -> "repeated shoe sequence"). */
function alertWords(code) {
  const words = t(`alert.${code}`);
  return words === `alert.${code}` ? code : words;
}

/** What to do, in the page's words for the alert's code (else the station's). */
function adviceWords(a) {
  const words = t(`advice.${a.alert}`);
  return words === `advice.${a.alert}` ? a.advice : words;
}

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
        h("strong", { text: `${alertWords(a.alert)}: ` }),
        `${alertSentence(a)} `,
        h("span", { class: "advice", text: t("dash.protection_advice", { advice: adviceWords(a) }) }),
        " ",
        h("span", { class: "when", text: a.ts ? t("dash.protection_row_at", { seq: a.seq, time: clock(a.ts) }) : t("dash.protection_row", { seq: a.seq }) }))));
    if (list.length > SHOWN) $("protection-list").append(h("li", { text: t("dash.more_in_journal", { n: num(list.length - SHOWN) }) }));
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

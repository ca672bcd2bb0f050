// The pace panel: the current shoe and the shift (GET /api/pace), read again when a
// round ends, is voided or a shoe starts (rows on the WebSocket), at most once a second.

import { api } from "./api.js";
import { $, fill, h } from "./dom.js";
import { list, num, t } from "./i18n.js";

/** The figures, each worded by the catalogue's `pace.<figure>` (the report's words too). */
const LINES = ["rounds", "rounds_per_hour", "seconds_per_round", "close_to_result_seconds",
  "suspensions_per_100_rounds", "resolve_seconds", "voided_rounds"];

const show = (v) => (v == null ? "–" : num(v));

export function mountPace(store) {
  let timer = null;
  let seen = 0;

  function render(answer) {
    const shoe = answer.shoe || {};
    $("pace-shift").textContent = t("dash.pace_hours", { h: num(answer.hours) });
    fill($("pace-body"), LINES.map((key) =>
      h("tr", {}, h("th", { scope: "row", text: t(`pace.${key}`) }),
        h("td", { text: show(shoe[key]) }), h("td", { text: show(answer.shift[key]) }))));
    const codes = Object.entries(answer.shift.suspensions_by_code || {});
    $("pace-codes").textContent = codes.length ? t("dash.pace_codes", { list: list(codes.map(([c, n]) => `${c} ${num(n)}`), "unit") }) : "";
  }

  async function load() {
    timer = null;
    try {
      render(await api("/api/pace"));
    } catch { /* a detail: the next round asks again */ }
  }

  function soon() {
    if (timer == null) timer = setTimeout(load, 1000);
  }

  store.subscribe(["rows"], ({ rows }) => {
    const fresh = rows.list.filter((r) => r.seq > seen);
    if (rows.list.length) seen = Math.max(seen, rows.list[rows.list.length - 1].seq);
    if (fresh.some((r) => r.verdict && (r.verdict.result || r.verdict.voided_round != null || r.event.type === "shoe"))) soon();
  });
  store.subscribe(["conn"], ({ conn }) => { if (conn.status === "live") soon(); });
}

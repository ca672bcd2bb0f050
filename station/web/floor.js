// The floor view: every table at a glance from GET /api/floor/tables, asked every
// POLL_MS. Suspended tables are highlighted (and listed in the banner), offline ones
// dashed. Same login as a station's dashboard: the token lives in sessionStorage only.
// A supervisor also gets the decisions' buttons (floor-decide.js).
// Plain ES modules, no framework, nothing from a CDN; every text goes in as text.

import { ApiError, api, token } from "./api.js";
import { $, fill, h } from "./dom.js";
import { acceptedLines, alertLine, maySupervise, setUpDecisions, tableButtons } from "./floor-decide.js";
import { clock, gameTitle, handTitle, moment, plural } from "./format.js";

const POLL_MS = 2000;
const WINNER_LETTER = { player: "P", banker: "B", tie: "T" };
const OUTCOME_LETTER = { win: "W", lose: "L", tie: "T" };
let me = null;
let timer = null;

function readable() {
  return Boolean(me && (me.acts_as || me.public_read));
}

function setConn(status, text) {
  const el = $("conn");
  el.className = `conn conn-${status}`;
  el.textContent = text;
}

async function whoami() {
  me = await api("/api/whoami");
  $("site").textContent = me.site;
  document.title = `Floor ${me.site} · Baccarat`;
  const named = me.name != null;
  $("who").hidden = !named;
  $("login").hidden = named;
  $("who-name").textContent = named ? `${me.name} (${me.role})` : "";
  document.body.dataset.role = me.acts_as || "anonymous";
  $("main").hidden = !readable();
  if (!readable()) {
    $("suspended").hidden = true;
    setConn("refused", me.role === "rig" ? "A rig token cannot see the floor" : "Log in to see the floor");
  }
}

function stop() {
  if (timer != null) clearTimeout(timer);
  timer = null;
}

async function poll() {
  stop();
  if (!readable()) return;
  try {
    const [floor, { alerts }] = await Promise.all([api("/api/floor/tables"), api("/api/floor/alerts")]);
    render(floor, alerts);
    setConn("live", `Live · ${clock(new Date())}`);
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) {
      token.clear();
      $("login-error").textContent = "Your token is no longer valid: log in again.";
      await whoami().catch(() => {});
      return;
    }
    setConn(err.status === 403 ? "refused" : "down", `Not up to date: ${err.message}`);
  }
  timer = setTimeout(poll, POLL_MS);
}

function fact(label, ...value) {
  return h("div", {}, h("dt", { text: label }), h("dd", {}, ...value));
}

/** A count the floor wants at 0 (rows behind, rows held): marked when it is not. */
function lag(n, words) {
  return h("span", { class: `behind${n ? " lagging" : ""}`, text: `${n ?? "–"} ${words}` });
}

function bead(result, game) {
  const winner = result.winner || "";
  const title = Object.entries(result.totals).map(([hand, total]) => `${handTitle(game, hand).toLowerCase()} ${total}`).join(", ");
  if (result.outcomes) {
    // Baccarat banque: no one winner, each tableau's outcome against the banker, tableau
    // 1's letter then tableau 2's, each in its outcome's colour (the legend says so).
    const tableaux = Object.entries(result.outcomes);
    const words = tableaux.map(([hand, outcome]) => `${handTitle(game, hand).toLowerCase()} ${outcome}`).join(", ");
    return h("li", { class: "outcomes", title: `Round ${result.round}: ${words} (${title})` },
      ...tableaux.map(([, outcome]) => h("span", { class: outcome, text: OUTCOME_LETTER[outcome] || "·" })));
  }
  return h("li", { class: winner, title: `Round ${result.round}: ${winner || "result"} (${title})`, text: WINNER_LETTER[winner] || "·" });
}

/** What a banque table's beads mean: its rounds have no one winner. */
const BANQUE_LEGEND = "Each round: tableau 1's letter, then tableau 2's, against the banker: W wins, L loses, T ties.";

function silence(t) {
  if (t.online) return "online";
  if (t.silent_for == null) return "offline · never heard";
  return `offline · silent ${Math.round(t.silent_for)} s`;
}

/** The table's key as the floor holds it, and what came in its name unsigned. */
function witness(t) {
  const key = t.key;
  const said = !key ? "unsigned station: nothing it sends can be checked"
    : key.state === "pending" ? (key.fingerprint ? `key ${key.fingerprint} named by the station: waits for a supervisor` : "rows signed by a key the floor does not know")
    : `key ${key.fingerprint.slice(0, 16)}… (${key.origin})`;
  const parts = [h("span", { class: `key key-${key ? key.state : "none"}`, title: key?.public_key || "", text: said })];
  if (t.epoch > 1) parts.push(" · ", h("span", { class: "epoch", text: `epoch ${t.epoch}` }));
  if (t.forged) parts.push(" · ", lag(t.forged, "forged rows held"));
  if (t.forged_messages) parts.push(" · ", lag(t.forged_messages, "forged messages ignored"));
  return parts;
}

/** Where the table's shoe is: "2, round 14", "2, 30 rounds done"; "–" before any. */
function progress(t) {
  if (t.shoe == null) return "–";
  const round = t.round != null ? `round ${t.round}` : t.rounds ? `${plural(t.rounds, "round")} done` : "no round yet";
  return `${t.shoe}, ${round}`;
}

function tableCard(t) {
  const name = t.dashboard
    ? h("a", { href: t.dashboard, target: "_blank", rel: "noopener", title: `Open ${t.name}'s dashboard`, text: t.name })
    : t.name;
  const ident = [t.game ? gameTitle(t.game) : null, t.name !== t.id ? `table ${t.id}` : null].filter(Boolean).join(" · ");
  const banque = t.game === "baccarat_banque";
  const classes = ["tcard", t.suspended ? "suspended" : "", t.online ? "online-now" : "offline", t.alerts.length ? "alerted" : ""];
  const state = t.suspended
    ? `SUSPENDED: ${t.suspension.explanation}`
    : !t.state_known ? "State not known until the next shoe"
    : t.in_play ? "In play" : t.shoe ? "Between shoes" : "No shoe yet";
  const card = h(
    "article",
    { class: classes.filter(Boolean).join(" "), "data-table": t.id, "aria-label": `Table ${t.name}` },
    h("header", {}, h("h2", {}, name), h("span", { class: `online ${t.online ? "yes" : "no"}`, text: silence(t) })),
    ident ? h("p", { class: "ident", text: ident }) : null,
    h("p", { class: "state", text: state }),
    h(
      "dl",
      {},
      fact("Shoe", progress(t)),
      fact("Archive", `to row ${t.archived_seq ?? "–"} · `, lag(t.rows_behind, "rows behind"), " · ", lag(t.held, "held"), ...(t.dropped ? [" · ", lag(t.dropped, "not kept (held full)")] : [])),
      fact("Signed", ...witness(t)),
    ),
    t.expecting && !t.suspended ? h("p", { class: "expecting", text: `Waiting for: ${t.expecting}` }) : null,
    h("ol", { class: "beads", "aria-label": "Last results" }, ...t.results.map((r) => bead(r, t.game))),
    banque && t.results.length ? h("p", { class: "legend", text: BANQUE_LEGEND }) : null,
    t.problem ? h("p", { class: "problem", text: t.problem }) : null,
    t.alerts.length ? h("ul", { class: "talerts" }, ...t.alerts.map((a) => alertLine(a, me, poll, `${a.kind}: ${a.message}`))) : null,
    acceptedLines(t),
    maySupervise(me) ? tableButtons(t, poll) : null,
  );
  return card;
}

function render(floor, alerts) {
  const broker = $("broker");
  broker.textContent = `Broker: ${floor.broker}`;
  broker.className = `broker${floor.broker_up ? "" : " down"}`;
  const suspended = floor.tables.filter((t) => t.suspended);
  const offline = floor.tables.filter((t) => !t.online);
  $("summary").textContent =
    `${floor.tables.length} tables · ${floor.tables.length - offline.length} online · ` +
    `${suspended.length} suspended · offline after ${floor.offline_after} s without a heartbeat`;
  $("suspended").hidden = suspended.length === 0;
  $("suspended-title").textContent = suspended.length === 1 ? "1 TABLE SUSPENDED" : `${suspended.length} TABLES SUSPENDED`;
  fill($("suspended-list"), suspended.map((t) => h("li", { "data-table": t.id, text: `${t.name}: ${t.suspension.explanation}` })));
  fill($("tables"), floor.tables.map(tableCard));
  $("no-alerts").hidden = alerts.length > 0;
  fill(
    $("alerts"),
    alerts.map((a) => alertLine(a, me, poll, `${moment(a.raised)} · ${a.table ? `table ${a.table}` : "the floor"}: ${a.message}`)),
  );
}

async function login(ev) {
  ev.preventDefault();
  const value = $("token").value.trim();
  $("login-error").textContent = "";
  if (!value) return;
  token.set(value);
  try {
    await whoami();
  } catch (err) {
    token.clear();
    $("login-error").textContent = err.status === 401 ? "This token is not known here." : err.message;
    await whoami().catch(() => {});
    return;
  }
  $("token").value = "";
  poll();
}

async function logout() {
  stop();
  token.clear();
  await whoami().catch(() => {});
  poll();
}

async function main() {
  $("login").addEventListener("submit", login);
  $("logout").addEventListener("click", logout);
  setUpDecisions();
  try {
    await whoami();
  } catch (err) {
    if (!(err instanceof ApiError && err.status === 401)) throw err;
    token.clear();
    await whoami();
    $("login-error").textContent = "Your token is no longer valid: log in again.";
  }
  $("login-button").disabled = false;
  poll();
}

main().catch((err) => {
  document.body.prepend(h("p", { class: "fatal", role: "alert", text: `The floor view could not start: ${err.message}` }));
});

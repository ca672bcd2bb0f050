// The floor view: every table at a glance from GET /api/floor/tables, asked every
// POLL_MS. Suspended tables are highlighted (and listed in the banner), offline ones
// dashed. Same login as a station's dashboard: the token lives in sessionStorage only.
// A supervisor also gets the decisions' buttons (floor-decide.js).
// Plain ES modules, no framework, nothing from a CDN; every text goes in as text.

import { ApiError, api, token } from "./api.js";
import { $, fill, h } from "./dom.js";
import { acceptedLines, alertLine, maySupervise, setUpDecisions, tableButtons } from "./floor-decide.js";
import { alertSentence, clock, expectingWords, explain, gameTitle, handWord, moment, roleWords, winnerName } from "./format.js";
import { chosenLanguage, count, list, mountLanguageSwitch, num, t, useLanguage } from "./i18n.js";

const POLL_MS = 2000;
const WINNER_LETTER = { player: "letter_player", banker: "letter_banker", tie: "letter_tie" };
const OUTCOME_LETTER = { win: "letter_win", lose: "letter_lose", tie: "letter_tie" };
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
  $("floor-title").textContent = t("floor.title", { site: me.site });
  document.title = t("floor.doc_title", { site: me.site });
  const named = me.name != null;
  $("who").hidden = !named;
  $("login").hidden = named;
  $("who-name").textContent = named ? t("ui.who", { name: me.name, role: roleWords(me.role) }) : "";
  document.body.dataset.role = me.acts_as || "anonymous";
  $("main").hidden = !readable();
  if (!readable()) {
    $("suspended").hidden = true;
    setConn("refused", t(me.role === "rig" ? "floor.rig_refused" : "floor.log_in"));
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
    setConn("live", t("floor.live_at", { time: clock(new Date()) }));
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) {
      token.clear();
      $("login-error").textContent = t("ui.token_expired");
      await whoami().catch(() => {});
      return;
    }
    setConn(err.status === 403 ? "refused" : "down", t("floor.stale", { error: err.message }));
  }
  timer = setTimeout(poll, POLL_MS);
}

function fact(label, ...value) {
  return h("div", {}, h("dt", { text: label }), h("dd", {}, ...value));
}

/** A count the floor wants at 0 (rows behind, rows held): marked when it is not. */
function lag(n, key) {
  return h("span", { class: `behind${n ? " lagging" : ""}`, text: t(key, { n: n == null ? "–" : num(n) }) });
}

/** An alert's kind in words (a protection alert's code, a gap, a broken chain, ...). */
export function kindWords(kind) {
  for (const key of [`alert.${kind}`, `kind.${kind}`]) {
    const words = t(key);
    if (words !== key) return words;
  }
  return kind;
}

function bead(result, game) {
  const winner = result.winner || "";
  const title = list(Object.entries(result.totals).map(([hand, total]) => t("floor.hand_total", { hand: handWord(game, hand), total })), "unit");
  if (result.outcomes) {
    // Baccarat banque: no one winner, each tableau's outcome against the banker, tableau
    // 1's letter then tableau 2's, each in its outcome's colour (the legend says so).
    const tableaux = Object.entries(result.outcomes);
    const words = list(tableaux.map(([hand, outcome]) => `${handWord(game, hand)} ${t(`outcome.${outcome}`)}`), "unit");
    return h("li", { class: "outcomes", title: t("floor.round_title", { n: result.round, words, totals: title }) },
      ...tableaux.map(([, outcome]) => h("span", { class: outcome, text: OUTCOME_LETTER[outcome] ? t(OUTCOME_LETTER[outcome]) : "·" })));
  }
  return h("li", { class: winner, title: t("floor.round_title", { n: result.round, words: winner ? winnerName(winner, game) : "", totals: title }),
    text: WINNER_LETTER[winner] ? t(WINNER_LETTER[winner]) : "·" });
}

/** What a banque table's beads mean: its rounds have no one winner. */


/** The catalogue's words (`t` names a table in this file's functions). */
const tr = (key, values) => t(key, values);

/** A suspension's words from its code; a journal that cannot be written says why as its
 * station said it (the OS's words). */
function suspensionWords(s) {
  if (s.code === "JOURNAL_UNWRITABLE") {
    const detail = s.explanation.replace(/^the journal cannot be (written|opened): /, "");
    return detail ? tr("floor.journal_down_why", { words: tr("floor.journal_down"), detail }) : tr("floor.journal_down");
  }
  return explain(s.code);
}

/** What a table waits for, from its codes when the floor sends them (`due`), else the
 * station's words. */
function waitingWords(table) {
  return table.due !== undefined ? expectingWords({ due: table.due, burns_due: table.burns_due, option: table.option, game: table.game })
    : table.expecting;
}

/** An alert's figures as the page writes them: numbers the locale's way, a time as a
 * moment, anything else (a hash's prefix, a key's fingerprint, a table's id) as sent. */
function figures(params) {
  return Object.fromEntries(Object.entries(params).map(([name, v]) =>
    [name, typeof v === "number" ? num(v) : name === "at" ? moment(v) : String(v ?? "–")]));
}

/** An alert's words in the page's language, from its code and figures (the floor
 * service's `said` codes; a protection alert's sentence from its own fields, as the
 * dashboard says it); its message as the service wrote it only for a code this page does
 * not know (an archive older than codes, a newer floor service). */
export function messageWords(a) {
  const p = a.params || {};
  const own = { ...p, message: a.message };
  if (a.code === "station_protection") {
    return t("said.station_protection", { shoe: num(p.shoe_seq), words: alertSentence(own), advice: t(`advice.${p.alert}`) });
  }
  if (a.code === "floor_protection") {
    return t("said.floor_protection", { table: p.table, shoe: num(p.shoe_seq), seq: num(p.seq), words: alertSentence(own), k: num(p.floor_k) });
  }
  const key = `said.${a.code}`;
  const words = a.code ? t(key, figures(p)) : key;
  return words === key ? a.message : words;
}

/** What the table's station told the floor (a message it did not sign at its subject, a
 * new epoch, a refusal; or a conflict the floor made from heartbeats it ignored), in the
 * page's words from its code and figures; the station's own words from an older one. */
function stationSaid(a) {
  const p = a.params || {};
  const key = p.why ? `floor.station_said.${a.code}_${p.why}` : `floor.station_said.${a.code}`;
  const words = Object.keys(p).length ? t(key, figures(p)) : key;
  const said = words === key ? a.message : words;
  if (!a.heartbeats_ignored) return said;
  return `${said} · ${t("floor.heartbeats_ignored", { n: num(a.heartbeats_ignored), seq: a.ignored_seq == null ? "–" : num(a.ignored_seq) })}`;
}

/** The floor service's link to its broker in words: its state, and the broker's or the
 * network's own reason after "refused:" or "unreachable:". */
function brokerWords(text) {
  const plain = { connected: "floor.broker.connected", "not connected yet": "floor.broker.not_yet",
                  "disconnected: reconnecting": "floor.broker.reconnecting" }[text];
  if (plain) return tr(plain);
  const why = /^(refused|unreachable): (.*)$/.exec(text);
  return why ? tr(`floor.broker.${why[1]}`, { detail: why[2] }) : text;
}

function silence(t) {
  if (t.online) return tr("floor.online");
  if (t.silent_for == null) return tr("floor.never_heard");
  return tr("floor.silent", { n: num(Math.round(t.silent_for)) });
}

/** The table's key as the floor holds it, and what came in its name unsigned. */
function witness(t) {
  const key = t.key;
  const origin = tr(`floor.origin.${key?.origin}`);
  const said = !key ? tr("floor.unsigned")
    : key.state === "pending" ? (key.fingerprint ? tr("floor.key_pending", { fp: key.fingerprint }) : tr("floor.key_unknown"))
    : tr("floor.key", { fp: key.fingerprint.slice(0, 16), origin: origin === `floor.origin.${key.origin}` ? key.origin : origin });
  const parts = [h("span", { class: `key key-${key ? key.state : "none"}`, title: key?.public_key || "", text: said })];
  if (t.epoch > 1) parts.push(" · ", h("span", { class: "epoch", text: tr("floor.epoch", { n: t.epoch }) }));
  if (t.forged) parts.push(" · ", lag(t.forged, "floor.forged_rows"));
  if (t.forged_messages) parts.push(" · ", lag(t.forged_messages, "floor.forged_messages"));
  return parts;
}

/** Where the table's shoe is: "2, round 14", "2, 30 rounds done"; "–" before any. */
function progress(t) {
  if (t.shoe == null) return "–";
  if (t.round != null) return tr("floor.progress_round", { shoe: t.shoe, n: t.round });
  return t.rounds ? tr("floor.progress_done", { shoe: t.shoe, rounds: count(t.rounds, "dash.n_rounds") }) : tr("floor.progress_none", { shoe: t.shoe });
}

function tableCard(t) {
  const name = t.dashboard
    ? h("a", { href: t.dashboard, target: "_blank", rel: "noopener", title: tr("floor.open_dashboard", { name: t.name }), text: t.name })
    : t.name;
  const ident = [t.game ? gameTitle(t.game) : null, t.name !== t.id ? tr("floor.table_id", { id: t.id }) : null].filter(Boolean).join(" · ");
  const banque = t.game === "baccarat_banque";
  const classes = ["tcard", t.suspended ? "suspended" : "", t.online ? "online-now" : "offline", t.alerts.length ? "alerted" : ""];
  const state = t.suspended
    ? tr("floor.suspended", { words: suspensionWords(t.suspension) })
    : !t.state_known ? tr("floor.state_unknown")
    : tr(t.in_play ? "floor.in_play" : t.shoe ? "floor.between_shoes" : "floor.no_shoe");
  const card = h(
    "article",
    { class: classes.filter(Boolean).join(" "), "data-table": t.id, "aria-label": tr("floor.table_aria", { name: t.name }) },
    h("header", {}, h("h2", {}, name), h("span", { class: `online ${t.online ? "yes" : "no"}`, text: silence(t) })),
    ident ? h("p", { class: "ident", text: ident }) : null,
    h("p", { class: "state", text: state }),
    h(
      "dl",
      {},
      fact(tr("floor.shoe"), progress(t)),
      fact(tr("floor.archive"), tr("floor.archive_to", { seq: t.archived_seq ?? "–" }), lag(t.rows_behind, "floor.rows_behind"), " · ", lag(t.held, "floor.held"), ...(t.dropped ? [" · ", lag(t.dropped, "floor.dropped")] : [])),
      fact(tr("floor.signed"), ...witness(t)),
    ),
    t.expecting && !t.suspended ? h("p", { class: "expecting", text: tr("floor.waiting_for", { words: waitingWords(t) }) }) : null,
    h("ol", { class: "beads", "aria-label": tr("dash.last_results") }, ...t.results.map((r) => bead(r, t.game))),
    banque && t.results.length ? h("p", { class: "legend", text: tr("floor.banque_legend") }) : null,
    t.problem ? h("p", { class: "problem", text: messageWords({ code: t.problem_code, params: t.problem_params, message: t.problem }) }) : null,
    t.station_alerts?.length ? h("ul", { class: "salerts" }, ...t.station_alerts.map((a) => h("li", { text: stationSaid(a) }))) : null,
    t.alerts.length ? h("ul", { class: "talerts" }, ...t.alerts.map((a) => alertLine(a, me, poll, tr("floor.alert_words", { kind: kindWords(a.kind), message: messageWords(a) })))) : null,
    acceptedLines(t),
    maySupervise(me) ? tableButtons(t, poll) : null,
  );
  return card;
}

function render(floor, alerts) {
  const broker = $("broker");
  broker.textContent = t("floor.broker", { broker: brokerWords(floor.broker) });
  broker.className = `broker${floor.broker_up ? "" : " down"}`;
  const suspended = floor.tables.filter((t) => t.suspended);
  const offline = floor.tables.filter((t) => !t.online);
  $("summary").textContent = t("floor.summary", { tables: count(floor.tables.length, "floor.n_tables"),
    online: num(floor.tables.length - offline.length), suspended: num(suspended.length), s: num(floor.offline_after) });
  $("suspended").hidden = suspended.length === 0;
  $("suspended-title").textContent = count(suspended.length, "floor.n_suspended");
  fill($("suspended-list"), suspended.map((table) => h("li", { "data-table": table.id,
    text: t("floor.suspended_line", { name: table.name, words: suspensionWords(table.suspension) }) })));
  fill($("tables"), floor.tables.map(tableCard));
  $("no-alerts").hidden = alerts.length > 0;
  fill(
    $("alerts"),
    alerts.map((a) => alertLine(a, me, poll, t(a.table ? "floor.alert_line" : "floor.alert_line_floor",
      { when: moment(a.raised), table: a.table, message: `${kindWords(a.kind)} · ${messageWords(a)}` }))),
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
    $("login-error").textContent = err.status === 401 ? t("floor.token_unknown") : err.message;
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
  // The floor's default language (`[floor] language`) comes with whoami, asked once before
  // any word is drawn; a person's choice and their browser's come first.
  const first = await api("/api/whoami").catch(() => null);
  useLanguage(chosenLanguage(first?.language));
  mountLanguageSwitch($("language"));
  $("login").addEventListener("submit", login);
  $("logout").addEventListener("click", logout);
  setUpDecisions();
  try {
    await whoami();
  } catch (err) {
    if (!(err instanceof ApiError && err.status === 401)) throw err;
    token.clear();
    await whoami();
    $("login-error").textContent = t("ui.token_expired");
  }
  $("login-button").disabled = false;
  poll();
}

main().catch((err) => {
  document.body.prepend(h("p", { class: "fatal", role: "alert", text: t("floor.fatal", { error: err.message }) }));
});

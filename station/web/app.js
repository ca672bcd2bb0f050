// The supervisor dashboard: login, the live table over WS /api/live, the suspension
// workflow, the roads, the shoe's history, the journal and the odds.
// Plain ES modules, no framework: it must stay quick on a modest dealer PC.

import { api, ApiError, post, token } from "./api.js";
import { face, label, total } from "./cards.js";
import { $, clock, fill, h } from "./dom.js";
import { connectLive } from "./live.js";
import { drawRoads } from "./roads.js";

const JOURNAL_KEEP = 500;    // rows kept in the page
const JOURNAL_SHOW = 200;    // rows drawn (newest first)
const ACTIONS = {
  shoe: { words: "Start a new shoe?", done: "new shoe" },
  close_bets: { words: "No more bets: close betting for the next round?", done: "no more bets" },
  resume: { words: "Resume the table?", done: "resume" },
  void: { words: "Void the round in progress? Its cards are discarded and its bets refunded.", done: "void round" },
  end_shoe: { words: "End the shoe now? A round in progress is voided.", done: "end shoe" },
};

const ui = {
  me: null,            // {name, role, acts_as, public_read, table}
  rules: null,         // {errors, event_roles, roles}
  state: null,         // the last table snapshot
  rows: [],            // journal rows (oldest first)
  rowBySeq: new Map(),
  actors: new Set(),
  live: null,
  refreshKey: "",
  refreshTimer: null,
  drawQueued: false,
};

// -- roles -----------------------------------------------------------------------------

function rank(role) {
  return role ? ui.rules.roles.indexOf(role) : -1;
}

function may(eventType) {
  const needed = ui.rules.event_roles[eventType];
  return ui.me && ui.me.acts_as && rank(ui.me.acts_as) >= rank(needed);
}

// -- login -----------------------------------------------------------------------------

async function whoami() {
  ui.me = await api("/api/whoami");
  $("table-id").textContent = ui.me.table;
  document.title = `Table ${ui.me.table} · Baccarat station`;
  const named = ui.me.name != null;
  $("who").hidden = !named;
  $("login").hidden = named;
  $("who-name").textContent = named ? `${ui.me.name} (${ui.me.role})` : "";
  document.body.dataset.role = ui.me.acts_as || "anonymous";
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
    $("login-error").textContent = err.status === 401 ? "This token is not known to the station." : err.message;
    return;
  }
  $("token").value = "";
  await start();
}

async function logout() {
  token.clear();
  if (ui.live) ui.live.close();
  ui.live = null;
  await whoami().catch(() => {});
  await start();
}

// -- actions ---------------------------------------------------------------------------

function confirmAction(text) {
  const dialog = $("confirm");
  $("confirm-text").textContent = text;
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "ok"), { once: true });
    dialog.returnValue = "";
    dialog.showModal();
  });
}

function pickedCard() {
  const r = $("pick-rank").value;
  const s = $("pick-suit").value;
  return r && s ? r + s : null;
}

async function act(button) {
  const type = button.dataset.event;
  const event = { type };
  let words = ACTIONS[type].words;
  if (button.hasAttribute("data-with-card")) {
    const card = pickedCard();
    if (!card) return;
    event.card = card;
    words = `Resume with the card ${label(card)} (read by eye)? It is placed where a card is due.`;
  }
  if (!(await confirmAction(words))) return;
  button.disabled = true;
  try {
    const verdict = await post(event);
    const row = ui.rowBySeq.get(verdict.seq);  // the journal's row says who did it
    if (row) showAction(row);
    else say(`${ACTIONS[type].done}${event.card ? ` ${label(event.card)}` : ""} by ${ui.me.name}`
             + `${verdict.ok ? "" : ` → ${verdict.error}: ${explain(verdict.error)}`} (row ${verdict.seq})`, !verdict.ok);
    if (event.card) { $("pick-rank").value = ""; $("pick-suit").value = ""; }
  } catch (err) {
    say(`${ACTIONS[type].done}: ${err.message}`, true);
    if (err instanceof ApiError && err.status === 401) await logout();
  } finally {
    render();
  }
}

function say(text, bad = false) {
  const el = $("last-action");
  el.textContent = text;
  el.classList.toggle("error", bad);
}

function explain(code) {
  return code ? ui.rules.errors[code] || code : "ok";
}

// -- the live table --------------------------------------------------------------------

function onHello(message, resumed) {
  ui.state = message.state;
  if (!resumed) loadJournal(message.seq);
  render();
  refresh(true);
}

function onRow(row) {
  addRow(row);
  const type = row.event.type;
  if (type in ACTIONS) showAction(row);
}

/** The last dealer or supervisor action, with who did it (from the journal row). */
function showAction(row) {
  const v = row.verdict;
  const refused = v && !v.ok ? ` → ${v.error}: ${explain(v.error)}` : "";
  say(`${clock(row.ts)} ${ACTIONS[row.event.type].done}${row.event.card ? ` ${label(row.event.card)}` : ""}`
      + ` by ${row.actor}${refused} (row ${row.seq})`, Boolean(refused));
}

function onState(state) {
  ui.state = state;
  render();
  refresh(false);
}

function onStatus(status, reason) {
  const el = $("conn");
  el.className = `conn conn-${status}`;
  el.textContent = status === "live" ? "Live"
    : status === "refused" ? `Not allowed to watch: ${reason || "log in"}`
    : `Disconnected: reconnecting…${reason ? ` (${reason})` : ""}`;
  document.body.classList.toggle("offline", status !== "live");
}

function render() {
  const st = ui.state;
  if (!st) return;
  renderBanner(st);
  renderRound(st);
  renderProgress(st);
  renderActions(st);
}

function renderBanner(st) {
  const banner = $("banner");
  const susp = st.suspension;
  banner.hidden = !susp;
  document.body.classList.toggle("suspended", Boolean(susp));
  if (!susp) return;
  $("banner-reason").textContent = ui.rules.errors[susp.code] || susp.code;
  const row = ui.rowBySeq.get(susp.since_seq);
  const when = row ? ` at ${clock(row.ts)}` : "";
  const card = susp.card ? ` · card: ${label(susp.card)}`
    : susp.code === "UNREADABLE_CARD" ? ` · card: unreadable${may("resume") ? " (enter it below as read by eye)" : ""}` : "";
  $("banner-detail").textContent = `${susp.code}${card} · since row ${susp.since_seq ?? "?"}${when}`;
  fill($("banner-later"), susp.later.map((l) =>
    h("li", { text: `then ${l.code}${l.card ? ` (${label(l.card)})` : ""}: ${ui.rules.errors[l.code] || ""}` })));
  if (!row && susp.since_seq) fetchRow(susp.since_seq);
}

async function fetchRow(seq) {
  try {
    const { events } = await api(`/api/journal?after=${seq - 1}&limit=1`);
    if (events.length) { ui.rowBySeq.set(events[0].seq, events[0]); render(); }
  } catch { /* the time is a detail; the banner stands without it */ }
}

function renderRound(st) {
  const rnd = st.round;
  const last = st.last_result;
  let player, banker, title, outcome = "";
  if (rnd) {
    player = rnd.player; banker = rnd.banker;
    title = `Round ${rnd.number}${st.last_round === rnd.number ? " (last round)" : ""}`;
  } else if (last) {
    player = last.player; banker = last.banker;
    title = `Round ${last.round} (complete)`;
    outcome = winnerWords(last);
  } else {
    player = []; banker = [];
    title = st.in_play ? "Waiting for the first round" : "No shoe in play";
  }
  $("round-title").textContent = title;
  fillCards("player-cards", player, ["P1", "P2", "P3"]);
  fillCards("banker-cards", banker, ["B1", "B2", "B3"]);
  $("player-total").textContent = player.length ? String(total(player)) : "";
  $("banker-total").textContent = banker.length ? String(total(banker)) : "";
  $("player-hand").classList.toggle("won", Boolean(!rnd && last && last.winner === "player"));
  $("banker-hand").classList.toggle("won", Boolean(!rnd && last && last.winner === "banker"));
  $("outcome").textContent = outcome;
  $("expecting").textContent = st.expecting;
}

function fillCards(id, codes, roles) {
  const box = $(id);
  // Only add what is new, so a card already shown is not redrawn (and not re-announced).
  const shown = [...box.children].map((c) => c.dataset.card || "?");
  const same = shown.length <= codes.length && shown.every((c, i) => c === (codes[i] || "?"));
  if (!same) box.replaceChildren();
  for (let i = box.children.length; i < codes.length; i++) box.append(face(codes[i], roles[i]));
}

function winnerWords(r) {
  const pt = r.player_total, bt = r.banker_total;
  if (r.winner === "tie") return `Tie ${pt} to ${bt}`;
  const flags = [r.player_natural && "player natural", r.banker_natural && "banker natural",
                 r.player_pair && "player pair", r.banker_pair && "banker pair"].filter(Boolean);
  const score = r.winner === "player" ? `${pt} to ${bt}` : `${bt} to ${pt}`;
  return `${r.winner === "player" ? "Player" : "Banker"} wins ${score}${flags.length ? ` · ${flags.join(", ")}` : ""}`;
}

function renderProgress(st) {
  $("p-shoe").textContent = st.shoes_started ? `#${st.shoes_started}${st.in_play ? " in play" : " finished"}` : "none yet";
  $("p-cards").textContent = `${st.cards_out}${st.unreadable ? ` (${st.unreadable} unreadable)` : ""} of ${st.decks * 52}`;
  let burn = "–";
  if (st.in_play || st.burned.length) {
    const reveal = st.burned[0];
    if (st.reveal_due) burn = "reveal card due";
    else if (reveal) burn = `reveal ${label(reveal)}, ${st.burned.length - 1} burned${st.burns_due ? `, ${st.burns_due} to go` : ""}`;
  }
  $("p-burn").textContent = burn;
  $("p-cut").textContent = st.cut_seen ? "seen" : "not yet";
  $("p-rounds").textContent = `${st.rounds_complete}${st.voided.length ? ` (+${st.voided.length} voided: ${st.voided.join(", ")})` : ""}`;
  $("p-last").textContent = st.last_round != null ? `round ${st.last_round} is the last` : "not announced";
  $("p-last").classList.toggle("warn", st.last_round != null);
}

function renderActions(st) {
  const roundInProgress = Boolean(st.round);
  const allowedNow = {
    shoe: !st.in_play,
    close_bets: st.in_play && !st.suspension && st.due === "close_bets",
    resume: Boolean(st.suspension),
    void: Boolean(st.suspension) || roundInProgress,
    end_shoe: st.in_play,
  };
  for (const b of document.querySelectorAll("button.act")) {
    const type = b.dataset.event;
    b.hidden = !may(type);
    b.disabled = !allowedNow[type] || (b.hasAttribute("data-with-card") && !pickedCard());
  }
  // The table's supervisor buttons live in the banner while suspended.
  for (const b of document.querySelectorAll("#table-actions button.act[data-event=void], #table-actions button.act[data-event=end_shoe]")) {
    if (st.suspension) b.hidden = true;
  }
  const picker = document.querySelector("fieldset.picker");
  picker.hidden = !may("resume");
  $("supervisor-actions").hidden = !may("resume");
  document.querySelector("[data-viewer-note]").hidden = may("resume");
}

// -- history, roads, odds (fetched when a round ends or a shoe changes) -------------------

function refresh(force) {
  const st = ui.state;
  const key = [st.shoes_started, st.in_play, st.rounds_complete, st.voided.length, Boolean(st.round)].join(":");
  if (!force && key === ui.refreshKey) return;
  ui.refreshKey = key;
  clearTimeout(ui.refreshTimer);
  ui.refreshTimer = setTimeout(() => { loadHistory(); loadOdds(); loadReader(); }, force ? 0 : 100);
}

async function loadReader() {
  try {
    const { reader } = await api("/api/state");
    $("p-reader").textContent = `${reader.driver}: ${reader.connected ? "connected" : "not connected"}${reader.detail ? ` (${reader.detail})` : ""}`;
    $("p-reader").classList.toggle("warn", !reader.connected);
  } catch { /* shown again at the next round */ }
}

async function loadHistory() {
  let hist;
  try { hist = await api("/api/history"); } catch (err) { return say(`history: ${err.message}`, true); }
  $("history-shoe").textContent = hist.shoe ? `shoe #${hist.shoe}, ${hist.rounds.length} rounds${hist.voided.length ? `, voided: ${hist.voided.join(", ")}` : ""}` : "";
  const rows = hist.rounds.slice().reverse().map((r) => h("tr", { class: r.winner, "data-round": r.round },
    h("td", { text: String(r.round) }),
    h("td", { class: "cardtext", text: r.player.map(label).join(" ") }),
    h("td", { class: "cardtext", text: r.banker.map(label).join(" ") }),
    h("td", { text: `${r.player_total} – ${r.banker_total}` }),
    h("td", { class: "winner", text: r.winner }),
    h("td", { text: [r.player_natural && "P natural", r.banker_natural && "B natural", r.player_pair && "P pair",
                     r.banker_pair && "B pair"].filter(Boolean).join(", ") })));
  fill($("history-body"), rows);
  const c = hist.roads.counts;
  $("road-counts").textContent = `B ${c.banker} · P ${c.player} · T ${c.tie} · pairs P ${c.player_pair} B ${c.banker_pair}`;
  drawRoads(hist.roads);
  const recent = hist.roads.bead_plate.slice(-12).map((b) =>
    h("li", { class: `mini ${b.winner}`, title: `Round ${b.round}: ${b.winner}`, text: b.winner[0].toUpperCase() }));
  fill($("recent"), recent);
}

async function loadOdds() {
  let answer;
  try { answer = await api("/api/odds"); } catch (err) { $("odds-note").textContent = err.message; return; }
  const o = answer.odds;
  $("odds-round").textContent = o ? `round ${o.next_round}${answer.betting_closed ? " (betting closed)" : ""} · ${o.cards_left} cards left` : "";
  $("odds-note").textContent = o ? `${answer.paytable} paytable · banker ${pct(o.outcomes.banker)}, player ${pct(o.outcomes.player)}, tie ${pct(o.outcomes.tie)}` : answer.reason || "";
  const alert = $("odds-alert");
  alert.hidden = !(o && o.advantage.length);
  alert.textContent = o && o.advantage.length ? `ADVANTAGE: the player has the edge on ${o.advantage.map((b) => b.replaceAll("_", " ")).join(", ")}` : "";
  const rows = o ? Object.entries(o.house_edge).map(([bet, edge]) => h("tr", {
    class: [o.advantage.includes(bet) && "advantage", o.closed.includes(bet) && "closed"].filter(Boolean).join(" ") || null },
    h("th", { scope: "row", text: bet.replaceAll("_", " ") + (o.closed.includes(bet) ? " (closed)" : "") }),
    h("td", { text: pct(edge, 3) }), h("td", { text: pct(1 - edge, 3) }))) : [];
  fill($("odds-body"), rows);
}

function pct(x, digits = 2) {
  return `${(x * 100).toFixed(digits)} %`;
}

// -- the journal -----------------------------------------------------------------------

async function loadJournal(seq) {
  const after = Math.max(0, seq - JOURNAL_SHOW);
  try {
    const { events } = await api(`/api/journal?after=${after}&limit=${JOURNAL_SHOW}`);
    const known = new Set(ui.rows.map((r) => r.seq));
    const older = events.filter((r) => !known.has(r.seq));
    ui.rows = [...older, ...ui.rows].sort((a, b) => a.seq - b.seq);
    for (const r of older) { ui.rowBySeq.set(r.seq, r); noteActor(r.actor); }
    drawJournal();
    render();
  } catch (err) {
    say(`journal: ${err.message}`, true);
  }
}

function addRow(row) {
  if (ui.rowBySeq.has(row.seq)) return;
  ui.rows.push(row);
  ui.rowBySeq.set(row.seq, row);
  noteActor(row.actor);
  if (ui.rows.length > JOURNAL_KEEP) {
    for (const old of ui.rows.splice(0, ui.rows.length - JOURNAL_KEEP)) ui.rowBySeq.delete(old.seq);
  }
  if (!ui.drawQueued) {  // one redraw per frame, however many rows a burst brings
    ui.drawQueued = true;
    requestAnimationFrame(() => { ui.drawQueued = false; drawJournal(); });
  }
}

function noteActor(actor) {
  if (ui.actors.has(actor)) return;
  ui.actors.add(actor);
  const select = $("j-actor");
  const options = [...ui.actors].sort().map((a) => h("option", { value: a, text: a }));
  const chosen = select.value;
  fill(select, [h("option", { value: "", text: "everyone" }), ...options]);
  select.value = chosen;
}

function describe(event) {
  const { type } = event;
  if (type === "notice") return `notice: ${event.message}`;
  if (type === "card") return `card ${event.card ? label(event.card) : "unreadable"}`;
  if (type === "resume" && event.card) return `resume with ${label(event.card)}`;
  if (type === "fault") return `fault${event.detail ? `: ${event.detail}` : ""}`;
  return type.replaceAll("_", " ");
}

function verdictText(v) {
  if (!v) return "";
  if (!v.ok) return `${v.error}: ${ui.rules.errors[v.error] || ""}`;
  const parts = [v.role, v.round != null && `round ${v.round}`, v.voided_round != null && `voided round ${v.voided_round}`,
                 v.result && `${v.result.winner} ${v.result.player_total}–${v.result.banker_total}`];
  return parts.filter(Boolean).join(" · ") || "ok";
}

function drawJournal() {
  const errorsOnly = $("j-errors").checked;
  const actor = $("j-actor").value;
  const shown = [];
  for (let i = ui.rows.length - 1; i >= 0 && shown.length < JOURNAL_SHOW; i--) {
    const r = ui.rows[i];
    if (errorsOnly && !(r.verdict && !r.verdict.ok)) continue;
    if (actor && r.actor !== actor) continue;
    shown.push(h("tr", { class: r.verdict && !r.verdict.ok ? "bad" : r.event.type === "notice" ? "notice" : null, "data-seq": r.seq },
      h("td", { text: String(r.seq) }), h("td", { text: clock(r.ts) }),
      h("td", { class: "actor", text: r.actor }), h("td", { text: describe(r.event) }),
      h("td", { text: verdictText(r.verdict) })));
  }
  fill($("journal-body"), shown);
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
    say(`export: ${err.message}`, true);
  }
}

// -- start -----------------------------------------------------------------------------

async function start() {
  if (ui.live) ui.live.close();
  ui.live = null;
  ui.rows = []; ui.rowBySeq.clear();
  const canRead = ui.me.name != null || ui.me.public_read;
  document.body.classList.toggle("locked", !canRead);
  $("main").hidden = !canRead;
  if (!canRead) {
    onStatus("refused", "log in with a token");
    $("banner").hidden = true;
    return;
  }
  render();
  ui.live = connectLive({ token: token.get(), onHello, onRow, onState, onStatus });
}

async function main() {
  $("login").addEventListener("submit", login);
  $("logout").addEventListener("click", logout);
  for (const b of document.querySelectorAll("button.act")) b.addEventListener("click", () => act(b));
  for (const id of ["pick-rank", "pick-suit"]) $(id).addEventListener("change", render);
  $("j-errors").addEventListener("change", drawJournal);
  $("j-actor").addEventListener("change", drawJournal);
  $("j-download").addEventListener("click", download);
  ui.rules = await api("/api/explanations");
  try {
    await whoami();
  } catch (err) {
    if (!(err instanceof ApiError && err.status === 401)) throw err;  // keep the token
    token.clear();  // a token revoked since the last visit
    await whoami();
    $("login-error").textContent = "Your token is no longer valid: log in again.";
  }
  $("login-button").disabled = false;
  await start();
}

main().catch((err) => {
  document.body.prepend(h("p", { class: "fatal", role: "alert", text: `The dashboard could not start: ${err.message}` }));
});

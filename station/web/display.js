// The table's display: one payload in (WS /api/display/live), the whole screen drawn from
// it. The header (table, game, status, shoe), the counts, the limits, the roads
// (display-roads.js), the "if the next is" marks, and each new round's result announced
// large for a few seconds. Every word comes from the catalogue (i18n.js); the page decides no
// rule and keeps nothing but the last payload (flat memory however long it runs).

import { h } from "./dom.js";
import { connectDisplay, screenToken } from "./display-feed.js";
import { askMark, drawRoad, fit, marksOf } from "./display-roads.js";
import { LOCALES, languageOf, wordsOf } from "./i18n.js";

const $ = (id) => document.getElementById(id);
const asked = new URLSearchParams(location.search).get("lang");
const DERIVED = ["big_eye_boy", "small_road", "cockroach_pig"];
const TABLEAUX = ["tableau1", "tableau2"];

let lang = null;
let t = wordsOf(languageOf(asked, "en"));
let shown = null; // the last payload drawn
let waiting = null; // the payload to draw at the next frame (only the latest is drawn)
let drawnRoads = null; // what the roads, counts, limits and marks were drawn from
let announcedKey = null; // the shoe and round last announced (or seen at the start)
let announceTimer = null;
let connection = "connecting";

function setLanguage(next) {
  if (next === lang) return;
  lang = next;
  t = wordsOf(next);
  document.documentElement.lang = next;
  for (const el of document.querySelectorAll("[data-word]")) el.textContent = t(el.dataset.word);
  for (const el of document.querySelectorAll("[data-word-aria]")) el.setAttribute("aria-label", t(el.dataset.wordAria));
  showConnection(connection);
}

function money(d) {
  const options = { maximumFractionDigits: 0 };
  if (d.currency) Object.assign(options, { style: "currency", currency: d.currency, minimumFractionDigits: 0 });
  const format = new Intl.NumberFormat(d.locale || LOCALES[lang], options);
  return (n) => format.format(n);
}

/** The table's name whole: the header shrinks it to its box (down to about half), then
 * lets it wrap onto a second line, and only then cuts it. */
function fitName() {
  const name = $("table-name");
  name.classList.remove("wrap");
  name.style.fontSize = "";
  const full = parseFloat(getComputedStyle(name).fontSize);
  let size = full;
  while (name.scrollWidth > name.clientWidth + 1 && size > full * 0.6) {
    size -= full * 0.05;
    name.style.fontSize = `${size}px`;
  }
  if (name.scrollWidth > name.clientWidth + 1) name.classList.add("wrap");
}

function drawHeader(d) {
  if ($("table-name").textContent !== d.table) {
    $("table-name").textContent = d.table;
    fitName();
  }
  $("game-name").textContent = t(`game_${d.game}`);
  const status = $("status");
  status.dataset.status = d.status;
  status.textContent = t(`status_${d.status}`);
  $("shoe").textContent = d.shoe ? t("shoe", { n: d.shoe }) : "";
}

function count(key, label, value, side = "") {
  return h("div", { class: `count ${side}`, "data-count": key },
    h("span", { class: "label", text: label }), h("span", { class: "value", text: String(value) }));
}

/** The shoe's voided rounds beside its rounds, when there are any: a voided round has a
 * number (the dashboard's "Round 34" counts it) and no result (the rounds here do not). */
function voided(c) {
  return c.voided ? [count("voided", t("count_voided"), c.voided)] : [];
}

function drawCounts(d) {
  const c = d.counts;
  let items;
  if (d.game === "baccarat_banque") {
    // Each outcome's letter in the colour its plate gives it (a tableau's win blue, the
    // bank's red, a tie or an even round green).
    const outcomes = (key, counts, names, colours) => h("div", { class: "group", "data-count": key },
      h("span", { class: "group-name", text: t(key) }),
      ...names.map((o, i) => count(`${key}.${o}`, t(`letter_${o}`), counts[o], `side ${colours[i]}`)));
    items = [
      ...TABLEAUX.map((tableau) => outcomes(tableau, c[tableau], ["win", "lose", "tie"], ["player", "banker", "tie"])),
      outcomes("bank", c.bank, ["win", "lose", "even"], ["banker", "player", "tie"]),
      count("rounds", t("count_rounds"), c.rounds),
      ...voided(c),
    ];
  } else {
    items = [
      ...["banker", "player", "tie"].map((side) => count(side, t(`letter_${side}`), c[side], `side ${side}`)),
      count("banker_pair", t("count_banker_pair"), c.banker_pair),
      count("player_pair", t("count_player_pair"), c.player_pair),
      count("natural", t("count_natural"), c.natural),
      count("rounds", t("count_rounds"), c.rounds),
      ...voided(c),
    ];
  }
  $("counts").replaceChildren(...items);
}

function drawLimits(d) {
  const format = money(d);
  const rows = d.limits.map((limit) => h("div", { class: "limit", "data-bet": limit.bet },
    h("span", { class: "bet", text: limit.label || t(`bet_${limit.bet}`) }),
    h("span", { class: "min", text: format(limit.min) }),
    h("span", { class: "dash", text: "–" }),
    h("span", { class: "max", text: format(limit.max) })));
  $("limits-rows").replaceChildren(...rows);
  $("limits").hidden = !rows.length;
  $("limits").dataset.count = String(rows.length);
}

function drawAsk(d) {
  if (d.game === "baccarat_banque") {
    $("ask-rows").replaceChildren();
    return;
  }
  const rows = ["banker", "player"].map((side) => h("div", { class: `ask-row ${side}`, "data-side": side },
    h("span", { class: "ask-side", text: t(`ask_${side}`) }),
    ...DERIVED.map((name) => askMark(name, d.roads.predictions[side][name]))));
  $("ask-rows").replaceChildren(...rows);
}

function drawRoads(d) {
  const marks = marksOf(d.game, d.roads);
  for (const svg of document.querySelectorAll("svg[data-rows]")) {
    const name = svg.id.slice("road-".length);
    if (marks[name]) drawRoad(svg, marks[name], d.roads.rows);
    else if (svg.childElementCount) svg.replaceChildren();
  }
}

/** Announce the round just completed, large, for `d.announce` seconds; not a round that
 * was already over when the screen started (or reconnected). */
function announce(d) {
  const key = d.last ? `${d.shoe}:${d.last.round}` : null;
  const fresh = shown !== null && key !== null && key !== announcedKey;
  announcedKey = key;
  if (!fresh || !(d.announce > 0)) return;
  const last = d.last;
  const head = $("announce-head");
  const detail = $("announce-detail");
  const box = $("announce");
  if (d.game === "baccarat_banque") {
    box.dataset.mark = last.bank;
    head.textContent = t(`announce_bank_${last.bank}`);
    detail.replaceChildren(...TABLEAUX.map((tableau) => h("span", { class: `outcome-${last[`${tableau}_outcome`]}` },
      `${t(`announce_tableau_${last[`${tableau}_outcome`]}`, { name: t(tableau) })} ${last[`${tableau}_total`]}`)),
      h("span", { class: "bank", text: `${t("bank")} ${last.banker_total}` }));
  } else {
    box.dataset.mark = last.winner;
    head.textContent = t(`announce_${last.winner}`);
    const flags = [];
    if (last.banker_pair) flags.push(t("count_banker_pair"));
    if (last.player_pair) flags.push(t("count_player_pair"));
    if (last.natural) flags.push(t("announce_natural"));
    detail.replaceChildren(
      h("span", { class: "banker", text: `${t("banker")} ${last.banker_total}` }),
      h("span", { class: "player", text: `${t("player")} ${last.player_total}` }),
      ...flags.map((flag) => h("span", { class: "flag", text: flag })));
  }
  box.dataset.round = String(last.round);
  box.hidden = false;
  clearTimeout(announceTimer);
  announceTimer = setTimeout(() => { box.hidden = true; }, d.announce * 1000);
}

/** Draw `d`. The roads, counts, limits and marks only when a round was added, the shoe
 * changed or the language did: most payloads change the status alone. */
function render(d) {
  setLanguage(languageOf(asked, d.language));
  document.body.dataset.game = d.game;
  drawHeader(d);
  const key = `${d.game} ${d.shoe} ${d.counts.rounds} ${lang} ${JSON.stringify(d.limits)}`;
  if (key !== drawnRoads) {
    drawCounts(d);
    drawLimits(d);
    drawRoads(d);
    drawAsk(d);
    drawnRoads = key;
  }
  announce(d);
  shown = d;
  document.body.dataset.drawn = String(d.counts.rounds);
}

/** A payload in: drawn at the next frame, so a burst of them costs one drawing. */
function received(d) {
  if (waiting === null) {
    requestAnimationFrame(() => {
      const latest = waiting;
      waiting = null;
      render(latest);
    });
  }
  waiting = d;
}

function showConnection(status) {
  connection = status;
  document.body.dataset.connection = status;
  const line = $("connection");
  line.textContent = status === "live" ? "" : t(status);
  line.hidden = status === "live";
  $("connection-help").hidden = status !== "refused"; // a bad token: the whole screen says so
}

// A road whose box changes size (the screen turned, another resolution) is fitted again.
const resized = new ResizeObserver((entries) => {
  for (const entry of entries) {
    const svg = entry.target.querySelector("svg[data-rows]");
    if (svg?.dataset.rightmost !== undefined) fit(svg, Number(svg.dataset.rows));
  }
});
for (const box of document.querySelectorAll(".road .box")) resized.observe(box);
new ResizeObserver(() => fitName()).observe(document.querySelector(".names"));

setLanguage(languageOf(asked, "en"));
connectDisplay({ token: screenToken(), onDisplay: received, onStatus: showConnection });

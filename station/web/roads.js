// The roads drawn as SVG from /api/history's `roads` (computed and tested in
// station/core/roads.py: this file only draws the cells where they were placed).
// Beads carry B/P/T and the big road B/P besides their colour. Each derived road has one
// mark, whatever its colour, as at the table: big eye boy hollow circles, small road solid
// dots, cockroach pig slashes, red or blue (each with its colour as a title). Each road is
// scrolled to its newest cell. Each grid has as many columns as its box holds (more when
// the road needs them: it scrolls), drawn again when the box changes width. The panel
// also counts the wins and shows the last results beside the round; until a new shoe has
// a result it shows the previous shoe's roads.

import { $, fill, h, s } from "./dom.js";
import { handWord, winnerName } from "./format.js";
import { count, num, t } from "./i18n.js";
import { shownShoe } from "./history.js";

const COLOURS = { banker: "#c62828", player: "#1565c0", tie: "#2e7d32", red: "#c62828", blue: "#1565c0" };
/** A side's letter in a bead (B, P, T; 莊, 閒, 和): the catalogue's, as on the display. */
const letter = (side) => t(`letter_${side}`);

function grid(cols, rows, size, label) {
  const width = cols * size;
  const height = rows * size;
  const svg = s("svg", { width, height, viewBox: `0 0 ${width} ${height}`, role: "img",
                         "aria-label": label, class: "grid" });
  const lines = [];
  for (let x = 0; x <= cols; x++) lines.push(`M${x * size} 0V${height}`);
  for (let y = 0; y <= rows; y++) lines.push(`M0 ${y * size}H${width}`);
  svg.append(s("path", { d: lines.join(""), class: "gridlines" }));
  return svg;
}

// Cell sizes (px): the bead plates, the big road, the derived roads (half the big road's
// marks, as on a casino's board).
const BEAD = 26;
const BIG = 22;
const DERIVED = 16;

/** The columns of a road's grid: those its cells need and one to come, or as many as its
 * box shows if that is more (an empty grid fills its box, as on a casino's board). */
function columns(id, cells, size, min) {
  const box = document.getElementById(id);
  const fits = box?.clientWidth ? Math.floor(box.clientWidth / size) : min;
  return Math.max(fits, ...cells.map((c) => c.x + 2));
}

/** Scroll a road so its newest cell is in view at the right, with the next column's room
 * after it (not to the empty columns the grid keeps for what is to come). */
function scrollToNewest(box) {
  const size = Number(box.dataset.size);
  const newest = Number(box.dataset.newest);
  if (!size || Number.isNaN(newest) || !box.clientWidth) return;
  const visible = Math.floor(box.clientWidth / size);
  const right = Math.min(Number(box.dataset.rightmost), newest + Math.max(visible - 2, 0));
  box.scrollLeft = Math.max(0, (right + 2) * size - box.clientWidth);
}

function show(id, svg, cells, size) {
  const box = document.getElementById(id);
  fill(box, [svg]);
  box.dataset.size = String(size);
  box.dataset.newest = cells.length ? String(cells[cells.length - 1].x) : "0";
  box.dataset.rightmost = String(Math.max(0, ...cells.map((c) => c.x)));
  scrollToNewest(box);
}

export function drawBeadPlate(id, roads) {
  const size = BEAD;
  const cells = roads.bead_plate;
  const svg = grid(columns(id, cells, size, 10), roads.rows, size, t("dash.road_aria", { road: t("road_bead_plate"), n: count(cells.length, "dash.n_rounds") }));
  for (const b of cells) {
    const cx = b.x * size + size / 2;
    const cy = b.y * size + size / 2;
    const g = s("g", { class: `bead ${b.winner}`, "data-round": b.round });
    const flags = [b.player_pair && t("count_player_pair"), b.banker_pair && t("count_banker_pair"), b.natural && t("announce_natural")];
    g.append(s("title", {}, [t("dash.bead_title", { n: b.round, winner: winnerName(b.winner), p: b.player_total, b: b.banker_total }),
      ...flags.filter(Boolean)].join(" · ")));
    g.append(s("circle", { cx, cy, r: size / 2 - 2, fill: COLOURS[b.winner] }));
    g.append(s("text", { x: cx, y: cy + 4.5, "text-anchor": "middle", class: "bead-letter" }, letter(b.winner)));
    if (b.banker_pair) g.append(s("circle", { cx: cx - 8, cy: cy - 8, r: 3, fill: COLOURS.banker, class: "pair" }));
    if (b.player_pair) g.append(s("circle", { cx: cx + 8, cy: cy + 8, r: 3, fill: COLOURS.player, class: "pair" }));
    svg.append(g);
  }
  show(id, svg, cells, size);
}

function tieMark(cx, cy, r, count) {
  const g = s("g", { class: "tie-mark" });
  g.append(s("line", { x1: cx - r, y1: cy + r, x2: cx + r, y2: cy - r, stroke: COLOURS.tie, "stroke-width": 2 }));
  if (count > 1) g.append(s("text", { x: cx, y: cy + 3, "text-anchor": "middle", class: "tie-count" }, String(count)));
  return g;
}

export function drawBigRoad(id, roads) {
  const size = BIG;
  const cells = roads.big_road;
  const svg = grid(columns(id, cells, size, 24), roads.rows, size, t("dash.road_aria", { road: t("road_big_road"), n: count(roads.columns.length, "dash.n_columns") }));
  cells.forEach((c, i) => {
    const cx = c.x * size + size / 2;
    const cy = c.y * size + size / 2;
    const g = s("g", { class: `big ${c.winner}`, "data-round": c.round });
    const ties = c.ties + (i === 0 ? roads.leading_ties : 0);
    g.append(s("title", {}, t(ties ? "dash.big_title_ties" : "dash.big_title", { n: c.round, winner: winnerName(c.winner), ties: num(ties) })));
    g.append(s("circle", { cx, cy, r: size / 2 - 2, fill: "none", stroke: COLOURS[c.winner], "stroke-width": 2.5 }));
    g.append(s("text", { x: cx, y: cy + 4, "text-anchor": "middle", class: "big-letter", fill: COLOURS[c.winner] }, letter(c.winner)));
    if (ties) g.append(tieMark(cx, cy, size / 2 - 3, ties));
    if (c.banker_pair) g.append(s("circle", { cx: cx - 7, cy: cy - 7, r: 2.5, fill: COLOURS.banker }));
    if (c.player_pair) g.append(s("circle", { cx: cx + 7, cy: cy + 7, r: 2.5, fill: COLOURS.player }));
    svg.append(g);
  });
  if (!cells.length && roads.leading_ties) {
    svg.append(tieMark(size / 2, size / 2, size / 2 - 3, roads.leading_ties));
  }
  show(id, svg, cells, size);
}

// One shape per road, the colour only changes the colour: a hollow circle, a solid dot,
// a slash.
const MARKS = {
  big_eye_boy: (cx, cy, r, colour) => s("circle", { cx, cy, r, fill: "none", stroke: COLOURS[colour],
    "stroke-width": 2, class: "mark-shape" }),
  small_road: (cx, cy, r, colour) => s("circle", { cx, cy, r, fill: COLOURS[colour], stroke: COLOURS[colour],
    "stroke-width": 1, class: "mark-shape" }),
  cockroach_pig: (cx, cy, r, colour) => s("line", { x1: cx - r, y1: cy + r, x2: cx + r, y2: cy - r,
    stroke: COLOURS[colour], "stroke-width": 2.5, "stroke-linecap": "round", class: "mark-shape" }),
};

export function drawDerived(name, roads) {
  const size = DERIVED;
  const cells = roads[name];
  const svg = grid(columns(`road-${name}`, cells, size, 22), roads.rows, size, t("dash.road_aria", { road: t(`road_${name}`), n: count(cells.length, "dash.n_marks") }));
  for (const c of cells) {
    const g = s("g", { class: `mark ${c.colour}` });
    g.append(s("title", {}, t(`colour.${c.colour}`)));
    g.append(MARKS[name](c.x * size + size / 2, c.y * size + size / 2, size / 2 - 3, c.colour));
    svg.append(g);
  }
  show(`road-${name}`, svg, cells, size);
}

export function drawAsk(id, roads) {
  const names = { big_eye_boy: t("road_big_eye_boy"), small_road: t("road_small_road"), cockroach_pig: t("road_cockroach_pig") };
  const rows = [];
  for (const side of ["banker", "player"]) {
    const marks = Object.entries(roads.predictions[side]).map(([name, colour]) => {
      const words = colour ? `${names[name]}: ${t(`colour.${colour}`)}` : t("dash.ask_none", { road: names[name] });
      const svg = s("svg", { width: 14, height: 14, role: "img", "aria-label": words });
      if (colour) svg.append(MARKS[name](7, 7, 4.5, colour));
      return h("span", { class: "ask-mark", title: words }, svg);
    });
    rows.push(h("div", { class: `ask-row ${side}` }, h("span", { class: "ask-side", text: t(`ask_${side}`) }), ...marks));
  }
  fill(document.getElementById(id), rows);
}

export function drawRoads(roads) {
  drawBeadPlate("road-bead", roads);
  drawBigRoad("road-big", roads);
  for (const name of ["big_eye_boy", "small_road", "cockroach_pig"]) drawDerived(name, roads);
  drawAsk("road-ask", roads);
}

const OUTCOME_COLOURS = { win: "#1565c0", lose: "#c62828", tie: "#2e7d32" };
const OUTCOME_LETTER = { win: "letter_win", lose: "letter_lose", tie: "letter_tie" };

/** Baccarat banque: a tableau's bead plate, its outcome against the banker each round
 * (W, L or T; a dot for its natural), placed by station/core/roads.py. */
export function drawTableauPlate(id, tableau, plate, rows) {
  const size = BEAD;
  const cells = plate.bead_plate;
  const name = t("dash.bead_plate_of", { name: t(tableau) });
  const svg = grid(columns(id, cells, size, 10), rows, size, t("dash.road_aria", { road: name, n: count(cells.length, "dash.n_rounds") }));
  for (const b of cells) {
    const cx = b.x * size + size / 2;
    const cy = b.y * size + size / 2;
    const g = s("g", { class: `bead ${b.outcome}`, "data-round": b.round });
    const flags = [b.natural && t("announce_natural"), b.banker_natural && t("dash.flag_natural", { hand: handWord(null, "banker") })];
    g.append(s("title", {}, [t("dash.tableau_title", { n: b.round, hand: t(tableau), outcome: t(`outcome.${b.outcome}`), total: b.total, banker: b.banker_total }),
      ...flags.filter(Boolean)].join(" · ")));
    g.append(s("circle", { cx, cy, r: size / 2 - 2, fill: OUTCOME_COLOURS[b.outcome] }));
    g.append(s("text", { x: cx, y: cy + 4.5, "text-anchor": "middle", class: "bead-letter" }, t(OUTCOME_LETTER[b.outcome])));
    if (b.natural) g.append(s("circle", { cx: cx + 8, cy: cy + 8, r: 3, fill: "#ffb300", class: "natural" }));
    svg.append(g);
  }
  show(id, svg, cells, size);
}

/** The roads of a baccarat banque shoe: a bead plate per tableau, its counts, and the last
 * results beside the round (tableau 1's and tableau 2's letters). */
function renderBanque(history, shown) {
  const { roads } = shown;
  const counts = (tableau) => t("dash.tableau_counts", { win: num(roads[tableau].counts.win), lose: num(roads[tableau].counts.lose), tie: num(roads[tableau].counts.tie) });
  const total = t("dash.banque_counts", { rounds: count(roads.counts.rounds, "dash.n_rounds"), n: num(roads.counts.banker_natural) });
  $("road-counts").textContent = shown.previous ? t("dash.previous_shoe", { n: shown.shoe, counts: total }) : total;
  $("road-t1-counts").textContent = counts("tableau1");
  $("road-t2-counts").textContent = counts("tableau2");
  $("road-t1-title").textContent = t("dash.bead_plate_of", { name: t("tableau1") });
  $("road-t2-title").textContent = t("dash.bead_plate_of", { name: t("tableau2") });
  drawTableauPlate("road-tableau1", "tableau1", roads.tableau1, roads.rows);
  drawTableauPlate("road-tableau2", "tableau2", roads.tableau2, roads.rows);
  const own = history.roads; // this shoe's only
  const recent = own.game === "baccarat_banque" ? own.tableau1.bead_plate.slice(-12).map((b, i, list) => {
    const other = own.tableau2.bead_plate[own.tableau2.bead_plate.length - list.length + i];
    return h("li", { class: "mini banque", title: t("dash.big_title", { n: b.round, winner: t("dash.result_banque", { o1: t(`outcome.${b.outcome}`), o2: t(`outcome.${other.outcome}`) }) }) },
      h("span", { class: b.outcome, text: t(OUTCOME_LETTER[b.outcome]) }), h("span", { class: other.outcome, text: t(OUTCOME_LETTER[other.outcome]) }));
  }) : [];
  fill($("recent"), recent);
  $("recent-label").textContent = t("dash.last_results_banque");
}

function render({ history }) {
  if (!history) return;
  const shown = shownShoe(history);
  const { roads } = shown;
  const banque = roads.game === "baccarat_banque";
  $("roads-banque").hidden = !banque;
  for (const row of document.querySelectorAll("[data-roads=baccarat]")) row.hidden = banque;
  $("roads").classList.toggle("previous-shoe", shown.previous);
  if (banque) {
    renderBanque(history, shown);
    return;
  }
  const c = roads.counts;
  const counts = t("dash.road_counts", { b: num(c.banker), p: num(c.player), t: num(c.tie), pp: num(c.player_pair), bp: num(c.banker_pair),
    B: letter("banker"), P: letter("player"), T: letter("tie") });
  $("road-counts").textContent = shown.previous ? t("dash.previous_shoe", { n: shown.shoe, counts }) : counts;
  drawRoads(roads);
  const recent = history.roads.bead_plate.slice(-12).map((b) => // this shoe's only
    h("li", { class: `mini ${b.winner}`, title: t("dash.big_title", { n: b.round, winner: winnerName(b.winner) }), text: letter(b.winner) }));
  fill($("recent"), recent);
  $("recent-label").textContent = t("dash.last_results");
}

export function mountRoads(store) {
  store.subscribe(["history"], render);
  // A road that changes width (a phone turned, the window resized) is drawn again to
  // fill its box (once a frame at most), and keeps its newest cell in view.
  let queued = false;
  const widths = new Map();
  const resized = new ResizeObserver((entries) => {
    const changed = entries.some((e) => widths.get(e.target) !== e.target.clientWidth);
    for (const entry of entries) widths.set(entry.target, entry.target.clientWidth);
    if (!changed || queued) return;
    queued = true;
    requestAnimationFrame(() => {
      queued = false;
      render(store.get());
    });
  });
  for (const box of document.querySelectorAll(".road")) resized.observe(box);
}

// The roads drawn as SVG from /api/history's `roads` (computed and tested in
// station/core/roads.py: this file only draws the cells where they were placed).
// Colour is never the only signal: beads carry B/P/T, the big road B/P, and each
// derived-road mark has a different shape for red and blue and a title. The panel also
// counts the wins and shows the last results beside the round.

import { $, fill, h, s } from "./dom.js";

const COLOURS = { banker: "#c62828", player: "#1565c0", tie: "#2e7d32", red: "#c62828", blue: "#1565c0" };
const LETTER = { banker: "B", player: "P", tie: "T" };

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

function columns(cells, min) {
  return Math.max(min, ...cells.map((c) => c.x + 1)) + 1;
}

function show(id, svg) {
  const box = document.getElementById(id);
  fill(box, [svg]);
  box.scrollLeft = box.scrollWidth;  // the newest cells are on the right
}

export function drawBeadPlate(id, roads) {
  const size = 24;
  const cells = roads.bead_plate;
  const svg = grid(columns(cells, 10), roads.rows, size, `Bead plate, ${cells.length} rounds`);
  for (const b of cells) {
    const cx = b.x * size + size / 2;
    const cy = b.y * size + size / 2;
    const g = s("g", { class: `bead ${b.winner}`, "data-round": b.round });
    g.append(s("title", {}, `Round ${b.round}: ${b.winner}, player ${b.player_total} banker ${b.banker_total}`
      + `${b.player_pair ? ", player pair" : ""}${b.banker_pair ? ", banker pair" : ""}${b.natural ? ", natural" : ""}`));
    g.append(s("circle", { cx, cy, r: size / 2 - 2, fill: COLOURS[b.winner] }));
    g.append(s("text", { x: cx, y: cy + 4, "text-anchor": "middle", class: "bead-letter" }, LETTER[b.winner]));
    if (b.banker_pair) g.append(s("circle", { cx: cx - 7, cy: cy - 7, r: 3, fill: COLOURS.banker, class: "pair" }));
    if (b.player_pair) g.append(s("circle", { cx: cx + 7, cy: cy + 7, r: 3, fill: COLOURS.player, class: "pair" }));
    svg.append(g);
  }
  show(id, svg);
}

function tieMark(cx, cy, r, count) {
  const g = s("g", { class: "tie-mark" });
  g.append(s("line", { x1: cx - r, y1: cy + r, x2: cx + r, y2: cy - r, stroke: COLOURS.tie, "stroke-width": 2 }));
  if (count > 1) g.append(s("text", { x: cx, y: cy + 3, "text-anchor": "middle", class: "tie-count" }, String(count)));
  return g;
}

export function drawBigRoad(id, roads) {
  const size = 18;
  const cells = roads.big_road;
  const svg = grid(columns(cells, 24), roads.rows, size, `Big road, ${roads.columns.length} columns`);
  cells.forEach((c, i) => {
    const cx = c.x * size + size / 2;
    const cy = c.y * size + size / 2;
    const g = s("g", { class: `big ${c.winner}`, "data-round": c.round });
    const ties = c.ties + (i === 0 ? roads.leading_ties : 0);
    g.append(s("title", {}, `Round ${c.round}: ${c.winner}${ties ? `, then ${ties} tie(s)` : ""}`));
    g.append(s("circle", { cx, cy, r: size / 2 - 2, fill: "none", stroke: COLOURS[c.winner], "stroke-width": 2.5 }));
    g.append(s("text", { x: cx, y: cy + 3.5, "text-anchor": "middle", class: "big-letter", fill: COLOURS[c.winner] }, LETTER[c.winner]));
    if (ties) g.append(tieMark(cx, cy, size / 2 - 3, ties));
    if (c.banker_pair) g.append(s("circle", { cx: cx - 6, cy: cy - 6, r: 2.5, fill: COLOURS.banker }));
    if (c.player_pair) g.append(s("circle", { cx: cx + 6, cy: cy + 6, r: 2.5, fill: COLOURS.player }));
    svg.append(g);
  });
  if (!cells.length && roads.leading_ties) {
    svg.append(tieMark(size / 2, size / 2, size / 2 - 3, roads.leading_ties));
  }
  show(id, svg);
}

// Red: solid; blue: the same shape hollow or dashed, so the two differ without colour.
const MARKS = {
  big_eye_boy: (cx, cy, r, colour) => s("circle", { cx, cy, r, fill: "none", stroke: COLOURS[colour],
    "stroke-width": 2, "stroke-dasharray": colour === "blue" ? "2 2" : null }),
  small_road: (cx, cy, r, colour) => s("circle", { cx, cy, r, fill: colour === "red" ? COLOURS.red : "none",
    stroke: COLOURS[colour], "stroke-width": 1.5 }),
  cockroach_pig: (cx, cy, r, colour) => s("line", { x1: cx - r, y1: cy + r, x2: cx + r, y2: cy - r,
    stroke: COLOURS[colour], "stroke-width": 2.5, "stroke-dasharray": colour === "blue" ? "2 1.5" : null }),
};

export function drawDerived(name, roads) {
  const size = 12;
  const cells = roads[name];
  const svg = grid(columns(cells, 22), roads.rows, size, `${name.replaceAll("_", " ")}, ${cells.length} marks`);
  for (const c of cells) {
    const g = s("g", { class: `mark ${c.colour}` });
    g.append(s("title", {}, c.colour));
    g.append(MARKS[name](c.x * size + size / 2, c.y * size + size / 2, size / 2 - 2.5, c.colour));
    svg.append(g);
  }
  show(`road-${name}`, svg);
}

export function drawAsk(id, roads) {
  const names = { big_eye_boy: "Big eye", small_road: "Small", cockroach_pig: "Cockroach" };
  const rows = [];
  for (const side of ["banker", "player"]) {
    const marks = Object.entries(roads.predictions[side]).map(([name, colour]) => {
      const svg = s("svg", { width: 14, height: 14, role: "img", "aria-label": `${names[name]}: ${colour || "none"}` });
      if (colour) svg.append(MARKS[name](7, 7, 4.5, colour));
      return h("span", { class: "ask-mark", title: `${names[name]}: ${colour || "not started"}` }, svg);
    });
    rows.push(h("div", { class: `ask-row ${side}` }, h("span", { class: "ask-side", text: `${LETTER[side]} ${side}` }), ...marks));
  }
  fill(document.getElementById(id), rows);
}

export function drawRoads(roads) {
  drawBeadPlate("road-bead", roads);
  drawBigRoad("road-big", roads);
  for (const name of ["big_eye_boy", "small_road", "cockroach_pig"]) drawDerived(name, roads);
  drawAsk("road-ask", roads);
}

function render({ history }) {
  if (!history) return;
  const { roads } = history;
  const c = roads.counts;
  $("road-counts").textContent = `B ${c.banker} · P ${c.player} · T ${c.tie} · pairs P ${c.player_pair} B ${c.banker_pair}`;
  drawRoads(roads);
  const recent = roads.bead_plate.slice(-12).map((b) =>
    h("li", { class: `mini ${b.winner}`, title: `Round ${b.round}: ${b.winner}`, text: LETTER[b.winner] }));
  fill($("recent"), recent);
}

export function mountRoads(store) {
  store.subscribe(["history"], render);
}

// The display's roads as SVG, each mark where station/core/roads.py placed it (this file
// decides no cell). Every mark is a <g> carrying data-road (its road's name as
// /api/history gives it), data-col and data-row (its x and y there) and data-mark (its
// winner, outcome or colour), so tests and surveillance tools read the screen without
// pixels. A road is drawn in cell units (one cell = 1x1) and shows, in its box, its
// newest columns with one empty column after them: marks before those stay in the DOM,
// outside the view (data-first on the road says which column is the first in view). No
// scroll bar: nobody touches the screen.

import { s } from "./dom.js";

const COLOURS = { banker: "#d32f2f", player: "#1565c0", tie: "#2e7d32", red: "#d32f2f", blue: "#1565c0" };
// Baccarat banque: a tableau's win is the ponte's side (blue), a loss the bank's (red).
const OUTCOME_COLOURS = { win: "#1565c0", lose: "#d32f2f", tie: "#2e7d32" };
const BANK_COLOURS = { win: "#d32f2f", lose: "#1565c0", even: "#2e7d32" };
const PAIR = { banker: [0.18, 0.18], player: [0.82, 0.82] };

function mark(road, cell, kind) {
  return s("g", { class: `mark ${kind}`, "data-road": road, "data-col": cell.x, "data-row": cell.y,
                  "data-mark": kind, transform: `translate(${cell.x} ${cell.y})` });
}

function pairDots(g, cell) {
  for (const side of ["banker", "player"]) {
    if (!cell[`${side}_pair`]) continue;
    const [cx, cy] = PAIR[side];
    g.append(s("circle", { cx, cy, r: 0.13, fill: COLOURS[side], class: `pair ${side}-pair` }));
  }
}

function bead(road, cell, kind, colour, points) {
  const g = mark(road, cell, kind);
  g.append(s("circle", { cx: 0.5, cy: 0.5, r: 0.43, fill: colour }));
  g.append(s("text", { x: 0.5, y: 0.53, class: "bead-text" }, String(points)));
  return g;
}

/** Punto banco's bead plate: each round's winning point in its winner's colour, pairs as
 * dots (banker's top left, player's bottom right). */
function beadPlate(cells) {
  return cells.map((c) => {
    const points = c.winner === "player" ? c.player_total : c.banker_total;
    const g = bead("bead_plate", c, c.winner, COLOURS[c.winner], points);
    g.setAttribute("data-points", `${c.player_total}-${c.banker_total}`);
    if (c.natural) g.classList.add("natural");
    pairDots(g, c);
    return g;
  });
}

function tieSlash(g, ties) {
  g.append(s("line", { x1: 0.18, y1: 0.82, x2: 0.82, y2: 0.18, stroke: COLOURS.tie, class: "tie-slash" }));
  if (ties > 1) g.append(s("text", { x: 0.5, y: 0.55, class: "tie-count" }, String(ties)));
}

/** The big road: rings in the winner's colour, the ties dealt after a cell as a slash with
 * their count, pairs as dots. Ties before any win are drawn on the first cell. */
function bigRoad(cells, leadingTies) {
  const marks = cells.map((c, i) => {
    const g = mark("big_road", c, c.winner);
    const ties = c.ties + (i === 0 ? leadingTies : 0);
    g.setAttribute("data-ties", ties);
    g.append(s("circle", { cx: 0.5, cy: 0.5, r: 0.37, fill: "none", stroke: COLOURS[c.winner], class: "ring" }));
    if (ties) tieSlash(g, ties);
    pairDots(g, c);
    return g;
  });
  if (!cells.length && leadingTies) {
    const g = s("g", { class: "leading-ties", "data-ties": leadingTies });
    tieSlash(g, leadingTies);
    marks.push(g);
  }
  return marks;
}

// One shape per derived road, the colour says red or blue: a ring, a dot, a slash.
const SHAPES = {
  big_eye_boy: (colour) => s("circle", { cx: 0.5, cy: 0.5, r: 0.33, fill: "none", stroke: COLOURS[colour], class: "eye" }),
  small_road: (colour) => s("circle", { cx: 0.5, cy: 0.5, r: 0.36, fill: COLOURS[colour] }),
  cockroach_pig: (colour) => s("line", { x1: 0.2, y1: 0.8, x2: 0.8, y2: 0.2, stroke: COLOURS[colour], class: "roach" }),
};

function derived(name, cells) {
  return cells.map((c) => {
    const g = mark(name, c, c.colour);
    g.append(SHAPES[name](c.colour));
    return g;
  });
}

/** A derived road's mark alone (the "if the next is" marks), or an empty cell. */
export function askMark(name, colour) {
  const svg = s("svg", { viewBox: "0 0 1 1", class: "ask-mark", "data-ask": name, "data-mark": colour || "none" });
  if (colour) svg.append(SHAPES[name](colour));
  return svg;
}

/** Baccarat banque: a tableau's plate (its point, in its outcome's colour; a natural is
 * ringed in gold), and the bank's (its point, in the colour of how it fared). */
function tableauPlate(road, cells, colours) {
  return cells.map((c) => {
    const g = bead(road, c, c.outcome, colours[c.outcome], c.total);
    if (c.natural) {
      g.classList.add("natural");
      g.append(s("circle", { cx: 0.5, cy: 0.5, r: 0.46, fill: "none", class: "natural-ring" }));
    }
    return g;
  });
}

/** The marks of every road of `roads` (the display payload's), by road name. */
export function marksOf(game, roads) {
  if (game === "baccarat_banque") {
    return {
      "tableau1.bead_plate": tableauPlate("tableau1.bead_plate", roads.tableau1.bead_plate, OUTCOME_COLOURS),
      "tableau2.bead_plate": tableauPlate("tableau2.bead_plate", roads.tableau2.bead_plate, OUTCOME_COLOURS),
      bank: tableauPlate("bank", roads.bank, BANK_COLOURS),
    };
  }
  return {
    bead_plate: beadPlate(roads.bead_plate),
    big_road: bigRoad(roads.big_road, roads.leading_ties),
    big_eye_boy: derived("big_eye_boy", roads.big_eye_boy),
    small_road: derived("small_road", roads.small_road),
    cockroach_pig: derived("cockroach_pig", roads.cockroach_pig),
  };
}

/** Draw `marks` in the road `svg` (rows high), fitted to its box: whole columns, the
 * rightmost mark's column and one empty column after it in view. */
export function drawRoad(svg, marks, rows) {
  const last = marks.reduce((most, g) => Math.max(most, Number(g.dataset.col || 0)), -1);
  svg.dataset.rightmost = String(last);
  svg.dataset.rows = String(rows);
  svg.replaceChildren(...marks);
  fit(svg, rows);
}

/** Fit a drawn road to its box again (the box changed size): square cells as high as the
 * box allows, the grid to the box's right edge. */
export function fit(svg, rows) {
  const box = svg.parentElement;
  const cell = box.clientHeight / rows;
  if (!cell) return;
  const span = box.clientWidth / cell;
  const visible = Math.max(1, Math.floor(span + 0.01));
  const first = Math.max(0, Number(svg.dataset.rightmost) + 2 - visible);
  svg.setAttribute("viewBox", `${first} 0 ${span} ${rows}`);
  svg.setAttribute("width", String(box.clientWidth));
  svg.setAttribute("height", String(box.clientHeight));
  svg.dataset.first = String(first);
  svg.dataset.columns = String(visible);
  let grid = svg.querySelector(":scope > path.grid");
  if (!grid) {
    grid = s("path", { class: "grid" });
    svg.prepend(grid);
  }
  const last = first + Math.ceil(span);
  const lines = [];
  for (let x = first; x <= last; x++) lines.push(`M${x} 0V${rows}`);
  for (let y = 0; y <= rows; y++) lines.push(`M${first} ${y}H${last}`);
  grid.setAttribute("d", lines.join(""));
}

"""The scoreboards ("roads") of a shoe: bead plate, big road and the three derived roads.

Pure functions of the shoe's round results, in dealing order. Why computed here, in
Python, and not in the page: the roads are what players and supervisors read to follow
a shoe, so they are tested like the rules. Everything is computed from the *logical*
columns of the big road (a streak is one column however long it is); the 6-row
"dragon tail" bend is only where the cells are drawn (`bend`), never an input of the
derived roads.

- Bead plate: every round, ties included, 6 to a column, filled top to bottom.
- Big road: a new column whenever the winner changes between banker and player; a tie
  is a mark on the last cell (ties before the first banker or player win are
  `leading_ties`, drawn on the first cell).
- Derived roads (big eye boy k=1, small road k=2, cockroach pig k=3): for each big road
  cell from the first one that has something to compare with, red ("the road repeats")
  or blue ("the road is choppy"):
  * the first cell of column c: red if columns c-1 and c-1-k are as long, else blue;
  * a cell at depth r >= 1 of column c: blue if column c-k is exactly r long (the
    streak goes on where that column stopped), else red.
  So each road starts at the second cell of column k (0-based), or, if that column
  has one cell, at the first cell of column k+1. The colours then go in columns like
  the big road: a new column when the colour changes.

Chemin de fer's results have punto banco's shape (`winner`, `player` the ponte), so its
roads are these. Baccarat banque has no single winner (each tableau plays the banker):
`banque_scoreboards` gives a bead plate per tableau, from `tableau1_outcome` and
`tableau2_outcome` (win, lose or tie against the banker).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

ROWS = 6
BANKER, PLAYER, TIE = "banker", "player", "tie"
RED: Literal["red"] = "red"
BLUE: Literal["blue"] = "blue"
#: The derived roads and how many columns back each one compares.
DERIVED: dict[str, int] = {"big_eye_boy": 1, "small_road": 2, "cockroach_pig": 3}

Colour = Literal["red", "blue"]
Position = tuple[int, int]


class RoadError(ValueError):
    """A result that the roads cannot place: its winner is not banker, player or tie."""


@dataclass(frozen=True, slots=True)
class Bead:
    """One round on the bead plate (ties included)."""

    round: int
    winner: str
    player_total: int
    banker_total: int
    player_pair: bool
    banker_pair: bool
    natural: bool


@dataclass(slots=True)
class BigCell:
    """One banker or player win on the big road, with the ties dealt after it."""

    round: int
    winner: str
    ties: int = 0
    player_pair: bool = False
    banker_pair: bool = False


@dataclass(slots=True)
class BigRoad:
    """The big road's logical columns (unbounded length) and the ties before any win."""

    columns: list[list[BigCell]] = field(default_factory=list)
    leading_ties: int = 0

    @property
    def lengths(self) -> list[int]:
        return [len(c) for c in self.columns]


def beads(results: Sequence[Mapping[str, Any]]) -> list[Bead]:
    """The bead plate's beads, one per round, in order."""
    out: list[Bead] = []
    for r in results:
        winner = _winner(r)
        out.append(
            Bead(
                round=int(r.get("round", len(out) + 1)),
                winner=winner,
                player_total=int(r.get("player_total", 0)),
                banker_total=int(r.get("banker_total", 0)),
                player_pair=bool(r.get("player_pair")),
                banker_pair=bool(r.get("banker_pair")),
                natural=bool(r.get("player_natural") or r.get("banker_natural")),
            )
        )
    return out


def big_road(results: Sequence[Mapping[str, Any]]) -> BigRoad:
    """The big road's logical columns: a streak of one side is one column."""
    road = BigRoad()
    for i, r in enumerate(results):
        winner = _winner(r)
        number = int(r.get("round", i + 1))
        if winner == TIE:
            if road.columns:
                road.columns[-1][-1].ties += 1
            else:
                road.leading_ties += 1
            continue
        cell = BigCell(number, winner, 0, bool(r.get("player_pair")), bool(r.get("banker_pair")))
        if road.columns and road.columns[-1][0].winner == winner:
            road.columns[-1].append(cell)
        else:
            road.columns.append([cell])
    return road


def derived_colour(lengths: Sequence[int], column: int, depth: int, k: int) -> Colour | None:
    """The colour that derived road `k` gives the big road cell at (`column`, `depth`) of
    logical columns of these `lengths`; None where the road has not started."""
    if depth == 0:
        if column - 1 - k < 0:
            return None
        return RED if lengths[column - 1] == lengths[column - 1 - k] else BLUE
    if column - k < 0:
        return None
    return BLUE if lengths[column - k] == depth else RED


def derived_road(lengths: Sequence[int], k: int) -> list[Colour]:
    """Derived road `k`'s colours, one per big road cell from where the road starts."""
    out: list[Colour] = []
    for c, n in enumerate(lengths):
        for r in range(n):
            colour = derived_colour(lengths, c, r, k)  # it reads columns c and before only
            if colour is not None:
                out.append(colour)
    return out


def columns_of(marks: Sequence[str]) -> list[list[str]]:
    """Consecutive equal marks grouped into columns (how a derived road is drawn)."""
    columns: list[list[str]] = []
    for m in marks:
        if columns and columns[-1][0] == m:
            columns[-1].append(m)
        else:
            columns.append([m])
    return columns


def bend(lengths: Sequence[int], rows: int = ROWS) -> list[list[Position]]:
    """Where each cell of logical columns is drawn on a grid `rows` high: down the
    column, and right along the row once it reaches the bottom or a cell already drawn
    (the dragon tail). Returns (x, y) per cell, column by column."""
    if rows < 1:
        raise ValueError("a road needs at least one row")
    taken: set[Position] = set()
    placed: list[list[Position]] = []
    start = -1
    for i, n in enumerate(lengths):
        start = max(i, start + 1)
        while (start, 0) in taken:
            start += 1
        cells: list[Position] = []
        turned = False
        for j in range(n):
            if j == 0:
                pos = (start, 0)
            else:
                x, y = cells[-1]
                if not turned and y + 1 < rows and (x, y + 1) not in taken:
                    pos = (x, y + 1)
                else:
                    turned = True
                    pos = (x + 1, y)
                    while pos in taken:  # never for real shoes; keeps the drawing whole
                        pos = (pos[0] + 1, y)
            taken.add(pos)
            cells.append(pos)
        placed.append(cells)
    return placed


def next_lengths(lengths: Sequence[int], last_winner: str | None, winner: str) -> list[int]:
    """The big road's column lengths after one more `winner` (banker or player)."""
    out = list(lengths)
    if out and last_winner == winner:
        out[-1] += 1
    else:
        out.append(1)
    return out


def predictions(road: BigRoad) -> dict[str, dict[str, Colour | None]]:
    """What each derived road would show if the next round went to banker or to player
    (the "ask" buttons of a scoreboard)."""
    lengths = road.lengths
    last = road.columns[-1][0].winner if road.columns else None
    out: dict[str, dict[str, Colour | None]] = {}
    for winner in (BANKER, PLAYER):
        after = next_lengths(lengths, last, winner)
        c = len(after) - 1
        out[winner] = {
            name: derived_colour(after, c, after[c] - 1, k) for name, k in DERIVED.items()
        }
    return out


def scoreboards(results: Sequence[Mapping[str, Any]], rows: int = ROWS) -> dict[str, Any]:
    """Every road of a shoe, ready to draw: cells with grid positions, and the counts."""
    plate = beads(results)
    road = big_road(results)
    lengths = road.lengths
    big_pos = bend(lengths, rows)
    big = [
        {
            "x": x,
            "y": y,
            "column": c,
            "depth": d,
            "round": cell.round,
            "winner": cell.winner,
            "ties": cell.ties,
            "player_pair": cell.player_pair,
            "banker_pair": cell.banker_pair,
        }
        for c, (column, positions) in enumerate(zip(road.columns, big_pos, strict=True))
        for d, (cell, (x, y)) in enumerate(zip(column, positions, strict=True))
    ]
    derived = {}
    for name, k in DERIVED.items():
        cols = columns_of(derived_road(lengths, k))
        pos = bend([len(c) for c in cols], rows)
        derived[name] = [
            {"x": x, "y": y, "colour": colour}
            for col, positions in zip(cols, pos, strict=True)
            for colour, (x, y) in zip(col, positions, strict=True)
        ]
    counts = {
        "rounds": len(plate),
        BANKER: sum(b.winner == BANKER for b in plate),
        PLAYER: sum(b.winner == PLAYER for b in plate),
        TIE: sum(b.winner == TIE for b in plate),
        "player_pair": sum(b.player_pair for b in plate),
        "banker_pair": sum(b.banker_pair for b in plate),
        "natural": sum(b.natural for b in plate),
    }
    return {
        "rows": rows,
        "bead_plate": [
            {
                "x": i // rows,
                "y": i % rows,
                "round": b.round,
                "winner": b.winner,
                "player_total": b.player_total,
                "banker_total": b.banker_total,
                "player_pair": b.player_pair,
                "banker_pair": b.banker_pair,
                "natural": b.natural,
            }
            for i, b in enumerate(plate)
        ],
        "big_road": big,
        "leading_ties": road.leading_ties,
        "columns": lengths,
        **derived,
        "predictions": predictions(road),
        "counts": counts,
    }


#: Baccarat banque's tableaux, in layout order, and the outcomes of each against the banker.
TABLEAUX = ("tableau1", "tableau2")
OUTCOMES = ("win", "lose", "tie")


def banque_scoreboards(results: Sequence[Mapping[str, Any]], rows: int = ROWS) -> dict[str, Any]:
    """Baccarat banque's roads: a bead plate per tableau (its outcome against the banker
    each round, 6 to a column, filled top to bottom, as punto banco's bead plate), with
    each tableau's counts, and the shoe's (`rounds`, `banker_natural`)."""
    if rows < 1:
        raise ValueError("a road needs at least one row")
    boards: dict[str, Any] = {"game": "baccarat_banque", "rows": rows}
    banker_naturals = 0
    plates: dict[str, list[dict[str, Any]]] = {t: [] for t in TABLEAUX}
    for i, r in enumerate(results):
        number = int(r.get("round", i + 1))
        naturals = r.get("naturals") or ()
        banker_naturals += "banker" in naturals
        for tableau in TABLEAUX:
            outcome = r.get(f"{tableau}_outcome")
            if outcome not in OUTCOMES:
                raise RoadError(
                    f"round {r.get('round', '?')}: {tableau}_outcome must be win, lose or "
                    f"tie, got {outcome!r}"
                )
            plates[tableau].append(
                {
                    "x": i // rows,
                    "y": i % rows,
                    "round": number,
                    "outcome": outcome,
                    "total": int(r.get(f"{tableau}_total", 0)),
                    "banker_total": int(r.get("banker_total", 0)),
                    "natural": tableau in naturals,
                    "banker_natural": "banker" in naturals,
                }
            )
    for tableau in TABLEAUX:
        plate = plates[tableau]
        boards[tableau] = {
            "bead_plate": plate,
            "counts": {
                "rounds": len(plate),
                **{o: sum(b["outcome"] == o for b in plate) for o in OUTCOMES},
                "natural": sum(b["natural"] for b in plate),
            },
        }
    boards["counts"] = {"rounds": len(results), "banker_natural": banker_naturals}
    return boards


def game_scoreboards(
    game: str, results: Sequence[Mapping[str, Any]], rows: int = ROWS
) -> dict[str, Any]:
    """The roads of a shoe of `game`: baccarat banque's bead plates per tableau, else
    (punto banco, chemin de fer) the bead plate, big road and derived roads."""
    if game == "baccarat_banque":
        return banque_scoreboards(results, rows)
    return scoreboards(results, rows)


def _winner(result: Mapping[str, Any]) -> str:
    winner = result.get("winner")
    if winner not in (BANKER, PLAYER, TIE):
        raise RoadError(
            f"round {result.get('round', '?')}: winner must be banker, player or "
            f"tie, got {winner!r}"
        )
    return str(winner)

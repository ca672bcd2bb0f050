"""What the players' scoreboard may show of the table: its status in a player's words, the
shoe's results and roads, and the counts; nothing else.

Why a module of its own: the dashboard's state carries what a player must never see (the
cards left in the shoe, the odds, the journal, the error codes, who acted). The board is
built here field by field from the published snapshot and the shoe's roads
(`station.core.roads`), so whatever is added to the snapshot later stays off the screen
until someone writes it here.

The status follows the table as a player sees it:

- `shuffling`: no shoe in play (between shoes, or before the first);
- `new_shoe`: a shoe has started and its burn is being dealt;
- `paused`: the table is suspended, or the station cannot record (never why, nor who);
- `betting_open`: the next round waits for betting to close (on an ungated table, for its
  first card);
- `no_more_bets`: betting is closed and no card of the round is out yet;
- `dealing`: the round's cards are coming out, or a hand is deciding.

Baccarat banque has no single winner: each tableau plays the bank, so its board has a bead
plate per tableau, and the bank's own plate (`bank_plate`): each round the bank's point and
how it fared against the two tableaux.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from station.core.snapshot import TableSnapshot

STATUSES = ("betting_open", "no_more_bets", "dealing", "paused", "shuffling", "new_shoe")
#: The derived roads, as `station.core.roads` names them.
DERIVED = ("big_eye_boy", "small_road", "cockroach_pig")
TABLEAUX = ("tableau1", "tableau2")

#: The fields of each mark the board keeps (the roads' others stay off the screen).
BEAD_FIELDS = (
    "x",
    "y",
    "round",
    "winner",
    "player_total",
    "banker_total",
    "player_pair",
    "banker_pair",
    "natural",
)
BIG_FIELDS = ("x", "y", "round", "winner", "ties", "player_pair", "banker_pair")
DERIVED_FIELDS = ("x", "y", "colour")
TABLEAU_FIELDS = ("x", "y", "round", "outcome", "total", "banker_total", "natural")
COUNT_FIELDS = ("rounds", "banker", "player", "tie", "player_pair", "banker_pair", "natural")


def status_of(snapshot: TableSnapshot, writable: bool = True) -> str:
    """The table's status in a player's terms (one of STATUSES); `writable` False: the
    station cannot record the table now, so it is paused for players too."""
    if not snapshot.in_play:
        return "shuffling"
    if snapshot.suspended or not writable:
        return "paused"
    if snapshot.reveal_due or snapshot.burns_due:
        return "new_shoe"
    rnd = snapshot.round
    if rnd is None:
        return "betting_open"
    dealt = any(rnd.get(hand) for hand in snapshot.hands)
    return "dealing" if dealt else "no_more_bets"


def board(
    snapshot: TableSnapshot, roads: Mapping[str, Any], writable: bool = True
) -> dict[str, Any]:
    """The board of `snapshot` (its shoe's `roads`, as `station.core.roads.game_scoreboards`
    gives them): the game, the shoe's number, the status, the last round's result, the roads
    as drawn and the counts (with the shoe's voided rounds)."""
    results = snapshot.results
    if snapshot.game == "baccarat_banque":
        drawn = banque_roads(roads)
        last = banque_result(results[-1]) if results else None
        counts = banque_counts(roads, drawn["bank"])
    else:
        drawn = punto_roads(roads)
        last = round_result(results[-1]) if results else None
        counts = _pick(roads["counts"], COUNT_FIELDS)
    # The rounds voided in this shoe: the screen says them beside its rounds (a voided
    # round has a number, as on the dashboard, and no result), so the two never disagree.
    counts["voided"] = len(snapshot.voided)
    return {
        "game": snapshot.game,
        "shoe": snapshot.shoes_started,
        "status": status_of(snapshot, writable),
        "last": last,
        "roads": drawn,
        "counts": counts,
    }


def round_result(result: Mapping[str, Any]) -> dict[str, Any]:
    """A punto banco or chemin de fer round as the screen announces it (no cards)."""
    return {
        "round": result["round"],
        "winner": result["winner"],
        "player_total": result["player_total"],
        "banker_total": result["banker_total"],
        "player_pair": result["player_pair"],
        "banker_pair": result["banker_pair"],
        "natural": bool(result["player_natural"] or result["banker_natural"]),
    }


def banque_result(result: Mapping[str, Any]) -> dict[str, Any]:
    """A baccarat banque round as the screen announces it (no cards)."""
    naturals = result.get("naturals") or ()
    return {
        "round": result["round"],
        "tableau1_outcome": result["tableau1_outcome"],
        "tableau2_outcome": result["tableau2_outcome"],
        "tableau1_total": result["tableau1_total"],
        "tableau2_total": result["tableau2_total"],
        "banker_total": result["banker_total"],
        "bank": bank_outcome(result["tableau1_outcome"], result["tableau2_outcome"]),
        "naturals": [hand for hand in ("tableau1", "tableau2", "banker") if hand in naturals],
    }


def punto_roads(roads: Mapping[str, Any]) -> dict[str, Any]:
    """Punto banco's and chemin de fer's roads, each mark with only what is drawn."""
    return {
        "rows": roads["rows"],
        "bead_plate": [_pick(b, BEAD_FIELDS) for b in roads["bead_plate"]],
        "big_road": [_pick(c, BIG_FIELDS) for c in roads["big_road"]],
        "leading_ties": roads["leading_ties"],
        **{name: [_pick(m, DERIVED_FIELDS) for m in roads[name]] for name in DERIVED},
        "predictions": {
            side: {name: roads["predictions"][side][name] for name in DERIVED}
            for side in ("banker", "player")
        },
    }


def banque_roads(roads: Mapping[str, Any]) -> dict[str, Any]:
    """Baccarat banque's plates: each tableau's, and the bank's."""
    return {
        "rows": roads["rows"],
        **{
            t: {"bead_plate": [_pick(b, TABLEAU_FIELDS) for b in roads[t]["bead_plate"]]}
            for t in TABLEAUX
        },
        "bank": bank_plate(roads["tableau1"]["bead_plate"], roads["tableau2"]["bead_plate"]),
    }


def bank_outcome(tableau1: str, tableau2: str) -> str:
    """How the bank fared in a round: `win` (it took more tableaux than it lost), `lose`,
    or `even` (as many won as lost, ties included)."""
    net = sum({"lose": 1, "win": -1}.get(outcome, 0) for outcome in (tableau1, tableau2))
    return "win" if net > 0 else "lose" if net < 0 else "even"


def bank_plate(
    tableau1: Sequence[Mapping[str, Any]], tableau2: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """The bank's bead plate, placed as the tableaux' (the same round in the same cell):
    its point, its natural and how it fared against both tableaux."""
    return [
        {
            "x": one["x"],
            "y": one["y"],
            "round": one["round"],
            "outcome": bank_outcome(one["outcome"], two["outcome"]),
            "total": one["banker_total"],
            "natural": one["banker_natural"],
        }
        for one, two in zip(tableau1, tableau2, strict=True)
    ]


def banque_counts(roads: Mapping[str, Any], bank: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Baccarat banque's counts: the rounds and the bank's naturals, each tableau's wins,
    losses, ties and naturals against the bank, and the bank's rounds (`bank`, its plate)
    won, lost and even."""
    return {
        "rounds": roads["counts"]["rounds"],
        "banker_natural": roads["counts"]["banker_natural"],
        **{t: _pick(roads[t]["counts"], ("win", "lose", "tie", "natural")) for t in TABLEAUX},
        "bank": {o: sum(b["outcome"] == o for b in bank) for o in ("win", "lose", "even")},
    }


def _pick(mark: Mapping[str, Any], keys: Sequence[str]) -> dict[str, Any]:
    return {key: mark[key] for key in keys}

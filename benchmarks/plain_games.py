"""A plain replay of every game (punto banco, chemin de fer, baccarat banque), written
straight from the spec (dealing-rules.md and games.md): the cercle games' second opinion.

Like `benchmarks/plain_replay.py` for punto banco, it is deliberately the obvious way:
the stdlib json module, a line at a time, one class per table, the rules as the spec's
tables written out as strings. It shares no code with `station` (nor with the simulated
dealer), so when it and `station.core.table.Table` agree on a stream, a mistake would
have to be made twice, independently.

A round is a list of turns, one per hand (ponte(s) first, the banker last). A turn's
state is "wait" (not reached yet), "card" (its third card is due), "ask" (an option
waits for its decision), "drew" or "stood" (over). The round is complete when no turn
is "wait", "card" or "ask" once every F turn has passed.

Run: python -m benchmarks.plain_games [--game G] [--decks N] [--burn B] [--ungated]
     [--cut-policy P] < events
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

RANKS = "A23456789TJQK"

#: game -> (hands in layout order, the roles of the first cards, decks, burn, cut policy)
GAMES: dict[str, tuple[tuple[str, ...], tuple[str, ...], int, str, str]] = {
    "punto_banco": (("player", "banker"), ("P1", "B1", "P2", "B2"), 8, "reveal", "one_more"),
    "chemin_de_fer": (("player", "banker"), ("P1", "B1", "P2", "B2"), 6, "none", "stop"),
    "baccarat_banque": (
        ("tableau1", "tableau2", "banker"),
        ("T1.1", "T2.1", "B.1", "T1.2", "T2.2", "B.2"),
        6,
        "none",
        "stop",
    ),
}
THIRD_ROLE = {"player": "P3", "tableau1": "T1.3", "tableau2": "T2.3"}

# The banker's cell, as games.md prints it: rows are the banker's two-card total, the
# columns the points of the ponte's third card 0..9, then S (the ponte stood).
CERCLE_BANKER = {
    0: "MMMMMMMMMMM",
    1: "MMMMMMMMMMM",
    2: "MMMMMMMMMMM",
    3: "MMMMMMMMFOM",
    4: "FFMMMMMMFFM",
    5: "FFFFOMMMFFM",
    6: "FFFFFFMMFFF",
    7: "FFFFFFFFFFF",
}
CERCLE_PONTE = "MMMMMOFF"  # the ponte's two-card total 0..7
# Punto banco's tableau (dealing-rules.md) in the same shape: it has no option.
PUNTO_BANKER = {
    0: "MMMMMMMMMMM",
    1: "MMMMMMMMMMM",
    2: "MMMMMMMMMMM",
    3: "MMMMMMMMFMM",
    4: "FFMMMMMMFFM",
    5: "FFFFMMMMFFM",
    6: "FFFFFFMMFFF",
    7: "FFFFFFFFFFF",
}
PUNTO_PLAYER = "MMMMMMFF"

EVENT_TYPES = (
    "shoe",
    "card",
    "cut",
    "close_bets",
    "resume",
    "void",
    "end_shoe",
    "fault",
    "restart",
    "decision",
)


def canonical(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    text = value.strip().upper()
    if text.startswith("10"):
        text = "T" + text[2:]
    if len(text) == 2 and text[0] in RANKS and text[1] in "SHDC":
        return text
    return None


def card_points(card: str) -> int:
    value = RANKS.index(card[0]) + 1
    return 0 if value >= 10 else value


def burn_count(card: str) -> int:
    return min(RANKS.index(card[0]) + 1, 10)


def total(cards: list[str]) -> int:
    return sum(card_points(c) for c in cards) % 10


class BadInput(Exception):
    pass


class PlainRound:
    """The round in progress: its number, its cards by hand and its turns."""

    def __init__(self, game: str, number: int) -> None:
        self.game = game
        self.hands_order, self.first_roles = GAMES[game][0], GAMES[game][1]
        self.number = number
        self.cards: dict[str, list[str]] = {h: [] for h in self.hands_order}
        self.placed = 0
        self.turn: dict[str, str] = {h: "wait" for h in self.hands_order}
        self.naturals: list[str] = []

    def first_hand(self, index: int) -> str:
        role = self.first_roles[index]
        if role[0] == "P":
            return "player"
        if role[0] == "B":
            return "banker"
        return "tableau1" if role[1] == "1" else "tableau2"

    def started(self) -> bool:
        """The first four (six) cards are all placed."""
        return self.placed >= len(self.first_roles)

    def settled(self, hand: str) -> bool:
        """A tableau settled by its natural (baccarat banque)."""
        return self.game == "baccarat_banque" and hand != "banker" and hand in self.naturals

    def verdict_of(self, hand: str) -> str:
        """M, F or O for the hand's turn, from the cards on the table."""
        two = total(self.cards[hand][:2])
        if hand != "banker":
            if self.game == "punto_banco":
                return PUNTO_PLAYER[two]
            return CERCLE_PONTE[two]
        table = PUNTO_BANKER if self.game == "punto_banco" else CERCLE_BANKER
        pontes = [h for h in self.hands_order if h != "banker" and not self.settled(h)]
        cells = []
        for ponte in pontes:
            third = self.cards[ponte][2:]
            column = card_points(third[0]) if third else 10
            cells.append(table[two][column])
        if len(cells) == 1:
            return cells[0]
        may_draw = "F" not in cells
        may_stand = "M" not in cells
        if may_draw and may_stand:
            return "O"
        if may_draw:
            return "M"
        if may_stand:
            return "F"
        return "O"

    def after_first_cards(self) -> None:
        """The first cards are placed: naturals, then the turns start."""
        for hand in self.hands_order:
            if total(self.cards[hand]) >= 8:
                self.naturals.append(hand)
        if self.game == "baccarat_banque":
            over = "banker" in self.naturals or len(self.naturals) == 2
        else:
            over = bool(self.naturals)
        if over:
            for hand in self.hands_order:
                self.turn[hand] = "stood"
        else:
            self.advance()

    def advance(self) -> None:
        """Open the next turn(s): F and settled turns pass at once."""
        for hand in self.hands_order:
            state = self.turn[hand]
            if state in ("card", "ask"):
                return
            if state != "wait":
                continue
            if self.settled(hand):
                self.turn[hand] = "stood"
                continue
            verdict = self.verdict_of(hand)
            if verdict == "F":
                self.turn[hand] = "stood"
            elif verdict == "M":
                self.turn[hand] = "card"
                return
            else:
                self.turn[hand] = "ask"
                return

    def waiting(self) -> str | None:
        """The hand whose turn is open (a card or a decision waits), else None."""
        for hand in self.hands_order:
            if self.turn[hand] in ("card", "ask"):
                return hand
        return None

    def complete(self) -> bool:
        return self.started() and all(s in ("drew", "stood") for s in self.turn.values())

    def judge(self, hand: str | None, draw: bool) -> tuple[bool, str | None]:
        """Whether a decision is allowed, and the hand it goes to."""
        if not self.started():
            return False, None
        open_hand = self.waiting()
        if hand is None:
            hand = open_hand
            if hand is None:
                return False, None
        state = self.turn[hand]
        if state == "wait":
            return False, hand  # an earlier hand's turn is not over
        if state == "drew":
            return draw, hand
        if state == "stood":
            return not draw, hand
        if state == "card":
            return draw, hand  # at M, or a decision to draw already taken
        return True, hand  # "ask": the option

    def decide(self, hand: str, draw: bool) -> None:
        """Apply an allowed decision (only an option changes anything)."""
        if self.turn[hand] != "ask":
            return
        if draw:
            self.turn[hand] = "card"
        else:
            self.turn[hand] = "stood"
            self.advance()

    def completes(self, hand: str, draw: bool) -> bool:
        """Whether this allowed decision would complete the round."""
        if self.turn[hand] != "ask" or draw:
            return False
        saved = dict(self.turn)
        self.decide(hand, draw)
        done = self.complete()
        self.turn = saved
        return done

    def place(self, card: str) -> str:
        """Place the card that is due (the caller checked one is); return its role."""
        if not self.started():
            index = self.placed
            self.cards[self.first_hand(index)].append(card)
            self.placed += 1
            if self.started():
                self.after_first_cards()
            return self.first_roles[index]
        hand = self.waiting()
        assert hand is not None and self.turn[hand] == "card"
        self.cards[hand].append(card)
        self.placed += 1
        self.turn[hand] = "drew"
        self.advance()
        if hand == "banker":
            return "B.3" if self.game == "baccarat_banque" else "B3"
        return THIRD_ROLE[hand]

    def result(self) -> dict[str, Any]:
        if self.game != "baccarat_banque":
            pt, bt = total(self.cards["player"]), total(self.cards["banker"])
            winner = "player" if pt > bt else "banker" if bt > pt else "tie"
            return {
                "round": self.number,
                "player": self.cards["player"],
                "banker": self.cards["banker"],
                "player_total": pt,
                "banker_total": bt,
                "winner": winner,
            }
        bt = total(self.cards["banker"])
        out: dict[str, Any] = {"round": self.number}
        for hand in self.hands_order:
            out[hand] = self.cards[hand]
        for hand in self.hands_order:
            out[hand + "_total"] = total(self.cards[hand])
        for hand in ("tableau1", "tableau2"):
            tt = total(self.cards[hand])
            if hand in self.naturals and "banker" not in self.naturals:
                outcome = "win"
            else:
                outcome = "win" if tt > bt else "lose" if tt < bt else "tie"
            out[hand + "_outcome"] = outcome
        out["naturals"] = list(self.naturals)
        return out


class PlainGameTable:
    def __init__(
        self,
        game: str = "punto_banco",
        decks: int | None = None,
        gated: bool = True,
        cut_policy: str | None = None,
        burn: str | None = None,
    ) -> None:
        _, _, default_decks, default_burn, default_cut = GAMES[game]
        self.game = game
        self.hands = GAMES[game][0]
        self.decks = default_decks if decks is None else decks
        self.gated = gated
        self.cut_policy = default_cut if cut_policy is None else cut_policy
        self.burn = default_burn if burn is None else burn
        self.shoe = False
        self.suspended = False
        self.held: str | None = None
        self.hand: PlainRound | None = None

    def verdict(self, error: str | None = None, **fields: Any) -> dict[str, Any]:
        out = {
            "ok": error is None,
            "error": error,
            "role": None,
            "round": None,
            "result": None,
            "voided_round": None,
        }
        out.update(fields)
        return out

    def suspend(self, error: str) -> dict[str, Any]:
        self.suspended = True
        return self.verdict(error)

    def parse_decision(self, value: Any) -> tuple[str | None, bool]:
        if not isinstance(value, dict):
            raise BadInput
        hand = value.get("hand")
        draw = value.get("draw")
        if hand is not None and hand not in self.hands:
            raise BadInput
        if not isinstance(draw, bool):
            raise BadInput
        return hand, draw

    def handle(self, event: Any) -> dict[str, Any]:
        if not isinstance(event, dict) or event.get("type") not in EVENT_TYPES:
            return self.verdict("BAD_INPUT")
        kind = event["type"]
        if kind == "card" and "card" not in event:
            return self.verdict("BAD_INPUT")
        if kind == "decision":
            try:
                hand, draw = self.parse_decision(event)
            except BadInput:
                return self.verdict("BAD_INPUT")
            return self.decision(hand, draw)
        if kind == "shoe":
            if self.shoe:
                return self.verdict("SHOE_ACTIVE")
            self.shoe = True
            self.suspended = False
            self.held = None
            self.counts: dict[str, int] = {}
            self.burn_left = -1 if self.burn == "reveal" else 0  # -1: the reveal is due
            self.round_number = 0
            self.hand = None
            self.cut = False
            self.last: int | None = None
            return self.verdict()
        if kind == "card":
            return self.card(event["card"])
        if kind == "cut":
            if not self.shoe:
                return self.verdict("NO_ACTIVE_SHOE")
            if not self.cut:
                self.cut = True
                if self.cut_policy == "stop":
                    if self.hand is None:
                        self.shoe = False
                    else:
                        self.last = self.hand.number
                elif self.hand is None:
                    self.last = self.round_number + 1
                elif self.hand.placed and self.cut_policy == "one_more":
                    self.last = self.hand.number + 1
                else:
                    self.last = self.hand.number
            return self.verdict()
        if kind == "close_bets":
            if not self.shoe:
                return self.verdict("NO_ACTIVE_SHOE")
            if not self.gated:
                return self.verdict()
            if self.suspended:
                return self.verdict("SUSPENDED")
            if self.burn_left != 0:
                return self.suspend("BURN_INCOMPLETE")
            if self.hand is not None:
                return self.suspend("MISSING_CARD")
            self.open_round()
            return self.verdict(round=self.round_number)
        if kind == "resume":
            return self.resume(event)
        if kind == "void":
            self.suspended = False
            self.held = None
            if self.shoe and self.hand is not None:
                number = self.hand.number
                self.hand = None
                if self.last == number:
                    self.shoe = False
                return self.verdict(voided_round=number)
            return self.verdict()
        if kind == "end_shoe":
            if not self.shoe:
                return self.verdict("NO_ACTIVE_SHOE")
            voided = self.hand.number if self.hand is not None else None
            self.hand = None
            self.shoe = False
            self.suspended = False
            self.held = None
            return self.verdict(voided_round=voided)
        # fault, restart
        if not self.shoe:
            return self.verdict()
        return self.suspend("SCANNER_FAULT" if kind == "fault" else "STATION_RESTART")

    def open_round(self) -> None:
        self.round_number += 1
        self.hand = PlainRound(self.game, self.round_number)

    def judge(self, hand: str | None, draw: bool) -> tuple[bool, str | None]:
        """A decision's check once the shoe is in play and the table not suspended."""
        if self.hand is None or not self.hand.placed:
            return False, None
        return self.hand.judge(hand, draw)

    def decision(self, hand: str | None, draw: bool) -> dict[str, Any]:
        if not self.shoe:
            return self.verdict("NO_ACTIVE_SHOE")
        if self.suspended:
            return self.verdict("SUSPENDED")
        allowed, target = self.judge(hand, draw)
        if not allowed or target is None:
            return self.verdict("DECISION_NOT_ALLOWED")
        return self.apply_decision(target, draw)

    def apply_decision(self, target: str, draw: bool) -> dict[str, Any]:
        assert self.hand is not None
        hand = self.hand
        hand.decide(target, draw)
        result = None
        if hand.complete():
            result = self.finish_round()
        return self.verdict(round=hand.number, result=result)

    def finish_round(self) -> dict[str, Any]:
        assert self.hand is not None
        hand = self.hand
        self.hand = None
        if self.last == hand.number:
            self.shoe = False
        return hand.result()

    def resume(self, event: dict[str, Any]) -> dict[str, Any]:
        if not self.suspended:
            return self.verdict("NOT_SUSPENDED")
        carries_card = event.get("card") is not None
        value = event.get("decision")
        if value is None:
            if not self.shoe:
                if carries_card:
                    return self.verdict("NO_ACTIVE_SHOE")
                self.suspended = False
                return self.verdict()
            self.suspended = False
            self.held = None
            if not carries_card:
                return self.verdict()
            return self.card(event["card"])
        try:
            hand, draw = self.parse_decision(value)
        except BadInput:
            return self.verdict("BAD_INPUT")
        if carries_card and self.held is not None:
            return self.verdict("BAD_INPUT")
        if not self.shoe:
            return self.verdict("NO_ACTIVE_SHOE")
        allowed, target = self.judge(hand, draw)
        if not allowed or target is None:
            return self.verdict("DECISION_NOT_ALLOWED")
        assert self.hand is not None
        if self.held is not None and (
            self.hand.turn[target] != "ask" or target != self.hand.waiting()
        ):
            return self.verdict("DECISION_NOT_ALLOWED")  # does not answer the option
        if (self.held is not None or carries_card) and self.hand.completes(target, draw):
            return self.verdict("DECISION_NOT_ALLOWED")
        self.suspended = False
        decided = self.apply_decision(target, draw)
        if self.held is not None:
            card, self.held = self.held, None
            return self.due(card)
        if carries_card:
            return self.card(event["card"])
        return decided

    def card(self, value: Any) -> dict[str, Any]:
        if not self.shoe:
            return self.verdict("NO_ACTIVE_SHOE")
        card = canonical(value)
        if card is None:
            return self.suspend("UNREADABLE_CARD")
        self.counts[card] = self.counts.get(card, 0) + 1
        if self.counts[card] > self.decks:
            return self.suspend("EXCESS_COPIES")
        if self.suspended:
            return self.verdict("CARD_WHILE_SUSPENDED")
        return self.due(card)

    def due(self, card: str) -> dict[str, Any]:
        """A counted card at an unsuspended table: placed where it is due, or flagged."""
        if self.burn_left == -1:
            self.burn_left = burn_count(card)
            return self.verdict(role="burn_reveal")
        if self.burn_left > 0:
            self.burn_left -= 1
            return self.verdict(role="burn")
        if self.hand is None:
            if self.gated:
                if self.round_number == 0 and self.burn == "reveal":
                    return self.suspend("BURN_EXCESS")
                return self.suspend("UNEXPECTED_CARD")
            self.open_round()
        hand = self.hand
        assert hand is not None
        if hand.started():
            waiting = hand.waiting()
            if waiting is None:
                return self.suspend("UNEXPECTED_CARD")  # cannot happen: the round is over
            if hand.turn[waiting] == "ask":
                self.held = card
                return self.suspend("DECISION_MISSING")
        role = hand.place(card)
        result = self.finish_round() if hand.complete() else None
        return self.verdict(role=role, round=hand.number, result=result)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--game", default="punto_banco", choices=sorted(GAMES))
    parser.add_argument("--decks", type=int, default=None)
    parser.add_argument("--burn", default=None, choices=("reveal", "none"))
    parser.add_argument("--ungated", action="store_true")
    parser.add_argument("--cut-policy", default=None)
    parser.add_argument("file", nargs="?", default="-")
    args = parser.parse_args()
    table = PlainGameTable(args.game, args.decks, not args.ungated, args.cut_policy, args.burn)
    source = sys.stdin if args.file == "-" else open(args.file)  # noqa: SIM115
    for seq, line in enumerate(source, 1):
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except ValueError:
            event = None
        verdict = table.handle(event)
        verdict["seq"] = seq
        print(json.dumps(verdict))


if __name__ == "__main__":
    main()

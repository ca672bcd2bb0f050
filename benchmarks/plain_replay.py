"""A plain replay, written straight from the spec: the benchmark's baseline and a second
opinion for the differential tests.

Deliberately the obvious way: the stdlib json module, a line at a time, one class per
table, the tableau as nested ifs. It shares no code with `station`, so when both agree
on a stream, a mistake would have to be made twice, independently.

Run: python -m benchmarks.plain_replay [--decks N] [--ungated] [--cut-policy P] < events
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

RANKS = "A23456789TJQK"


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


def banker_draws(banker: int, p3: int | None) -> bool:
    if p3 is None:
        return banker <= 5
    if banker <= 2:
        return True
    if banker == 3:
        return p3 != 8
    if banker == 4:
        return 2 <= p3 <= 7
    if banker == 5:
        return 4 <= p3 <= 7
    if banker == 6:
        return p3 in (6, 7)
    return False


class PlainTable:
    def __init__(self, decks: int, gated: bool, cut_policy: str) -> None:
        self.decks = decks
        self.gated = gated
        self.cut_policy = cut_policy
        self.shoe = False
        self.suspended = False

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

    def handle(self, event: Any) -> dict[str, Any]:
        kinds = (
            "shoe",
            "card",
            "cut",
            "close_bets",
            "resume",
            "void",
            "end_shoe",
            "fault",
            "restart",
        )
        if not isinstance(event, dict) or event.get("type") not in kinds:
            return self.verdict("BAD_INPUT")
        kind = event["type"]
        if kind == "card" and "card" not in event:
            return self.verdict("BAD_INPUT")
        if kind == "shoe":
            if self.shoe:
                return self.verdict("SHOE_ACTIVE")
            self.shoe = True
            self.suspended = False
            self.counts: dict[str, int] = {}
            self.burn_left = -1  # -1: the reveal is due
            self.round_number = 0
            self.hand: dict[str, Any] | None = None
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
                if self.hand is None:
                    self.last = self.round_number + 1
                elif self.hand["player"] and self.cut_policy == "one_more":
                    self.last = self.hand["number"] + 1
                else:
                    self.last = self.hand["number"]
            return self.verdict()
        if kind == "close_bets":
            if not self.shoe:
                return self.verdict("NO_ACTIVE_SHOE")
            if not self.gated:
                return self.verdict()
            if self.suspended:
                return self.verdict("SUSPENDED")
            if self.burn_left != 0:
                self.suspended = True
                return self.verdict("BURN_INCOMPLETE")
            if self.hand is not None:
                self.suspended = True
                return self.verdict("MISSING_CARD")
            self.open_round()
            return self.verdict(round=self.round_number)
        if kind == "resume":
            if not self.suspended:
                return self.verdict("NOT_SUSPENDED")
            self.suspended = False
            if event.get("card") is None:
                return self.verdict()
            return self.card(event["card"])
        if kind == "void":
            self.suspended = False
            if self.shoe and self.hand is not None:
                number = self.hand["number"]
                self.hand = None
                if self.last == number:
                    self.shoe = False
                return self.verdict(voided_round=number)
            return self.verdict()
        if kind == "end_shoe":
            if not self.shoe:
                return self.verdict("NO_ACTIVE_SHOE")
            voided = self.hand["number"] if self.hand is not None else None
            self.shoe = False
            self.suspended = False
            return self.verdict(voided_round=voided)
        # fault, restart
        if not self.shoe:
            return self.verdict()
        self.suspended = True
        return self.verdict("SCANNER_FAULT" if kind == "fault" else "STATION_RESTART")

    def open_round(self) -> None:
        self.round_number += 1
        self.hand = {"number": self.round_number, "player": [], "banker": []}

    def card(self, value: Any) -> dict[str, Any]:
        if not self.shoe:
            return self.verdict("NO_ACTIVE_SHOE")
        card = canonical(value)
        if card is not None:
            self.counts[card] = self.counts.get(card, 0) + 1
            if self.counts[card] > self.decks:
                self.suspended = True
                return self.verdict("EXCESS_COPIES")
        else:
            self.suspended = True
            return self.verdict("UNREADABLE_CARD")
        if self.suspended:
            return self.verdict("CARD_WHILE_SUSPENDED")
        if self.burn_left == -1:
            self.burn_left = burn_count(card)
            return self.verdict(role="burn_reveal")
        if self.burn_left > 0:
            self.burn_left -= 1
            return self.verdict(role="burn")
        if self.hand is None:
            if self.gated:
                self.suspended = True
                return self.verdict("BURN_EXCESS" if self.round_number == 0 else "UNEXPECTED_CARD")
            self.open_round()
        hand = self.hand
        assert hand is not None
        player, banker = hand["player"], hand["banker"]
        role = self.next_role(player, banker)
        assert role is not None
        (player if role[0] == "P" else banker).append(card)
        result = None
        if self.next_role(player, banker) is None:
            result = self.score(hand["number"], player, banker)
            self.hand = None
            if self.last == hand["number"]:
                self.shoe = False
        return self.verdict(role=role, round=hand["number"], result=result)

    def next_role(self, player: list[str], banker: list[str]) -> str | None:
        order = ["P1", "B1", "P2", "B2"]
        dealt = len(player) + len(banker)
        if dealt < 4:
            return order[dealt]
        pt = (card_points(player[0]) + card_points(player[1])) % 10
        bt = (card_points(banker[0]) + card_points(banker[1])) % 10
        if pt >= 8 or bt >= 8:
            return None
        if pt <= 5:
            if len(player) == 2:
                return "P3"
            if len(banker) == 2 and banker_draws(bt, card_points(player[2])):
                return "B3"
            return None
        if len(banker) == 2 and banker_draws(bt, None):
            return "B3"
        return None

    def score(self, number: int, player: list[str], banker: list[str]) -> dict[str, Any]:
        pt = sum(card_points(c) for c in player) % 10
        bt = sum(card_points(c) for c in banker) % 10
        winner = "player" if pt > bt else "banker" if bt > pt else "tie"
        return {
            "round": number,
            "player": player,
            "banker": banker,
            "player_total": pt,
            "banker_total": bt,
            "winner": winner,
        }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--decks", type=int, default=8)
    parser.add_argument("--ungated", action="store_true")
    parser.add_argument("--cut-policy", default="one_more")
    parser.add_argument("file", nargs="?", default="-")
    args = parser.parse_args()
    table = PlainTable(args.decks, not args.ungated, args.cut_policy)
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

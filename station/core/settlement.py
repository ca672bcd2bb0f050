"""Settlement: what each bet on a round returns, from the round's result and the paytable.

Money is `decimal.Decimal` (stakes as the cage counts them, `"12.50"`), and payouts are
exact: a paytable's odds are terminating decimals (checked when it is loaded), so a stake
times the odds is computed as a `Fraction` and turned into a `Decimal` without rounding.

Every bet comes back with one outcome:
- `refused`: the table does not offer the bet, or not in this round (a side bet open for
  the first N rounds of a shoe); the stake is returned. Checked first: a refused bet was
  never accepted, whatever then happened to the round.
- `refund`: the round was voided (`result` None); the stake is returned.
- `win`, `push`, `loss`: from the rule's outcome key and the paytable (see
  `station.core.paytables`). `returned` is what goes back to the player: stake plus winnings,
  the stake, or nothing.

The outcome keys are read from the `RoundResult` flags of the rules core, so settlement
and the round's record cannot disagree; `station.core.odds` computes the same rules over all
possible rounds, and the tests check one against the other. A chemin de fer result has
punto banco's shape (`player` is the ponte); a baccarat banque result says each tableau's
outcome against the banker (`tableau1_outcome`, `tableau2_outcome`), which its two rules
read. `bank_take` adds up a round for the bank: its net winnings and the house's
commission on them (a baccarat banque paytable's `bank_commission`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation, localcontext
from fractions import Fraction
from typing import Any, Literal

from station.core.paytables import BetSpec, Paytable

#: A completed round's result (`station.core.results.RoundResult`, or a baccarat banque
#: result with `tableau1_outcome` and `tableau2_outcome`); read by key only.
Result = Mapping[str, Any]

Outcome = Literal["win", "loss", "push", "refused", "refund"]

_CARDS_IN_ALL = {4: "four_cards", 5: "five_cards", 6: "six_cards"}
_CARDS_IN_HAND = {2: "two_cards", 3: "three_cards"}


class BetError(ValueError):
    """A bet that cannot be settled as given (no name, a stake that is not an amount)."""


@dataclass(frozen=True)
class Bet:
    name: str
    stake: Decimal

    @classmethod
    def of(cls, obj: Bet | Mapping[str, Any]) -> Bet:
        """A bet from `{"bet": NAME, "stake": AMOUNT}`; the amount a string, int or Decimal.

        A float (what a JSON parser makes of `12.5`) is read by its shortest decimal
        spelling, i.e. as the number that was written.
        """
        if isinstance(obj, Bet):
            return cls(obj.name, _stake(obj.stake))
        if not isinstance(obj, Mapping):
            raise BetError(f'a bet is {{"bet": NAME, "stake": AMOUNT}}, not {obj!r}')
        name = obj.get("bet")
        if not isinstance(name, str) or not name:
            raise BetError(f'a bet needs its name under "bet" (e.g. "banker"): {dict(obj)!r}')
        return cls(name, _stake(obj.get("stake")))


def _stake(value: object) -> Decimal:
    try:
        if isinstance(value, bool):
            raise InvalidOperation
        if isinstance(value, float):
            value = repr(value)
        if not isinstance(value, (str, int, Decimal)):
            raise InvalidOperation
        stake = Decimal(value)
    except (InvalidOperation, ValueError):
        raise BetError(f'stake {value!r} is not an amount; write it like "25" or "12.50"') from None
    if not stake.is_finite() or stake <= 0:
        raise BetError(f"stake {value!r} must be a positive amount")
    return stake


@dataclass(frozen=True)
class Settlement:
    bet: str
    stake: Decimal
    outcome: Outcome
    net: Decimal  # won (> 0) or lost (< 0) by the player; 0 for push, refund, refused
    returned: Decimal  # handed back to the player: stake + winnings, the stake, or 0
    key: str | None = None  # the rule's outcome key (e.g. "win_by_5"), when settled
    reason: str | None = None  # why a bet was refused or refunded

    def to_json(self) -> dict[str, Any]:
        """JSON-ready, with amounts as strings so no reader turns them into floats."""
        return {
            "bet": self.bet,
            "stake": str(self.stake),
            "outcome": self.outcome,
            "net": str(self.net),
            "returned": str(self.returned),
            "key": self.key,
            "reason": self.reason,
        }


def outcome_key(spec: BetSpec, result: Result) -> str | None:
    """The outcome key of `spec`'s rule on a completed round; None when none applies (a loss)."""
    rule, side = spec.rule, spec.side
    if rule == "tableau":
        outcome = result[f"{side}_outcome"]
        return "win" if outcome == "win" else "tie" if outcome == "tie" else None
    if rule == "a_cheval":
        outcomes = (result["tableau1_outcome"], result["tableau2_outcome"])
        if outcomes == ("win", "win"):
            return "both_win"
        return None if outcomes == ("lose", "lose") else "mixed"
    winner = result["winner"]
    if rule == "player":
        return "win" if winner == "player" else "tie" if winner == "tie" else None
    if rule == "banker":
        if winner == "banker":
            return "win_with_6" if result["banker_wins_with_6"] else "win"
        return "tie" if winner == "tie" else None
    if rule == "tie":
        return "tie" if winner == "tie" else None
    if rule in ("pair", "perfect_pair"):
        flag = "pair" if rule == "pair" else "perfect_pair"
        player, banker = result[f"player_{flag}"], result[f"banker_{flag}"]
        if side == "player":
            return "pair" if player else None
        if side == "banker":
            return "pair" if banker else None
        return "both" if player and banker else "pair" if player or banker else None
    if rule == "natural":
        return "natural" if result[f"{side}_natural"] else None
    if rule == "bonus":
        natural = result[f"{side}_natural"]
        if winner == side:
            return "natural_win" if natural else f"win_by_{result['margin']}"
        both = result["player_natural"] and result["banker_natural"]
        return "natural_tie" if winner == "tie" and both else None
    if rule == "lucky_six":
        return _CARDS_IN_HAND[result["banker_cards"]] if result["banker_wins_with_6"] else None
    if rule == "lucky_seven":
        return _CARDS_IN_HAND[result["player_cards"]] if result["player_wins_with_7"] else None
    if rule == "super_lucky_seven":
        if result["player_wins_with_7"] and result["banker_total"] == 6:
            return _CARDS_IN_ALL[result["player_cards"] + result["banker_cards"]]
        return None
    raise ValueError(f"unknown rule {rule!r}")  # the paytable loader admits none


def settle(
    paytable: Paytable,
    round_number: int,
    result: Result | None,
    bets: Iterable[Bet | Mapping[str, Any]],
) -> list[Settlement]:
    """Settle every bet placed on round `round_number` of a shoe; `result` None = voided.

    Raises `BetError` for a bet that is not well formed (nothing is settled then), and
    ValueError when `result` belongs to another round.
    """
    if type(round_number) is not int or round_number < 1:
        raise ValueError(
            f"round_number must be 1, 2, ... (a round of the shoe), not {round_number!r}"
        )
    if result is not None and result["round"] != round_number:
        raise ValueError(f"the result is of round {result['round']}, not round {round_number}")
    placed = [Bet.of(b) for b in bets]
    return [_settle_one(paytable, round_number, result, bet) for bet in placed]


def _stake_back(bet: Bet, status: Outcome, reason: str) -> Settlement:
    """A bet that is not played (refused, or refunded with its round): no net, stake back."""
    return Settlement(bet.name, bet.stake, status, Decimal(0), bet.stake, reason=reason)


def _settle_one(
    paytable: Paytable, round_number: int, result: Result | None, bet: Bet
) -> Settlement:
    stake = bet.stake
    spec = paytable.bets.get(bet.name)
    if spec is None:
        return _stake_back(bet, "refused", f"paytable {paytable.name} offers no bet {bet.name!r}")
    if not spec.open_in(round_number):
        return _stake_back(
            bet,
            "refused",
            f"{bet.name} is offered in rounds 1-{spec.rounds} of a shoe "
            f"only; this is round {round_number}",
        )
    if result is None:
        return _stake_back(bet, "refund", f"round {round_number} was voided")
    key = outcome_key(spec, result)
    ratio = spec.net(key)
    exponent = stake.as_tuple().exponent
    places = -exponent if isinstance(exponent, int) and exponent < 0 else 0
    net = exact_amount(Fraction(stake) * ratio, places)
    outcome: Outcome = "win" if ratio > 0 else "push" if ratio == 0 else "loss"
    return Settlement(bet.name, stake, outcome, net, stake + net, key=key)


@dataclass(frozen=True)
class BankTake:
    """A round from the bank's side: what it won from the bets (`net`, less what it paid;
    negative when it lost), the house's `commission` on a positive net, and what the bank
    keeps (`net - commission`)."""

    net: Decimal
    commission: Decimal
    kept: Decimal

    def to_json(self) -> dict[str, str]:
        return {"net": str(self.net), "commission": str(self.commission), "kept": str(self.kept)}


def bank_take(paytable: Paytable, settled: Iterable[Settlement]) -> BankTake:
    """The bank's net winnings of a round's settled bets and the house's commission on them
    (the paytable's `bank_commission`, baccarat banque; none if the bank did not win)."""
    net = Decimal(0) - sum((s.net for s in settled), Decimal(0))
    commission = Decimal(0)
    if net > 0 and paytable.bank_commission:
        exponent = net.as_tuple().exponent
        places = -exponent if isinstance(exponent, int) and exponent < 0 else 0
        commission = exact_amount(Fraction(net) * paytable.bank_commission, places)
    return BankTake(net, commission, net - commission)


def exact_amount(value: Fraction, places: int = 0) -> Decimal:
    """`value` as the exact Decimal, with at least `places` decimal places (so 25 x 11
    written as "12.50" x 11 reads "137.50"). Its denominator must divide a power of 10."""
    den, twos, fives = value.denominator, 0, 0
    while den % 2 == 0:
        den, twos = den // 2, twos + 1
    while den % 5 == 0:
        den, fives = den // 5, fives + 1
    if den != 1:
        raise ValueError(f"{value} is not an exact decimal amount")
    places = max(twos, fives, places)
    scaled = value * 10**places
    with localcontext() as ctx:
        ctx.prec = len(str(abs(scaled.numerator))) + 2
        return Decimal(scaled.numerator).scaleb(-places)

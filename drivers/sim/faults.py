"""The faults the simulated dealer injects: their names, the errors they make the station
give, and the checks of the rates asked for against the table they are for.

Faults (the `faults` keys, rates in 0..1: the chance of the fault at each point where it
can happen). "Gated only": at an ungated table the same mistake is a legal event (a card
after a complete round opens the next round, a burn card too many is round 1's P1, and
there is no `close_bets` to check), so no station could flag it, and asking for it with
`gated=False` is an error.

- `extra_third` (gated only; each complete round in which a side stood, unless it was
  the shoe's last round): the dealer draws a third card the tableau did not allow, after
  the round is complete. The station: UNEXPECTED_CARD on that card (no reader can tell an
  extra card from a correct one in the middle of a round). Supervisor: `resume`, the card
  is set aside and the completed round stands.
- `missing_third` (gated only; each round that has a third card due, unless it is the
  shoe's last round): the dealer skips the third card and closes betting for the next
  round. The station: MISSING_CARD on `close_bets`. Supervisor: `resume`; the dealer
  draws the third card(s) still due and closes betting again.
- `short_burn` (gated only; each shoe): the dealer burns 1..N fewer cards than the burn
  reveal says and closes betting. The station: BURN_INCOMPLETE on `close_bets`.
  Supervisor: `resume`; the dealer burns the rest and closes betting again.
- `over_burn` (gated only; each shoe): the dealer burns one card too many. The station:
  BURN_EXCESS on that card. Supervisor: `resume`, the card stays in the discard.
- `early_card` (gated only; each round): the dealer draws the round's first card before
  betting closed. The station: UNEXPECTED_CARD on it (BURN_EXCESS before round 1).
  Supervisor: `resume`, the card is set aside; betting closes and the round is dealt
  from the next card.
- `unreadable` (each card out of the shoe for the burn or a hand): the reader cannot
  identify the card (`"card": null`). The station: UNREADABLE_CARD. Supervisor: `resume`
  with the card read by eye (`"card": CODE`), which the station places where it was due.
- `foreign` (each card due, once some code has all `decks` copies out of the shoe): a
  card from another shoe comes out instead. A foreign card is only detectable as one
  copy too many, so its code is one whose copies are all out. The station:
  EXCESS_COPIES. Supervisor: `resume`, the card is taken out of play and the dealer
  draws the card due from the shoe.
- `while_suspended` (each time another fault suspends the table): the dealer, not
  noticing the suspension, draws the next card. The station: CARD_WHILE_SUSPENDED.
  The card is set aside; the supervisor's reaction to the first fault follows.
- `disconnect` (each card due): the reader drops off before the card comes out
  (`{"type": "fault"}`, written by the live service). The station: SCANNER_FAULT.
  Supervisor: once the reader is back, `void` if a round is being dealt (cards may
  have come out unseen, so the round cannot be finished correctly), else `resume`.

Faults that take a card out of the shoe (`extra_third`, `over_burn`, `early_card`,
`while_suspended`) are only injected while enough cards remain to finish the shoe (and,
at cut policy `stop`, not when the card would bring out the cut card between rounds,
which finishes the shoe at once).

The games with options (chemin de fer, baccarat banque) are dealt without a burn unless
told otherwise: there `short_burn` and `over_burn` cannot happen, and `early_card` before
round 1 is UNEXPECTED_CARD. Two more faults, for the games with options only (punto
banco has none: a decision there only confirms what the tableau fixes):

- `decision_missing` (each option): the dealer draws the card without recording the
  hand's decision. The station: DECISION_MISSING, the card is held. Supervisor:
  `resume` with the hand's decision (`"decision": {...}`), which places the held card
  where it is then due; when that is at the next hand's option the resume is
  DECISION_MISSING again and the supervisor resumes with that hand's decision too.
  When the decision would complete the round (the held card is due nowhere) the
  supervisor resumes plainly (the card is set aside) and the dealer records the
  decision. An unreadable card there is resumed with the decision and the card read by
  eye.
- `refused_decision` (each turn that waits): the dealer records a decision the rules
  forbid: standing where the hand must draw (M, or after deciding to draw), or drawing
  for a hand that stood (F, or on a natural). The station: DECISION_NOT_ALLOWED (a
  rejection: nothing changes, nobody needs to act).
"""

from __future__ import annotations

from collections.abc import Mapping

from drivers.sim.deals import Burn, deal_of
from station.core.verdicts import (
    BURN_EXCESS,
    BURN_INCOMPLETE,
    CARD_WHILE_SUSPENDED,
    EXCESS_COPIES,
    MISSING_CARD,
    SCANNER_FAULT,
    UNEXPECTED_CARD,
    UNREADABLE_CARD,
)

#: The codes of games.md's decisions, spelled here from the spec (the dealer's own reading).
DECISION_MISSING = "DECISION_MISSING"
DECISION_NOT_ALLOWED = "DECISION_NOT_ALLOWED"

#: The fault names, in the order the docs list them (the `--faults` keys).
FAULTS = (
    "extra_third",
    "missing_third",
    "short_burn",
    "over_burn",
    "early_card",
    "unreadable",
    "foreign",
    "while_suspended",
    "disconnect",
)
#: The faults at an option, for the games that have options (see the module docstring).
OPTION_FAULTS = ("decision_missing", "refused_decision")
#: Every fault name, in the order the docs list them.
ALL_FAULTS = FAULTS + OPTION_FAULTS
#: Faults that only a gated table can detect (see the module docstring).
GATED_ONLY = frozenset({"extra_third", "missing_third", "short_burn", "over_burn", "early_card"})
#: Faults that need a burn (`burn = "reveal"`).
BURN_ONLY = frozenset({"short_burn", "over_burn"})
#: The error code(s) each fault makes the station give.
FAULT_ERRORS: dict[str, tuple[str, ...]] = {
    "extra_third": (UNEXPECTED_CARD,),
    "missing_third": (MISSING_CARD,),
    "short_burn": (BURN_INCOMPLETE,),
    "over_burn": (BURN_EXCESS,),
    "early_card": (UNEXPECTED_CARD, BURN_EXCESS),
    "unreadable": (UNREADABLE_CARD,),
    "foreign": (EXCESS_COPIES,),
    "while_suspended": (CARD_WHILE_SUSPENDED,),
    "disconnect": (SCANNER_FAULT,),
    "decision_missing": (DECISION_MISSING,),
    "refused_decision": (DECISION_NOT_ALLOWED,),
}


class FaultSpecError(ValueError):
    """A `--faults` spec or a `faults` mapping that names no fault or has a bad rate."""


def applicable_faults(
    gated: bool, game: str = "punto_banco", burn: Burn | None = None
) -> tuple[str, ...]:
    """The faults a table with this gating, game and burn can detect, hence the ones worth
    injecting (`burn` None: the game's)."""
    deal = deal_of(game)
    names = ALL_FAULTS if deal.options else FAULTS
    unfit = set() if gated else set(GATED_ONLY)
    if (deal.burn if burn is None else burn) == "none":
        unfit |= BURN_ONLY
    return tuple(f for f in names if f not in unfit)


def parse_faults(
    spec: str, gated: bool = True, game: str = "punto_banco", burn: Burn | None = None
) -> dict[str, float]:
    """`"unreadable=0.02,foreign=0.1"` or `"all=0.05"` (later entries win) -> rates.

    `all` sets every fault the table can detect (for an ungated table, the faults that
    are not gated only; without a burn, not the burn's; the option faults only in a game
    with options). Raises FaultSpecError naming the valid fault names.
    """
    rates: dict[str, float] = {}
    valid = f"valid names: all, {', '.join(ALL_FAULTS)}"
    if not spec.strip():
        raise FaultSpecError(f"empty fault spec; write NAME=RATE[,NAME=RATE...] ({valid})")
    for part in spec.split(","):
        name, sep, value = (s.strip() for s in part.partition("="))
        if not sep or not name:
            raise FaultSpecError(f"{part.strip()!r} is not NAME=RATE ({valid})")
        if name != "all" and name not in ALL_FAULTS:
            raise FaultSpecError(f"unknown fault {name!r} ({valid})")
        rate = _rate(name, value)
        for fault in applicable_faults(gated, game, burn) if name == "all" else (name,):
            rates[fault] = rate
    check_faults(rates, gated, game, burn)
    return rates


def _rate(name: str, value: object) -> float:
    try:
        rate = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise FaultSpecError(
            f"the rate of {name} must be a number in 0..1, got {value!r}"
        ) from None
    if not 0.0 <= rate <= 1.0:  # also refuses NaN
        raise FaultSpecError(f"the rate of {name} must be in 0..1, got {value!r}")
    return rate


def check_faults(
    faults: Mapping[str, float],
    gated: bool,
    game: str = "punto_banco",
    burn: Burn | None = None,
) -> dict[str, float]:
    """Validated rates: known names, rates in 0..1, and only faults this table can detect
    (no gated-only fault at an ungated table, no burn fault without a burn, no option
    fault in punto banco).

    A key `all` sets every fault this table can detect; named faults override it.
    """
    deal = deal_of(game)
    rates: dict[str, float] = {}
    if "all" in faults:
        rates = dict.fromkeys(applicable_faults(gated, game, burn), _rate("all", faults["all"]))
    for name, value in faults.items():
        if name == "all":
            continue
        if name not in ALL_FAULTS:
            raise FaultSpecError(
                f"unknown fault {name!r} (valid names: all, {', '.join(ALL_FAULTS)})"
            )
        rates[name] = _rate(name, value)
    asked = sorted(n for n, r in rates.items() if r > 0)
    fits = applicable_faults(gated, game, burn)
    if not gated:
        undetectable = [n for n in asked if n in GATED_ONLY]
        if undetectable:
            raise FaultSpecError(
                f"{', '.join(undetectable)} cannot be detected at an ungated table (the card or "
                f"close_bets is legal there); ungated faults: {', '.join(fits)}"
            )
    no_burn = [n for n in asked if n in BURN_ONLY and n not in fits]
    if no_burn:
        raise FaultSpecError(
            f"{', '.join(no_burn)} cannot happen at a table with burn none (there is no "
            f"burn); faults here: {', '.join(fits)}"
        )
    no_option = [n for n in asked if n in OPTION_FAULTS and not deal.options]
    if no_option:
        verb = "needs" if len(no_option) == 1 else "need"
        raise FaultSpecError(
            f"{', '.join(no_option)} {verb} a game with options (chemin_de_fer, "
            f"baccarat_banque); {game} has none"
        )
    return rates

"""Paytables as data: which bets a table offers, what each pays, and for how many rounds.

A paytable is a TOML file. The package ships `traditional` and `no_commission` (punto
banco), `chemin_de_fer` and `baccarat_banque` (`available()` lists them); any other file
is accepted by path, so a casino's own table (tie 9:1, a different bonus schedule, fewer
side bets) needs no code:

    name = "tie_nine"
    extends = "traditional"        # a shipped name, or a path relative to this file
    without = ["lucky_seven_3"]    # bets of the base that this table does not offer

    [bets.tie]                     # replaces the base's `tie` entry as a whole
    rule = "tie"
    pays = { tie = "9:1" }

A paytable is for one game (`game = "chemin_de_fer"`; default `punto_banco`, inherited
through `extends`); a table refuses a paytable of another game. Chemin de fer's results
have punto banco's shape, so its paytables use the punto banco rules (its banker bet's
commission is that bet's odds: `win = "0.95:1"` is 5 %). Baccarat banque's use the two
tableau rules below, and may set `bank_commission = "5%"`: the share of the bank's net
winnings of a round that the house takes (default none; `station.core.settlement.bank_take`).

Each bet has a `rule` (what decides it; settlement and odds both know every rule), a
`side` for the rules that need one, an optional `rounds = N` (offered only in rounds
1..N of a shoe) and `pays`, a table from outcome key to odds:

- `player`: `win`, `tie`.
- `banker`: `win`, `win_with_6` (a banker win with a total of 6; default: as `win`),
  `tie`.
- `tie`: `tie`.
- `pair`, side player | banker | either: `pair` (the hand's first two cards have the
  same rank); with side either also `both` (both hands pair; default: as `pair`, so
  the bet pays once).
- `perfect_pair`, side player | banker | either: as `pair`, with the same rank *and*
  suit (two copies of one card code).
- `natural`, side player | banker: `natural` (the hand totals 8 or 9 on two cards).
- `bonus`, side player | banker: `natural_win` (the side wins holding a natural),
  `natural_tie` (a tie of two naturals), `win_by_1` .. `win_by_9` (the side wins
  without a natural by that many points).
- `lucky_six`: `two_cards`, `three_cards` (the banker wins with 6 on two / three cards).
- `lucky_seven`: `two_cards`, `three_cards` (the player wins with 7 on two / three cards).
- `super_lucky_seven`: `four_cards`, `five_cards`, `six_cards` (the player wins with 7
  while the banker has 6, by the number of cards dealt in all).
- `tableau` (baccarat banque), side tableau1 | tableau2: `win`, `tie` (that tableau's
  outcome against the banker; a loss loses).
- `a_cheval` (baccarat banque, the bet on the line between the tableaux): `both_win`
  (both tableaux win), `mixed` (any other pair of outcomes but both losing).

Odds are strings `"N:M"` (net winnings N for a stake of M, decimals allowed: `"0.95:1"`,
`"1:2"`, `"7:2"`), `"push"` (the stake comes back) or `"lose"`; an outcome key that is
left out loses. Odds must be terminating decimals (M's prime factors are 2 and 5 once
reduced) so that every payout of a decimal stake is exact money (`station.core.settlement`).
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from importlib import resources
from pathlib import Path
from typing import Any

from station.core.games import GAME_PAYTABLES as GAME_PAYTABLES
from station.core.games import game_defaults as game_defaults

#: The outcome keys of each rule (see the module docstring).
RULE_KEYS: dict[str, tuple[str, ...]] = {
    "player": ("win", "tie"),
    "banker": ("win", "win_with_6", "tie"),
    "tie": ("tie",),
    "pair": ("pair", "both"),
    "perfect_pair": ("pair", "both"),
    "natural": ("natural",),
    "bonus": ("natural_win", "natural_tie", *(f"win_by_{m}" for m in range(9, 0, -1))),
    "lucky_six": ("two_cards", "three_cards"),
    "lucky_seven": ("two_cards", "three_cards"),
    "super_lucky_seven": ("four_cards", "five_cards", "six_cards"),
    "tableau": ("win", "tie"),
    "a_cheval": ("both_win", "mixed"),
}
#: The sides a rule accepts; rules absent here take no `side`.
RULE_SIDES: dict[str, tuple[str, ...]] = {
    "pair": ("player", "banker", "either"),
    "perfect_pair": ("player", "banker", "either"),
    "natural": ("player", "banker"),
    "bonus": ("player", "banker"),
    "tableau": ("tableau1", "tableau2"),
}
#: The games a paytable may be for, punto banco (the default) first.
GAMES: tuple[str, ...] = ("punto_banco", "chemin_de_fer", "baccarat_banque")
#: The rules of the cercle tables' banque results; every other rule reads the punto banco
#: result shape, which chemin de fer's results have too.
BANQUE_RULES: tuple[str, ...] = ("tableau", "a_cheval")
#: The rules a paytable of each game may use.
GAME_RULES: dict[str, tuple[str, ...]] = {
    "punto_banco": tuple(r for r in RULE_KEYS if r not in BANQUE_RULES),
    "chemin_de_fer": tuple(r for r in RULE_KEYS if r not in BANQUE_RULES),
    "baccarat_banque": BANQUE_RULES,
}
#: An outcome key that is left out pays as another one (not as a loss).
FALLBACK: dict[tuple[str, str], str] = {
    ("banker", "win_with_6"): "win",
    ("pair", "both"): "pair",
    ("perfect_pair", "both"): "pair",
}

PUSH = Fraction(0)
LOSE = Fraction(-1)


def rule_keys(rule: str, side: str | None) -> tuple[str, ...]:
    """The outcome keys of a rule for a side (`both` exists only for side either)."""
    keys = RULE_KEYS[rule]
    return keys if side == "either" else tuple(k for k in keys if k != "both")


class PaytableError(ValueError):
    """A paytable could not be found or is not valid: a configuration error."""


@dataclass(frozen=True)
class BetSpec:
    """One bet a table offers. `pays` maps each outcome key to the net return per unit
    staked (odds N:M -> N/M, push -> 0, lose -> -1); every key of the rule is present."""

    name: str
    rule: str
    side: str | None
    pays: Mapping[str, Fraction]
    odds: Mapping[str, str]  # the odds as the paytable wrote them, for people
    rounds: int | None = None

    def open_in(self, round_number: int) -> bool:
        """Whether the bet is offered in this round of the shoe (rounds count from 1)."""
        return self.rounds is None or round_number <= self.rounds

    def net(self, key: str | None) -> Fraction:
        """Net return per unit staked for an outcome key (None: no key applies, a loss)."""
        return LOSE if key is None else self.pays[key]

    def describe(self) -> str:
        """The paytable's words for this bet, e.g. `two_cards 12:1, three_cards 20:1`."""
        if len(self.odds) == 1:
            return next(iter(self.odds.values()))
        return ", ".join(f"{key} {odds}" for key, odds in self.odds.items())


@dataclass(frozen=True)
class Paytable:
    name: str
    description: str
    bets: Mapping[str, BetSpec]
    source: str
    #: The game it is for (one of `GAMES`).
    game: str = "punto_banco"
    #: Baccarat banque: the house's share of the bank's net winnings of a round (0: none).
    bank_commission: Fraction = Fraction(0)

    def __getitem__(self, bet: str) -> BetSpec:
        return self.bets[bet]


def available() -> list[str]:
    """Names of the paytables shipped with the station."""
    folder = resources.files(__name__)
    return sorted(p.name[: -len(".toml")] for p in folder.iterdir() if p.name.endswith(".toml"))


def load(spec: str) -> Paytable:
    """A shipped paytable by name (`traditional`), or a TOML file by path."""
    return _load(spec, base_dir=None, seen=())


def _load(spec: str, base_dir: Path | None, seen: tuple[str, ...]) -> Paytable:
    text, source = _read(spec, base_dir)
    if source in seen:
        raise PaytableError(f"{source}: `extends` makes a loop ({' -> '.join((*seen, source))})")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PaytableError(f"{source}: not valid TOML: {exc}") from None
    return _build(data, source, (*seen, source))


def _read(spec: str, base_dir: Path | None) -> tuple[str, str]:
    """The text and a printable source for a shipped name or a file path."""
    if spec in available():
        resource = resources.files(__name__).joinpath(f"{spec}.toml")
        return resource.read_text(encoding="utf-8"), f"paytable {spec}"
    path = Path(spec)
    if base_dir is not None and not path.is_absolute():
        path = base_dir / path
    if not path.is_file():
        raise PaytableError(
            f"no paytable {spec!r}: give one of {', '.join(available())} or the path of a TOML file"
        )
    try:
        return path.read_text(encoding="utf-8"), str(path)
    except (OSError, UnicodeDecodeError) as exc:
        raise PaytableError(f"cannot read the paytable {path}: {exc}") from None


def _build(data: dict[str, Any], source: str, seen: tuple[str, ...]) -> Paytable:
    known = ("name", "description", "game", "bank_commission", "extends", "without", "bets")
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise PaytableError(
            f"{source}: unknown key(s) {', '.join(unknown)} (expected {', '.join(known)})"
        )
    bets: dict[str, BetSpec] = {}
    description = ""
    game, commission = "punto_banco", Fraction(0)
    if "extends" in data:
        base_spec = data["extends"]
        if not isinstance(base_spec, str):
            raise PaytableError(f"{source}: `extends` must be a paytable name or file path")
        base_dir = Path(source).parent if not source.startswith("paytable ") else None
        base = _load(base_spec, base_dir, seen)
        bets.update(base.bets)
        description = base.description
        game, commission = base.game, base.bank_commission
    without = data.get("without", [])
    if not isinstance(without, list) or not all(isinstance(w, str) for w in without):
        raise PaytableError(f"{source}: `without` must be a list of bet names")
    for name in without:
        if name not in bets:
            raise PaytableError(
                f"{source}: `without` names {name!r}, which the base paytable does not offer"
            )
        del bets[name]
    table = data.get("bets", {})
    if not isinstance(table, dict):
        raise PaytableError(f"{source}: `bets` must be a table of bets ([bets.NAME])")
    for name, entry in table.items():
        bets[name] = _bet(name, entry, f"{source}: bet {name!r}")
    if not bets:
        raise PaytableError(f"{source}: the paytable offers no bet (add [bets.NAME] tables)")
    name = data.get("name", Path(source).stem if not source.startswith("paytable ") else "")
    if not isinstance(name, str) or not name:
        raise PaytableError(f"{source}: `name` must be a non-empty string")
    description = data.get("description", description)
    if not isinstance(description, str):
        raise PaytableError(f"{source}: `description` must be a string")
    game = data.get("game", game)
    if game not in GAMES:
        raise PaytableError(f"{source}: `game` must be one of {', '.join(GAMES)}, not {game!r}")
    for bet in bets.values():
        if bet.rule not in GAME_RULES[game]:
            raise PaytableError(
                f"{source}: bet {bet.name!r} has rule {bet.rule}, which a {game} table "
                f"cannot settle; its rules are {', '.join(GAME_RULES[game])}"
            )
    if "bank_commission" in data:
        if game != "baccarat_banque":
            raise PaytableError(
                f"{source}: `bank_commission` is for baccarat_banque paytables (the "
                f'commission on a {game} banker bet is its odds, e.g. win = "0.95:1")'
            )
        commission = parse_percent(data["bank_commission"], f"{source}: `bank_commission`")
    return Paytable(
        name=name,
        description=description,
        bets=bets,
        source=source,
        game=game,
        bank_commission=commission,
    )


def parse_percent(value: object, where: str) -> Fraction:
    """`"5%"` -> 1/20: a commission, from 0 % to less than 100 %."""
    text = value.strip() if isinstance(value, str) else ""
    try:
        if not text.endswith("%"):
            raise InvalidOperation
        rate = Fraction(Decimal(text.removesuffix("%").strip())) / 100
    except (InvalidOperation, ValueError, OverflowError):
        raise PaytableError(
            f'{where}: write a percentage as a string, e.g. "5%", not {value!r}'
        ) from None
    if not 0 <= rate < 1:
        raise PaytableError(f"{where}: {value!r} must be from 0% to less than 100%")
    return rate


def _bet(name: str, entry: object, where: str) -> BetSpec:
    if not isinstance(entry, dict):
        raise PaytableError(f"{where}: expected a table with rule and pays")
    unknown = sorted(set(entry) - {"rule", "side", "pays", "rounds"})
    if unknown:
        raise PaytableError(
            f"{where}: unknown key(s) {', '.join(unknown)} (expected rule, side, pays, rounds)"
        )
    rule = entry.get("rule")
    if rule not in RULE_KEYS:
        raise PaytableError(f"{where}: rule {rule!r} is not one of {', '.join(RULE_KEYS)}")
    side = entry.get("side")
    sides = RULE_SIDES.get(rule, ())
    if sides and side not in sides:
        raise PaytableError(f"{where}: rule {rule} needs side = one of {', '.join(sides)}")
    if not sides and side is not None:
        raise PaytableError(f"{where}: rule {rule} takes no side")
    rounds = entry.get("rounds")
    if rounds is not None and (type(rounds) is not int or rounds < 1):
        raise PaytableError(f"{where}: rounds must be a whole number of at least 1")
    written = entry.get("pays")
    if not isinstance(written, dict) or not written:
        raise PaytableError(
            f"{where}: pays must be a table from outcome key to odds, "
            f'e.g. pays = {{ {RULE_KEYS[rule][0]} = "1:1" }}'
        )
    bad = sorted(set(written) - set(RULE_KEYS[rule]))
    if bad:
        raise PaytableError(
            f"{where}: rule {rule} has no outcome {', '.join(bad)}; its "
            f"outcomes are {', '.join(RULE_KEYS[rule])}"
        )
    if "both" in written and side != "either":
        raise PaytableError(f'{where}: outcome both needs side = "either"')
    odds = {key: _odds_text(written[key], f"{where}, {key}") for key in written}
    pays: dict[str, Fraction] = {}
    for key in rule_keys(rule, side):
        chosen = key if key in odds else FALLBACK.get((rule, key), key)
        pays[key] = parse_odds(odds[chosen], f"{where}, {chosen}") if chosen in odds else LOSE
    return BetSpec(name=name, rule=rule, side=side, pays=pays, odds=odds, rounds=rounds)


def _odds_text(value: object, where: str) -> str:
    if type(value) is int:
        return f"{value}:1"
    if not isinstance(value, str):
        raise PaytableError(
            f'{where}: write odds as a string "N:M" (e.g. "0.95:1"), '
            f'"push" or "lose", not {value!r}'
        )
    return value.strip()


def parse_odds(text: str, where: str = "odds") -> Fraction:
    """`"0.95:1"` -> 19/20 net per unit staked; `"push"` -> 0; `"lose"` -> -1."""
    word = text.strip().lower()
    if word == "push":
        return PUSH
    if word == "lose":
        return LOSE
    win, colon, stake = word.partition(":")
    try:
        if not colon:
            raise InvalidOperation
        ratio = Fraction(Decimal(win.strip())) / Fraction(Decimal(stake.strip()))
    except (InvalidOperation, ZeroDivisionError, ValueError, OverflowError):
        raise PaytableError(
            f'{where}: {text!r} is not odds; write "N:M" (e.g. "11:1", "0.95:1"), "push" or "lose"'
        ) from None
    if ratio <= 0:
        raise PaytableError(f"{where}: odds {text!r} must pay more than nothing")
    den = ratio.denominator
    for prime in (2, 5):
        while den % prime == 0:
            den //= prime
    if den != 1:
        raise PaytableError(
            f"{where}: odds {text!r} make payouts that are not exact decimal "
            f"amounts; use odds whose value is a terminating decimal"
        )
    return ratio

"""`station odds [--decks N | --remaining FILE|-] [--paytable NAME|FILE] [--config FILE] [--json]`.

Exact odds of one round dealt from a shoe: a full shoe of N decks, or each composition of
a JSON Lines file (`{"AS": 7, "TD": 8, ...}`, card code -> copies left), one answer per
composition line, in order.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import IO, TYPE_CHECKING, Any

from station.commands.common import add_config_option, load_config
from station.commands.options import EXIT_OK, EXIT_USAGE, positive_int

if TYPE_CHECKING:
    from station.core.odds import Analysis, Analyzer

EXIT_BAD_LINE = 1  # some composition line could not be analysed (each one is reported)


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "odds",
        help="exact odds and house edge of every bet for one round",
        description="Exact (combinatorial) odds of one round dealt from a shoe: "
        "P(banker/player/tie) and the house edge and RTP of every "
        "bet of the paytable, plus banker_no_commission.",
    )
    shoe = p.add_mutually_exclusive_group()
    shoe.add_argument(
        "--decks",
        type=positive_int,
        default=None,
        metavar="N",
        help="a full shoe of N decks (default: [table] decks of --config, else 8)",
    )
    shoe.add_argument(
        "--remaining",
        metavar="FILE|-",
        help='JSON Lines of compositions {"AS": 7, "TD": 8, ...} (card -> '
        "copies left; a missing card means 0); one answer per line; - is standard input "
        "(default: none, a full shoe; see --decks)",
    )
    add_paytable_option(p)
    add_config_option(p)
    p.add_argument(
        "--json",
        action="store_true",
        help='one JSON object per shoe: {"outcomes": {...}, "bets": {NAME: '
        '{"house_edge": x, "rtp": y}}} (fractions of 1) (default: a table for people)',
    )
    p.set_defaults(func=run)


def add_paytable_option(parser: argparse.ArgumentParser, note: str = "") -> None:
    """--paytable NAME|FILE; `note` says more about how this command uses it."""
    parser.add_argument(
        "--paytable",
        default=None,
        metavar="NAME|FILE",
        help="a shipped paytable (traditional, no_commission; chemin_de_fer, "
        f"baccarat_banque) or a TOML file{note} (default: [table] paytable of --config, "
        "else the game's: traditional for punto banco)",
    )


def run(args: argparse.Namespace) -> int:
    import orjson

    from station.core.odds import Analyzer, OddsNotOffered, full_shoe, seed_bets
    from station.core.paytables import PaytableError
    from station.core.paytables import load as load_paytable

    config = None
    if args.config is not None:
        config = load_config(args, "odds")
        if config is None:
            return EXIT_USAGE
    try:
        if args.paytable is None and config is not None:  # the station's [table] paytable
            paytable = config.table.load_paytable()
        else:
            paytable = load_paytable(args.paytable or "traditional")
        analyzer = Analyzer(seed_bets(paytable))
    except (PaytableError, OddsNotOffered) as exc:
        print(f"station odds: {exc}", file=sys.stderr)
        return EXIT_USAGE
    out = sys.stdout
    if args.remaining is None:
        decks = args.decks
        if decks is None:  # the station's [table] decks, else a standard 8-deck shoe
            decks = 8 if config is None else config.table.decks
        analysis = analyzer.analyse(full_shoe(decks))
        if args.json:
            out.write(orjson.dumps(analysis.to_json()).decode() + "\n")
        else:
            out.write(render(analyzer, analysis, f"a full shoe of {decks} deck(s)", paytable.name))
        return EXIT_OK

    try:
        if args.remaining == "-":
            return answer_each(analyzer, sys.stdin.buffer, "-", args.json, paytable.name)
        with open(args.remaining, "rb") as source:
            return answer_each(analyzer, source, args.remaining, args.json, paytable.name)
    except OSError as exc:
        print(f"station odds: cannot read {args.remaining}: {exc.strerror}", file=sys.stderr)
        return EXIT_USAGE


def answer_each(
    analyzer: Analyzer, source: IO[bytes], name: str, as_json: bool, paytable: str
) -> int:
    """One answer per composition line, in order; a bad line is reported (on stderr, and
    as `{"line", "error"}` in JSON) and the rest still answered."""
    import orjson

    from station.core.odds import CompositionError, parse_composition

    status = EXIT_OK
    out = sys.stdout
    try:
        for lineno, line in enumerate(source, start=1):
            if not line.strip():
                continue
            try:
                try:
                    obj = orjson.loads(line)
                except orjson.JSONDecodeError:
                    raise CompositionError("not a JSON object") from None
                analysis = analyzer.analyse(parse_composition(obj))
            except CompositionError as exc:
                status = EXIT_BAD_LINE
                print(f"station odds: {name}: line {lineno}: {exc}", file=sys.stderr)
                if as_json:
                    out.write(orjson.dumps({"line": lineno, "error": str(exc)}).decode() + "\n")
                continue
            if as_json:
                out.write(orjson.dumps(analysis.to_json()).decode() + "\n")
            else:
                out.write(render(analyzer, analysis, f"line {lineno}", paytable) + "\n")
            out.flush()
    except BrokenPipeError:
        pass  # the reader went away (e.g. `| head`)
    return status


def render(analyzer: Analyzer, analysis: Analysis, shoe: str, paytable: str) -> str:
    """The analysis as a table for people: percentages, favourable bets marked. Column
    widths come from the values, so a long bet name or a wide figure never runs into the
    next column."""
    outcomes = [(name, f"{p:.6f}") for name, p in analysis.outcomes.items()]
    bets = []
    for name, edge in analysis.house_edge.items():
        spec = analyzer.bets[name]
        rounds = "all" if spec.rounds is None else f"1-{spec.rounds}"
        mark = "  * player-favourable" if edge < 0 else ""
        bets.append((name, rounds, f"{edge:.4%}", f"{1 - edge:.4%}", spec.describe() + mark))
    lines = [f"Shoe: {shoe}, {analysis.cards} cards; paytable {paytable}", ""]
    lines += columns(("outcome", "probability"), outcomes, "<>")
    lines.append("")
    lines += columns(("bet", "rounds", "house edge", "RTP", "pays"), bets, "<>>><")
    return "\n".join(lines) + "\n"


def columns(header: tuple[str, ...], rows: Sequence[tuple[str, ...]], align: str) -> list[str]:
    """`header` and `rows` as lines of columns two spaces apart, each as wide as its
    widest cell, aligned by `align` ('<' left, '>' right, one a column)."""
    table = [header, *rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    return [
        "  ".join(f"{cell:{a}{w}}" for cell, a, w in zip(row, align, widths, strict=True)).rstrip()
        for row in table
    ]

"""`station sim-shoe`: play a simulated shoe into a pseudo-terminal, as a shoe reader would.

A hardware-in-the-loop rig with no hardware: the real serial driver (`[reader] url` set
to the `--link` path) reads the cards from the pty; the dealer's and supervisor's
events go to the station's API with `--station URL --token TOKEN` (a supervisor's or
rig token), or are skipped (then start the shoe by hand and use an ungated table).
At a cercle table (`--game`) the dealer's decisions go down the line as the shoe's
decision payloads (`[reader] decision_draw` / `decision_stand`, or the flags), else to
the API. One JSON line per event on stdout says what was done with it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from station.commands.common import load_config
from station.commands.options import (
    EXIT_OK,
    EXIT_USAGE,
    add_game_options,
    add_table_options,
    fraction,
    positive_int,
    resolve_table_options,
)

EXIT_FAILED = 1
#: The [reader] keys sim-shoe takes as flags: key, metavar, help. A flag wins over the
#: key of --config's [reader], which wins over the serial driver's default.
READER_FLAGS = (
    (
        "framing",
        "line|stx-etx",
        'how payloads are cut: "line" (one per line) or "stx-etx" '
        "(STX payload ETX frames) (default: [reader] framing, else line)",
    ),
    (
        "codec",
        "CODEC",
        "how cards are written: text, suit-rank-4, index52 or table:FILE "
        "(default: [reader] codec, else text)",
    ),
    (
        "prefix",
        "BYTES",
        'bytes before each payload: text with \\xNN escapes, or "hex:02" '
        "(default: [reader] prefix, else none)",
    ),
    (
        "suffix",
        "BYTES",
        "bytes after each payload, as --prefix (default: [reader] suffix, else none)",
    ),
    (
        "no_read",
        "TEXT",
        "what the shoe sends for a card it could not read (default: [reader] no_read, else NR)",
    ),
    (
        "cut_card",
        "TEXT",
        "what the shoe sends for the cut card (default: [reader] cut_card, else CUT)",
    ),
    (
        "decision_draw",
        "TEXT",
        "what the shoe sends when the hand whose option waits draws, e.g. CARTE: the "
        "dealer's decisions then go down the line (default: [reader] decision_draw, else "
        "none: decisions go to --station)",
    ),
    (
        "decision_stand",
        "TEXT",
        "what the shoe sends when that hand stands, e.g. NON (default: [reader] "
        "decision_stand, else none)",
    ),
)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more seconds, got {text}")
    return value


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "sim-shoe",
        help="play a simulated shoe into a pty for the serial driver (a rig with no hardware)",
        description="Deal a seeded simulated shoe (as `station simulate`) and write the "
        "reader's part of it as serial bytes into a pseudo-terminal, at a dealer's pace; "
        "dealer and supervisor events go to the station's API with --station.",
    )
    p.add_argument(
        "--link",
        type=Path,
        default=None,
        metavar="FILE",
        help="make FILE a symlink to the pty (point [reader] url at it); needed "
        "for the disconnect fault, which unplugs and replugs the pty (default: none, "
        "the pty's own name is printed)",
    )
    p.add_argument(
        "--pace",
        type=_seconds,
        default=1.0,
        metavar="SECONDS",
        help="seconds between cards and other events (default 1.0)",
    )
    p.add_argument(
        "--unplug-for",
        type=_seconds,
        default=1.0,
        metavar="SECONDS",
        help="seconds a disconnect fault unplugs the reader for (default 1.0)",
    )
    p.add_argument(
        "--seed", type=int, default=0, help="seed of the shuffles and faults (default 0)"
    )
    add_table_options(p)
    add_game_options(p)
    p.add_argument(
        "--option-draw",
        type=fraction,
        default=0.5,
        metavar="P",
        help="the chance that a hand with an option (chemin de fer, baccarat banque) draws; "
        "seeded (default 0.5)",
    )
    p.add_argument(
        "--shoes", type=positive_int, default=1, metavar="N", help="shoes to deal (default 1)"
    )
    p.add_argument(
        "--rounds",
        type=positive_int,
        default=None,
        metavar="N",
        help="at most N rounds per shoe; the supervisor then ends the shoe "
        "(default: deal to the cut card)",
    )
    p.add_argument(
        "--cut-depth",
        default=None,
        metavar="CARDS_OR_FRACTION",
        help="cards behind the cut card (e.g. 16, at least 16), or that fraction of the shoe "
        "(e.g. 0.25) (default 16)",
    )
    p.add_argument(
        "--faults",
        default=None,
        metavar="SPEC",
        help="NAME=RATE[,...] or all=RATE, rates in 0..1 per chance: the faults of "
        "`station simulate` (decision_missing and refused_decision at a cercle table), "
        "plus garbled (a card's frame corrupted on the line) (default: none)",
    )
    # --config (from add_table_options) also gives the [reader] table: how the shoe talks.
    reader = p.add_argument_group(
        "how the shoe's reader talks (default: the [reader] table "
        "of --config, else the station's defaults)"
    )
    for key, metavar, words in READER_FLAGS:
        reader.add_argument(
            f"--{key.replace('_', '-')}", dest=key, default=None, metavar=metavar, help=words
        )
    api = p.add_argument_group("the station's API, for dealer and supervisor events")
    api.add_argument(
        "--station",
        default=None,
        metavar="URL",
        help="e.g. http://127.0.0.1:8000 (else those events are skipped)",
    )
    api.add_argument(
        "--token",
        default="",
        help="bearer token for --station, of the supervisor or rig role (default: none)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import orjson

    from drivers.config import from_mapping
    from drivers.sim.faults import FaultSpecError
    from drivers.sim.pty import PtyPort
    from drivers.sim.rig import Rig, RigError, ShoeEncoder, parse_rig_faults, rig_events
    from drivers.sim.shoe import DEFAULT_CUT_DEPTH, parse_cut_depth
    from station.shared.sections import ConfigError

    def fail(message: str, status: int = EXIT_USAGE) -> int:
        print(f"station sim-shoe: {message}", file=sys.stderr)
        return status

    if not resolve_table_options(args, "sim-shoe"):
        return EXIT_USAGE
    gated = not args.ungated
    station_config = load_config(args, "sim-shoe") if args.config is not None else None
    if args.config is not None and station_config is None:
        return EXIT_USAGE
    # The shoe talks as the station's [reader] expects; the flags below win.
    reader = station_config.reader if station_config is not None else None
    settings: dict[str, Any] = reader.model_dump(exclude={"camera", "sim"}) if reader else {}
    for key, _, _ in READER_FLAGS:
        if getattr(args, key) is not None:
            settings[key] = getattr(args, key)
    settings["driver"] = "serial"
    try:
        config = from_mapping(settings)
        cut_depth = DEFAULT_CUT_DEPTH if args.cut_depth is None else parse_cut_depth(args.cut_depth)
        faults = parse_rig_faults(args.faults, gated, args.game, args.burn)
        stream = rig_events(
            args.seed,
            faults,
            gated,
            decks=args.decks,
            shoes=args.shoes,
            cut_depth=cut_depth,
            cut_policy=args.cut_policy,
            rounds=args.rounds,
            game=args.game,
            burn=args.burn,
            option_draw=args.option_draw,
        )
    except ConfigError as exc:
        return fail(str(exc))
    except FaultSpecError as exc:
        return fail(f"--faults: {exc}; the rig adds garbled")
    except ValueError as exc:
        return fail(str(exc))
    if faults.get("disconnect", 0.0) > 0 and args.link is None:
        return fail("the disconnect fault needs --link (the reader finds the port again there)")
    if args.station is None:
        print(
            "station sim-shoe: no --station: dealer and supervisor events (shoe, close_bets, "
            "resume, void, end_shoe, and decisions the shoe has no button for) are skipped; "
            "start the shoe by hand at an ungated table",
            file=sys.stderr,
        )

    out = sys.stdout.buffer

    def report(row: Any) -> None:
        out.write(orjson.dumps(row) + b"\n")
        out.flush()

    def note(message: str) -> None:
        print(f"station sim-shoe: {message}", file=sys.stderr, flush=True)

    port = PtyPort(args.link)
    where = f"{port.slave_name}" + (f" (linked at {args.link})" if args.link else "")
    note(
        f"shoe on {where}: {config.line_settings()}, {config.framing} framing, "
        f"codec {config.codec}, {args.pace:g} s between events"
    )
    rig = Rig(
        port,
        ShoeEncoder(config),
        report,
        pace=args.pace,
        unplug_for=args.unplug_for,
        station=args.station,
        token=args.token,
        note=note,
    )
    try:
        played = rig.play(stream)
    except RigError as exc:
        return fail(str(exc), EXIT_FAILED)
    except KeyboardInterrupt:
        return 130
    finally:
        port.drain(timeout=2.0)  # the last card reaches the reader before the pty goes away
        port.close()
    note(f"done: {played} events played")
    return EXIT_OK

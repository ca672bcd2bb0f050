"""`station replay [--decks N] [--ungated] [--cut-policy P] [FILE|-]`."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from station.commands.options import EXIT_OK, EXIT_USAGE, add_table_options, table_from_args


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "replay",
        help="decide on every event of a JSON Lines file",
        description="Run replay-format events through the rules core and "
        "print one verdict per event (JSON Lines).",
    )
    add_table_options(p)
    p.add_argument(
        "file",
        nargs="?",
        default="-",
        metavar="FILE|-",
        help="events as JSON Lines (default: standard input)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from station.replay import replay

    table = table_from_args(args)
    if args.file == "-":
        source = sys.stdin.buffer
    else:
        try:
            source = open(args.file, "rb")  # noqa: SIM115 - closed below
        except OSError as exc:
            print(f"station replay: cannot read {args.file}: {exc.strerror}", file=sys.stderr)
            return EXIT_USAGE
    try:
        replay(table, source, sys.stdout.buffer)
    except BrokenPipeError:
        pass  # the reader went away (e.g. `| head`): nothing more to say
    finally:
        if source is not sys.stdin.buffer:
            source.close()
    return EXIT_OK

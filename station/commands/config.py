"""`station config example [--floor]`: print the documented example config, every key with
its default and what it does.

Every `--help` points to `config/example.toml`, which a checkout has but an installed wheel
does not: the files travel as package data (`station/examples/`, links to `config/` in the
checkout), so `station config example > station.toml` starts a config wherever the station
is installed.
"""

from __future__ import annotations

import argparse
import sys
from importlib import resources
from typing import Any

from station.commands.options import EXIT_OK

#: The example of each service: `station run`'s, and `station floor`'s with --floor.
EXAMPLES = {False: "example.toml", True: "floor.example.toml"}


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "config",
        help="print the example config (every key, documented)",
        description="Work with the station's TOML config files.",
    )
    csub = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    e = csub.add_parser(
        "example",
        help="print the example config: every key with its default and what it does",
        description="Print config/example.toml, the station's config with every key, its "
        "default and what it does (with --floor, config/floor.example.toml, the floor "
        "service's). Start a config with `station config example > station.toml` and "
        "delete what you do not change.",
    )
    e.add_argument(
        "--floor",
        action="store_true",
        help="the floor service's example (`station floor --config`) instead of the station's",
    )
    e.set_defaults(func=run)


def example_text(floor: bool = False) -> str:
    """The example config shipped with the package (the station's, or the floor's)."""
    return (resources.files("station") / "examples" / EXAMPLES[floor]).read_text(encoding="utf-8")


def run(args: argparse.Namespace) -> int:
    try:
        sys.stdout.write(example_text(args.floor))
        sys.stdout.flush()
    except BrokenPipeError:
        pass  # e.g. `| head`: the reader has what it wanted
    return EXIT_OK

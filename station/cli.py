"""The `station` command: one entry point, a subcommand per job.

Each subcommand lives in `station/commands/<name>.py` with two functions:
`add_parser(subparsers)` declares its arguments, and the `func` it sets runs it. Heavy
imports happen inside `func`, so `station replay` starts fast whatever else exists.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence
from typing import Any

EXIT_INTERRUPTED = 130

#: Subcommand modules under station.commands, in the order `station --help` lists them.
COMMANDS = (
    "replay",
    "protect",
    "report",
    "simulate",
    "odds",
    "run",
    "floor",
    "journal",
    "key",
    "config",
    "token",
    "sim_shoe",
    "calibrate",
    "scan",
)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser with every subcommand, or with just `only` (the module name) when the
    command line names one: startup then imports nothing the command does not use."""
    parser = argparse.ArgumentParser(
        prog="station", description="Dealer-station controller for live baccarat tables."
    )
    parser.add_argument(
        "--version",
        action=_Version,
        help="print the version, and the journal's and the floor archive's schema versions",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in (only,) if only else COMMANDS:
        importlib.import_module(f"station.commands.{name}").add_parser(sub)
    return parser


class _Version(argparse.Action):
    """`--version`, looked up only when asked (see station.version)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        parser.exit(self.show())

    @staticmethod
    def show() -> int:
        from station.shared import schema_versions
        from station.version import station_version

        print(f"station {station_version()}")
        journal, archive = schema_versions.JOURNAL, schema_versions.ARCHIVE
        print(f"journal schema {journal}, floor archive schema {archive}")
        return 0


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv == ["--version"]:  # before the parser: its subcommands would all be imported
        return _Version.show()
    named = argv[0].replace("-", "_") if argv and not argv[0].startswith("-") else None
    args = build_parser(named if named in COMMANDS else None).parse_args(argv)
    func: Callable[[argparse.Namespace], int] = args.func
    try:
        return func(args)
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] not in ("cv2", "pyzbar"):
            raise
        # `station calibrate` or `scan` on an install without the camera's extra
        print(
            f"station {argv[0]}: the camera's tools need OpenCV and pyzbar, which a plain "
            "install leaves out: pip install 'baccarat-station[camera]'",
            file=sys.stderr,
        )
        return 2
    except KeyboardInterrupt:
        # Ctrl-C: a service has shut down cleanly by then (uvicorn stops the station, then
        # raises the signal again); a traceback would only hide that. 130 = 128 + SIGINT,
        # what a shell reports for a command stopped by Ctrl-C.
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())

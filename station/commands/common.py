"""What the service's subcommands share: `--config FILE`, and loading it with a clear error."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from station.live.config import StationConfig


def add_config_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--config",
        metavar="FILE",
        type=Path,
        default=None,
        help="the station's TOML config (default: built-in defaults; see `station config example`)",
    )


def load_config(args: argparse.Namespace, prog: str, secrets: bool = True) -> StationConfig | None:
    """The config named by --config, or None after printing why it cannot be used.
    `secrets=False`: for a command that connects to nothing and sends nothing (tokens, the
    journal, the key), the broker's and the webhooks' secrets are not read (their
    environment variables need not be set)."""
    from station.live.config import ConfigError, load

    try:
        return load(args.config, secrets=secrets)
    except ConfigError as exc:
        print(f"station {prog}: {exc}", file=sys.stderr)
        return None

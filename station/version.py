"""The installed package's version, looked up only when asked for.

`importlib.metadata` costs 30-100 ms to import (email, zipfile, csv ...), which
`station --version` or `station replay` in a pipeline would pay on every start. The
installer names the package's metadata folder `<name>-<version>.dist-info` on sys.path
(the wheel spec, PEP 427; an editable install does so too), so a listing of sys.path finds
the version; importlib.metadata is asked only when no such folder is there.
"""

from __future__ import annotations

import os
import sys
from functools import cache

DIST = "baccarat_station"


@cache
def station_version() -> str:
    """The version pip installed (`0+unknown` in a checkout that was never installed)."""
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            if name.startswith(DIST + "-") and name.endswith(".dist-info"):
                return name[len(DIST) + 1 : -len(".dist-info")]
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("baccarat-station")
    except PackageNotFoundError:
        return "0+unknown"

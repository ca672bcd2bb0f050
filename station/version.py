"""The installed package's version, looked up only when asked for.

`importlib.metadata` costs about 100 ms to import, which `station replay` in a pipeline
would pay on every start, so nothing imports this at start-up.
"""

from __future__ import annotations

from functools import cache


@cache
def station_version() -> str:
    """The version pip installed (`0+unknown` in a checkout that was never installed)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("baccarat-station")
    except PackageNotFoundError:
        return "0+unknown"

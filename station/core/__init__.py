"""The pure core: cards and points, the rules as data, the table's state machine, results,
odds, paytables, settlement, roads and the published snapshot of a table.

Standard library and numpy only (import-linter checks it): no I/O, no clock, no threads,
so `station replay`, the live station and the tests all decide with the same code.
"""

# The compiled core (issue 36): `make install` compiles the hot modules with mypyc into
# build/core/ (scripts/build_core.py), out of the way of the sources. They are put first on
# this package's path when every one is at least as new as its .py, unless
# STATION_PURE_CORE is set (the pure-Python core: what `make test` runs the pure suites
# against a second time). A wheel (`pip wheel .`) has no build/core/: what it holds is used.
import os as _os
import sys as _sys

_BUILD = _os.path.join(_os.path.dirname(_os.path.dirname(_os.path.dirname(__file__))), "build")
_COMPILED_DIR = _os.path.join(_BUILD, "core", "station", "core")


def _compiled_fresh() -> bool:
    """True when build/core/ holds a compiled module for every .py it was built from, and
    none of those .py is newer (an edit since the build runs as Python, the whole core)."""
    try:
        built = {n.split(".", 1)[0]: n for n in _os.listdir(_COMPILED_DIR) if n.endswith(".so")}
    except OSError:
        return False
    here = _os.path.dirname(__file__)
    for name, so in built.items():
        try:
            if (
                _os.stat(_os.path.join(here, name + ".py")).st_mtime
                > _os.stat(_os.path.join(_COMPILED_DIR, so)).st_mtime
            ):
                return False
        except OSError:
            return False
    return bool(built)


#: Whether this process runs a checkout's compiled core, build/core/ (scripts/build_core.py;
#: an installed wheel's compiled modules sit beside their .py and need no switch).
COMPILED = not _os.environ.get("STATION_PURE_CORE") and _compiled_fresh()
if COMPILED:
    __path__.insert(0, _COMPILED_DIR)
    _sys.path.append(_os.path.join(_BUILD, "core"))  # the modules' shared library

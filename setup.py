"""The wheel's compiled core (issue 36): `pip wheel .` compiles the pure core's hot modules
(scripts/build_core.py's MODULES) with mypyc when it can, and ships them beside their .py;
with no mypyc, no compiler or a failed build the wheel is the pure-Python one. An editable
install (`make install`) compiles nothing here: build/core/ holds a checkout's compiled
modules (`make core`), out of the way of the sources it edits. Everything else about the
package is in pyproject.toml."""

from __future__ import annotations

import os
import runpy
import sys
from pathlib import Path
from typing import Any

from setuptools import setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent


class OptionalBuildExt(build_ext):
    """build_ext that falls back to the pure core: a failed compile ships no .so at all (a
    part of the group would not import)."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:  # no compiler, no headers ...
            print(f"station: the core is not compiled ({exc}); the wheel is pure Python")
            for ext in self.extensions:
                Path(self.get_ext_fullpath(ext.name)).unlink(missing_ok=True)
            self.extensions = []


def ext_modules() -> list[Any]:
    if os.environ.get("STATION_PURE_CORE") or "editable_wheel" in sys.argv:
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:
        return []
    build = runpy.run_path(str(HERE / "scripts" / "build_core.py"))
    sources = [f"station/core/{name}.py" for name in build["MODULES"]]
    # Not pyproject.toml's [tool.mypy]: its pydantic plugin is no build requirement, and
    # the core needs none (as scripts/build_core.py builds it: no config).
    args = ["--config-file", os.devnull, *sources]
    return list(mypycify(args, group_name=build["GROUP"], opt_level="3"))


setup(ext_modules=ext_modules(), cmdclass={"build_ext": OptionalBuildExt})

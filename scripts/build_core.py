"""Compile the pure core's hot modules with mypyc into build/core/ (`make install` runs it).

The checkout keeps its .py files as they are: the compiled modules go to a folder of their
own, which `station/core/__init__.py` puts first on the package's path when they are as
new as their sources (and STATION_PURE_CORE is not set), so an editable install runs
either, and a .py edited since the build runs as Python. No compiler, no mypyc, or a failed
build: a note on stderr and exit 0, the pure-Python core is used.

The modules are those `station replay` and the live writer spend their time in (the
table's state machine and what it returns, the snapshot); numpy's modules (odds,
protection) gain nothing from it (docs/BENCHMARKS.md, issue 36), and `events` stays
Python: mypyc's TypedDicts lose their optional keys (`__required_keys__`), which the
events' checks read.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "build" / "core"
#: station/core/<name>.py compiled, and the shared library's name (a top-level module).
MODULES = (
    "cards",
    "decisions",
    "games",
    "results",
    "rules",
    "snapshot",
    "suspension",
    "table",
    "turns",
    "verdicts",
    "words",
)
GROUP = "station_core"


def up_to_date() -> bool:
    """Every module compiled, none of their sources newer than its build."""
    for name in MODULES:
        built = list((OUT / "station" / "core").glob(f"{name}.*.so"))
        source = ROOT / "station" / "core" / f"{name}.py"
        if len(built) != 1 or source.stat().st_mtime > built[0].stat().st_mtime:
            return False
    return True


def main() -> int:
    if "--force" not in sys.argv and up_to_date():
        print("build_core: build/core/ is up to date")
        return 0
    try:
        import mypyc  # noqa: F401
    except ImportError:
        print("build_core: no mypyc here; the pure-Python core is used", file=sys.stderr)
        return 0
    sources = [f"station/core/{name}.py" for name in MODULES]
    with tempfile.TemporaryDirectory() as tmp:
        # Built from a copy of the core (this checkout's pyproject.toml and its .py files
        # out of the way: the compiled modules must not land beside the sources).
        work = Path(tmp)
        (work / "station").mkdir()
        shutil.copy(ROOT / "station" / "__init__.py", work / "station")
        shutil.copytree(ROOT / "station" / "core", work / "station" / "core")
        (work / "setup.py").write_text(
            "from setuptools import setup\nfrom mypyc.build import mypycify\n"
            f"setup(name='station-core', ext_modules=mypycify({sources!r},"
            f" group_name={GROUP!r}, opt_level='3'))\n"
        )
        done = subprocess.run(
            [sys.executable, "setup.py", "-q", "build_ext", "--build-lib", "out"],
            cwd=work,
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            print(done.stdout[-2000:], done.stderr[-2000:], sep="\n", file=sys.stderr)
            print("build_core: the build failed; the pure-Python core is used", file=sys.stderr)
            return 0
        shutil.rmtree(OUT, ignore_errors=True)
        OUT.mkdir(parents=True)
        for built in (work / "out").rglob("*.so"):
            target = OUT / built.relative_to(work / "out")
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(built, target)
    print(f"build_core: {len(MODULES)} core modules compiled into {OUT.relative_to(ROOT)}/")
    return 0


if __name__ == "__main__":
    sys.exit(main())

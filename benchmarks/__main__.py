"""`make bench`: run every `benchmarks/bench_*.py` module's `main()` and print its figures;
those held against a reference (`benchmarks.figures.record`) again at the end, in one table
of ratios.

`python -m benchmarks NAME...` runs only the named ones (e.g. `replay odds`).
"""

from __future__ import annotations

import importlib
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from benchmarks.figures import FIGURES, table


def main() -> None:
    here = Path(__file__).parent
    names = sorted(p.stem.removeprefix("bench_") for p in here.glob("bench_*.py"))
    chosen = sys.argv[1:] or names
    unknown = sorted(set(chosen) - set(names))
    if unknown:
        sys.exit(f"unknown benchmark(s) {', '.join(unknown)}; choose from {', '.join(names)}")
    for name in chosen:
        print(f"== {name} ==", flush=True)
        started = time.perf_counter()
        importlib.import_module(f"benchmarks.bench_{name}").main()
        print(f"   ({time.perf_counter() - started:.1f} s)\n", flush=True)
    if FIGURES:
        print(f"== ratios to their references, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC ==")
        print(table())


if __name__ == "__main__":
    main()

"""`make bench`: run every `benchmarks/bench_*.py` module's `main()` and print its figures.

`python -m benchmarks NAME...` runs only the named ones (e.g. `replay odds`).
"""

from __future__ import annotations

import importlib
import sys
import time
from pathlib import Path


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


if __name__ == "__main__":
    main()

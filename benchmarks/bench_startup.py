"""`station --version` as a whole process against `python -c "import argparse, json"`:
what a command costs before it does anything (issue 36: a command imports only what it
uses; tests/test_command_imports.py holds the imports, this the time)."""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.figures import record

RUNS = 40
STATION = Path(sys.executable).parent / "station"


def median_run(command: list[str]) -> float:
    times = []
    for _ in range(RUNS):
        started = time.perf_counter()
        subprocess.run(command, stdout=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    reference = median_run([sys.executable, "-c", "import argparse, json"])
    version = median_run([str(STATION), "--version"])
    print(f"startup: medians of {RUNS} runs, each a fresh process")
    record(
        "`station --version`",
        version * 1e3,
        "python -c 'import argparse, json'",
        reference * 1e3,
        2.0,
        "ms",
    )


if __name__ == "__main__":
    main()

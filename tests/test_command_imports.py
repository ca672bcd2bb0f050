"""A command imports only what it uses: the pure commands (`--version`, replay, odds,
simulate, protect) load no web server, broker client, config models, camera or crypto
library, neither while their parser is built nor while they run on a small input.

Why: `station.commands.options` once imported the live station's config at module level
(pydantic, the protection package, the publisher's settings): 0.3-0.5 s before `station
replay` read a line (issue 36). Each case runs in a fresh interpreter and reads its
`sys.modules`, so what the test process imported itself cannot hide a regression.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import run_station

ROOT = Path(__file__).resolve().parent.parent
#: What no pure command may load unless its run needs it (none of these runs does).
HEAVY = ("pydantic", "uvicorn", "fastapi", "starlette", "httpx", "nats", "cv2", "cryptography")
PURE = ("replay", "odds", "simulate", "protect")

PROBE = """
import contextlib, io, json, sys
from station.cli import build_parser, main
argv = json.loads(sys.argv[1])
if argv == ["--parser"]:
    build_parser(sys.argv[2])
else:
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    with contextlib.redirect_stdout(out):
        assert main(argv) == 0, "the command failed"
heavy = json.loads(sys.argv[3])
print(json.dumps(sorted({m.split('.')[0] for m in sys.modules} & set(heavy))))
"""


def heavy_loaded(argv: list[str], only: str = "") -> list[str]:
    """The HEAVY packages in sys.modules of a fresh interpreter after `argv` ran through
    `station.cli.main` (or, for ["--parser"], after `only`'s parser was built)."""
    out = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(argv), only, json.dumps(HEAVY)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    loaded: list[str] = json.loads(out.stdout)
    return loaded


@pytest.mark.parametrize("command", PURE)
def test_building_a_pure_commands_parser_imports_nothing_heavy(command: str) -> None:
    assert heavy_loaded(["--parser"], command) == []


def test_version_imports_nothing_heavy() -> None:
    assert heavy_loaded(["--version"]) == []


@pytest.fixture(scope="module")
def stream(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One simulated shoe (with its faults), as `station simulate` writes it."""
    path = tmp_path_factory.mktemp("imports") / "shoe.jsonl"
    out = run_station("simulate", "--seed", "36", "--shoes", "1", "--faults", "all=0.01")
    assert out.returncode == 0, out.stderr
    path.write_bytes(out.stdout)
    return path


@pytest.mark.parametrize(
    "argv",
    [
        ["simulate", "--seed", "1", "--shoes", "1"],
        ["odds", "--decks", "1"],
        ["replay", "STREAM"],
        ["protect", "STREAM"],
    ],
    ids=lambda argv: argv[0],
)
def test_a_run_of_a_pure_command_imports_nothing_heavy(argv: list[str], stream: Path) -> None:
    argv = [str(stream) if word == "STREAM" else word for word in argv]
    assert heavy_loaded(argv) == []

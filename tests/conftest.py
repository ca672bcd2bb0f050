"""What every test folder shares: the `station` command line (in this process, or as a
real process where the process is what is tested), a live station on 127.0.0.1, and the
markers each folder's tests carry.

`run_station` runs `station.cli.main` here, with the real argument parser, stdin given as
bytes and stdout/stderr captured as bytes, and the exit status a process would have had
(argparse's `SystemExit` included): a test of what a command prints, or of its exit code,
costs no interpreter start-up. `spawn_station` starts a real process, for what only a
process has: signals, `station run`, a pipe between two processes, start-up time.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from station.cli import main

if TYPE_CHECKING:
    from tests.service.kit import Running

ROOT = Path(__file__).resolve().parents[1]
#: The command line of a `station` process from this checkout.
STATION = [sys.executable, "-m", "station.cli"]

#: Folder of tests/ -> the marker its tests carry (registered in pyproject.toml).
FOLDER_MARKERS = {"hil": "hil", "browser": "browser", "camera": "camera"}


@dataclass(frozen=True)
class CliResult:
    """What one `station` command did (the names of `subprocess.CompletedProcess`)."""

    args: list[str]
    returncode: int
    stdout: bytes
    stderr: bytes


def run_station(*args: str, stdin: bytes = b"") -> CliResult:
    """`station ARGS` in this process: `stdin` is its standard input; what it writes to
    stdout and stderr comes back as bytes with its exit status. An exception the command
    does not handle propagates (a process would print it and exit 1)."""
    out, err = io.BytesIO(), io.BytesIO()
    streams = (
        io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8"),
        io.TextIOWrapper(out, encoding="utf-8", write_through=True),
        io.TextIOWrapper(err, encoding="utf-8", errors="backslashreplace", write_through=True),
    )
    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin, sys.stdout, sys.stderr = streams
    try:
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse: --help (0) and usage errors (2)
            code = exit_status(exc.code)
        for stream in streams[1:]:
            stream.flush()
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
    return CliResult(list(args), code, out.getvalue(), err.getvalue())


def exit_status(code: object) -> int:
    """The status a process exits with for `sys.exit(code)`."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def spawn_station(
    *args: str, env: dict[str, str] | None = None, **popen: Any
) -> subprocess.Popen[Any]:
    """`station ARGS` as a process of its own, importing this checkout (`PYTHONPATH`),
    with `env` added to this environment; `popen` goes to `subprocess.Popen`."""
    environment = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.Popen([*STATION, *args], env=environment, **popen)


def spawn_run(
    config: Path, log_level: str | None = "warning", **popen: Any
) -> subprocess.Popen[Any]:
    """`station run --config CONFIG [--log-level LEVEL]` as a process of its own; its
    stdout and stderr are piped as text unless `popen` says otherwise (`env` is added to
    this environment, as in `spawn_station`)."""
    args = ["run", "--config", str(config)]
    if log_level is not None:
        args += ["--log-level", log_level]
    options: dict[str, Any] = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    return spawn_station(*args, **{**options, "text": True, **popen})


@pytest.fixture
def live(tmp_path: Path) -> Iterator[Running]:
    """A station with no reader under a real uvicorn server on 127.0.0.1 (its journal in
    `tmp_path`): the test is the rig (cards, cut, faults through the API, which
    `allow_rig` lets in) and reads need a token (public_read off). The server's imports
    wait for the first test that asks for it."""
    from tests.service.kit import make_config, serve

    config, tokens = make_config(tmp_path, allow_rig=True)
    with serve(config, tokens) as running:
        yield running


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark each test by its folder (tests/hil -> `hil`, ...), so `-m "not hil"` works
    without a `pytestmark` line to forget in each new file."""
    tests = Path(__file__).parent
    for item in items:
        folder = item.path.relative_to(tests).parts[0] if item.path.is_relative_to(tests) else ""
        if folder in FOLDER_MARKERS:
            item.add_marker(FOLDER_MARKERS[folder])


@pytest.fixture(scope="session")
def built_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The checkout's wheel, built once per run (`pip wheel .`, which compiles the core:
    about 15 s) for every test that looks inside it or installs it."""
    dist = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(ROOT)],
        check=True,
    )
    wheels = list(dist.glob("baccarat_station-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]

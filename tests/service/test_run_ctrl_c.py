"""Ctrl-C on `make run` (the demo station), once or twice: the station shuts down cleanly
and the process says nothing more, no KeyboardInterrupt or CancelledError traceback,
exiting 130 (128 + SIGINT, what a shell reports for a command stopped by Ctrl-C)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from station.cli import EXIT_INTERRUPTED, main
from tests.conftest import ROOT, spawn_station
from tests.netkit import free_port

pytestmark = pytest.mark.server


def demo_config(tmp_path: Path) -> Path:
    """config/demo.toml with its journal and token file in `tmp_path` (not the checkout's
    var/, which a `make run` beside the test may be using)."""
    demo = (ROOT / "config" / "demo.toml").read_text()
    moved = demo.replace('"../var/demo-journal.db"', '"journal.db"').replace(
        '"../var/demo-tokens.toml"', '"tokens.toml"'
    )
    assert moved.count('"journal.db"') == 1 and moved.count('"tokens.toml"') == 1
    config = tmp_path / "demo.toml"
    config.write_text(moved)
    return config


@pytest.mark.parametrize(
    ("presses", "at_start"),
    [(1, signal.SIG_DFL), (2, signal.SIG_DFL), (1, signal.SIG_IGN)],
    ids=["once", "twice", "started-with-sigint-ignored"],
)
def test_ctrl_c_stops_the_demo_station_without_a_traceback(
    tmp_path: Path, presses: int, at_start: signal.Handlers
) -> None:
    """Once, or twice in a row (uvicorn's "force quit", which skips waiting for open
    connections: the station is still stopped, not cut off mid-task); or a SIGINT to a
    station started with SIGINT ignored (`station run &` in a script): 130 too, not 0."""
    config = demo_config(tmp_path)
    port = free_port()
    proc = spawn_station(
        "run",
        "--config",
        str(config),
        "--bind",
        f"127.0.0.1:{port}",
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # SIGINT as a terminal delivers it (or as a script's background job has it),
        # whatever this test's own disposition is
        preexec_fn=lambda: signal.signal(signal.SIGINT, at_start),
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            assert proc.poll() is None, proc.communicate()
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(f"http://127.0.0.1:{port}/api/ready").status_code == 200:
                    break
            assert time.monotonic() < deadline, "the demo station never got ready"
            time.sleep(0.1)
        for _ in range(presses):
            proc.send_signal(signal.SIGINT)
            time.sleep(0.02)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == EXIT_INTERRUPTED == 130
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert "Application shutdown complete" in err  # the station was stopped, not killed
    assert ("Ctrl-C again" in err) == (presses == 2)
    assert "demo tokens" in out
    assert main(["journal", "verify", "--config", str(config)]) == 0


def children(pid: int) -> list[int]:
    """The processes `pid` started (the shuffle looks' worker ...), from /proc."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError):
            found += [int(c) for c in (task / "children").read_text().split()]
    return found


def is_look_worker(pid: int) -> bool:
    """A process of multiprocessing's spawn (the shuffle looks' worker), not its resource
    tracker."""
    try:
        return b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


@pytest.mark.parametrize("when", ["worker-starting", "worker-importing", "worker-up"])
def test_ctrl_c_to_the_whole_process_group(tmp_path: Path, when: str) -> None:
    """A terminal's Ctrl-C reaches the station's process group, its helper processes too
    (the shuffle looks' worker, spawned at start): whether the worker is just started,
    in the middle of its imports (numpy's library mapped: Python's own SIGINT handler is
    in place by then) or idle, the station stops cleanly, 130, and nothing prints a
    traceback; the worker does not outlive it."""
    config = demo_config(tmp_path)
    port = free_port()
    proc = spawn_station(
        "run",
        "--config",
        str(config),
        "--bind",
        f"127.0.0.1:{port}",
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        process_group=0,  # a group of its own, as a terminal's foreground job has
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 30
        while not (workers := [c for c in children(proc.pid) if is_look_worker(c)]):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the station started no worker"
            time.sleep(0.002)
        workers = children(proc.pid)  # multiprocessing's resource tracker too
        if when == "worker-importing":
            (worker,) = [w for w in workers if is_look_worker(w)]
            maps = Path(f"/proc/{worker}/maps")
            while "numpy" not in maps.read_text():
                assert time.monotonic() < deadline, "the worker never imported numpy"
                time.sleep(0.001)
        if when == "worker-up":
            while True:
                assert proc.poll() is None, proc.communicate()
                with contextlib.suppress(httpx.TransportError):
                    if httpx.get(f"http://127.0.0.1:{port}/api/ready").status_code == 200:
                        break
                assert time.monotonic() < deadline, "the demo station never got ready"
                time.sleep(0.1)
            time.sleep(1.0)  # the worker's imports are done by now
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == EXIT_INTERRUPTED == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    deadline = time.monotonic() + 5
    while any(Path(f"/proc/{w}").exists() for w in workers):
        assert time.monotonic() < deadline, "a worker outlived the station"
        time.sleep(0.05)


def test_ctrl_c_on_make_run_says_no_error(tmp_path: Path) -> None:
    """`make run` (its install taken as done) stopped by a terminal's Ctrl-C: make says
    nothing (no `make: *** [run] Error 130`), the station shut down cleanly."""
    config = demo_config(tmp_path)
    port = free_port()
    venv = Path(sys.prefix)
    make = subprocess.Popen(
        [
            "make",
            "-s",
            "-o",
            "install",
            "run",
            f"VENV={venv}",
            f"DEMO_CONFIG={config}",
            f"RUN_ARGS=--bind 127.0.0.1:{port}",
        ],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        process_group=0,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            assert make.poll() is None, make.communicate()
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(f"http://127.0.0.1:{port}/api/ready").status_code == 200:
                    break
            assert time.monotonic() < deadline, "the demo station never got ready"
            time.sleep(0.1)
        os.killpg(make.pid, signal.SIGINT)
        out, err = make.communicate(timeout=30)
    finally:
        if make.poll() is None:
            os.killpg(make.pid, signal.SIGKILL)
            make.communicate()
    assert "make:" not in err and "Error" not in err and "Traceback" not in err, err
    assert "Application shutdown complete" in err
    assert "demo tokens" in out

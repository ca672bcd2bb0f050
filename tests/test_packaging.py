"""The package as a user installs it: the wheel, in a clean venv, without the dev extras.

Why: the editable checkout with `.[dev]` hides a runtime dependency that only the dev
extras bring (httpx was one: `station run` failed with ModuleNotFoundError after a plain
`pip install .`). This builds the wheel, installs it the way the manual's install
(docs/install.md) does, and serves a simulated table until `/api/health` and `/api/ready` answer.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
import venv
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.netkit import free_port

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.slow
SCM_VERSION: list[str] = []  # setuptools-scm's version of the checkout, as the wheel is built


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory, built_wheel: Path) -> Iterator[Path]:
    """A clean venv with only the wheel (and its runtime dependencies) installed."""
    work = tmp_path_factory.mktemp("wheel")
    # The version git gives the checkout as it is built (its tag, or its commit).
    scm = subprocess.run(
        [sys.executable, "-m", "setuptools_scm"], cwd=ROOT, capture_output=True, text=True
    )
    SCM_VERSION.append(scm.stdout.strip() if scm.returncode == 0 else "")
    env_dir = work / "venv"
    venv.create(env_dir, with_pip=True)
    pip = env_dir / "bin" / "pip"
    subprocess.run([str(pip), "install", "-q", str(built_wheel)], check=True)
    yield env_dir


def test_the_wheel_carries_no_tests_and_the_package_data(installed: Path) -> None:
    python = installed / "bin" / "python"
    code = (
        "import importlib.util as u, pathlib, station;"
        "p = pathlib.Path(station.__file__).parent;"
        "print(u.find_spec('tests') is None, (p / 'web' / 'index.html').is_file(),"
        " (p / 'core' / 'paytables' / 'traditional.toml').is_file())"
    )
    out = subprocess.run(
        [str(python), "-c", code], capture_output=True, text=True, cwd=installed, check=True
    )
    assert out.stdout.split() == ["True", "True", "True"]


def test_the_wheel_carries_the_compiled_core(installed: Path) -> None:
    """`pip wheel .` compiles the core's hot modules (setup.py; gcc and mypyc are here),
    and the installed package runs them: no build/core/ of a checkout is needed."""
    code = "import station.core.table as t, station.core.events as e; print(t.__file__, e.__file__)"
    out = subprocess.run(
        [str(installed / "bin" / "python"), "-c", code],
        capture_output=True,
        text=True,
        cwd=installed,
        check=True,
    )
    table, events = out.stdout.split()
    assert table.endswith(".so") and str(installed) in table
    assert events.endswith(".py")  # left to Python (scripts/build_core.py says why)


def test_a_plain_install_leaves_the_camera_extra_out(installed: Path) -> None:
    """OpenCV and pyzbar (170 MB) come only with `[camera]`: a serial shoe needs neither
    (the next test serves a simulated table from this venv)."""
    code = "import importlib.util as u; print(u.find_spec('cv2'), u.find_spec('pyzbar'))"
    out = subprocess.run(
        [str(installed / "bin" / "python"), "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["None", "None"]


def test_version(installed: Path) -> None:
    out = subprocess.run(
        [str(installed / "bin" / "station"), "--version"],
        capture_output=True,
        text=True,
        check=True,
    )
    first = out.stdout.splitlines()[0]
    assert first.startswith("station ")
    assert first != "station 0+unknown"  # the installed metadata is found
    if SCM_VERSION[-1]:  # the wheel has the version git gave the checkout it was built from
        assert first == f"station {SCM_VERSION[-1]}"


def test_a_plain_install_serves_a_simulated_table(installed: Path, tmp_path: Path) -> None:
    port = free_port()
    config = tmp_path / "station.toml"
    config.write_text(
        f'[table]\nid = "wheel-1"\n[reader]\ndriver = "sim"\n'
        f"[reader.sim]\ncard_interval = 0.05\nbetting_time = 0.1\nshuffle_time = 0.1\n"
        f'[journal]\npath = "{tmp_path / "journal.db"}"\n'
        f'[api]\nbind = "127.0.0.1:{port}"\npublic_read = true\n'
        f'token_file = "{tmp_path / "tokens.toml"}"\n',
        encoding="utf-8",
    )
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    proc = subprocess.Popen(
        [str(installed / "bin" / "station"), "run", "--config", str(config)],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        health = _wait_json(f"http://127.0.0.1:{port}/api/health", proc)
        assert health["status"] == "ok"
        ready = _wait_json(f"http://127.0.0.1:{port}/api/ready", proc)
        assert ready["ready"] is True, ready
        assert ready["checks"]["reader"]["driver"] == "sim"
        state = _wait_json(f"http://127.0.0.1:{port}/api/state", proc)
        assert state["table_id"] == "wheel-1"
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=20)
    assert "ModuleNotFoundError" not in out, out


def _wait_json(url: str, proc: subprocess.Popen[str], timeout: float = 30.0) -> dict[str, object]:
    deadline = time.monotonic() + timeout
    last: object = None
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"station exited {proc.returncode}: {proc.stdout.read()}")  # type: ignore[union-attr]
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                body: dict[str, object] = json.loads(response.read())
                return body
        except urllib.error.HTTPError as exc:
            last = exc.read()
        except OSError as exc:
            last = exc
        time.sleep(0.2)
    raise AssertionError(f"{url} did not answer 200 in {timeout} s: {last!r}")

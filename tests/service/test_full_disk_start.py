"""A full disk at start is waited out whatever state the journal is in: new, cleanly
stopped (no `-wal`/`-shm`), or left with its `-wal`/`-shm` by a kill. The station serves,
not ready and saying why; once there is room it opens the journal, journals the wait and
takes events; the journal verifies. Each against a real `station run` on a real small
tmpfs."""

from __future__ import annotations

import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from station.cli import main
from station.live.journal import Journal
from station.shared.rows import Row
from tests.conftest import spawn_run
from tests.diskkit import fill, small_disk
from tests.netkit import free_port

pytestmark = [pytest.mark.server, pytest.mark.slow]

#: A shoe, its burn (2H: two cards burned), and a round opened: a table in play.
IN_PLAY = [{"type": "shoe"}] + [{"type": "card", "card": c} for c in ("2H", "KS", "QD")]
IN_PLAY += [{"type": "close_bets"}]


@dataclass
class Run:
    """A `station run` of a journal at `disk/j.db`, with systemd's notify socket."""

    proc: subprocess.Popen[str]
    notify: socket.socket
    url: str
    config: Path
    tokens: dict[str, str]  # by role: the rig's (cards) and the supervisor's

    def post(self, event: dict[str, object], role: str = "supervisor") -> httpx.Response:
        auth = {"Authorization": f"Bearer {self.tokens[role]}"}
        return httpx.post(f"{self.url}/api/events", json=event, headers=auth, timeout=10)

    def status(self, words: str) -> str:
        """The first sd_notify message from now that contains `words` (the process must
        stay up meanwhile)."""
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                message = self.notify.recv(4096).decode()
            except TimeoutError:
                assert self.proc.poll() is None, f"station run exited {self.proc.returncode}"
                continue
            if words in message:
                return message
        raise AssertionError(f"no status with {words!r} in 30 s")


@contextmanager
def station_run(disk: Path, folder: Path, stop: signal.Signals = signal.SIGTERM) -> Iterator[Run]:
    """`station run` (demo tokens, its config and notify socket in `folder`) with its journal
    on `disk`; stopped with `stop` at the end (SIGKILL: as a crash leaves it)."""
    folder.mkdir()
    port = free_port()
    config = folder / "station.toml"
    config.write_text(
        f'[journal]\npath = "{disk / "j.db"}"\n'
        f'[api]\nbind = "127.0.0.1:{port}"\ndemo_tokens = true\nallow_rig = true\n'
    )
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(str(folder / "notify"))
    notify.settimeout(1)
    proc = spawn_run(
        config,
        log_level="error",
        stderr=subprocess.DEVNULL,
        env={"NOTIFY_SOCKET": str(folder / "notify")},
    )
    try:
        assert proc.stdout is not None
        tokens: dict[str, str] = {}
        for line in proc.stdout:
            parts = line.split()
            if len(parts) == 2 and parts[0] in ("rig", "supervisor"):
                tokens[parts[0]] = parts[1]
            if len(tokens) == 2:
                break
        yield Run(proc, notify, f"http://127.0.0.1:{port}", config, tokens)
    finally:
        if proc.poll() is None:
            proc.send_signal(stop)
        proc.wait(30)
        notify.close()
    assert proc.returncode in (0, -stop), f"station run exited {proc.returncode}"


def journal_rows(path: Path) -> list[Row]:
    with Journal(path) as journal:
        return list(journal.rows())


def side_files(disk: Path) -> set[str]:
    return {p.name for p in disk.iterdir() if p.name.startswith("j.db-")}


def leave_journal(disk: Path, folder: Path, state: str) -> None:
    """A journal on `disk` in `state`: none yet (`new`), a table in play cleanly stopped
    (`stopped`: no -wal or -shm), or a table in play whose station was killed (`killed`:
    its -wal and -shm are left, the rows in the -wal)."""
    if state == "new":
        return
    stop = signal.SIGKILL if state == "killed" else signal.SIGTERM
    with station_run(disk, folder, stop) as run:
        assert "READY=1" in run.status("READY=1")
        for event in IN_PLAY:
            assert run.post(event, "rig").json()["ok"]
    expected = {"j.db-wal", "j.db-shm"} if state == "killed" else set()
    assert side_files(disk) == expected


@pytest.mark.parametrize("state", ["new", "stopped", "killed"])
def test_a_full_disk_at_start_is_waited_out_whatever_the_journals_state(
    tmp_path: Path, state: str
) -> None:
    with small_disk(tmp_path, "4m") as disk:
        leave_journal(disk, tmp_path / "before", state)
        filler = fill(disk)
        with station_run(disk, tmp_path / "after") as run:
            waiting = run.status("NOT READY")
            assert "READY=1" in waiting, waiting
            assert "the journal cannot be opened: disk full; free space on" in waiting
            ready = httpx.get(f"{run.url}/api/ready")
            assert ready.status_code == 503
            detail = ready.json()["checks"]["journal"]["detail"]
            assert "cannot be opened: disk full; free space on" in detail
            refused = run.post({"type": "void"})
            assert refused.status_code == 503 and "disk full" in refused.json()["detail"]
            assert run.proc.poll() is None  # still up, still waiting
            filler.unlink()
            assert "ready, journal at row" in run.status("STATUS=")
            assert httpx.get(f"{run.url}/api/ready").json()["checks"]["journal"]["ok"]
            assert run.post({"type": "void"}).status_code == 200
        rows = journal_rows(disk / "j.db")
        [waited] = [r for r in rows if r.event.get("message") == "the journal could not be opened"]
        assert "disk full" in waited.event["reason"]
        assert waited.event["since"] < waited.event["until"]
        kinds = [r.event["type"] for r in rows if r.kind == "event"]
        before = [] if state == "new" else ["restart", *(e["type"] for e in IN_PLAY)]
        assert kinds[: len(before)] == before  # nothing answered before was lost
        assert kinds[len(before) :] == ["restart", "void"]
        assert main(["journal", "verify", "--config", str(run.config)]) == 0

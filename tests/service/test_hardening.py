"""The writer never dies for an event, and a journal that cannot be written (disk full,
read-only, deleted) is waited out: events refused with 503, not ready, the table back
suspended, nothing answered ok lost."""

from __future__ import annotations

import asyncio
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import time
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from websockets.sync.client import connect

from station.cli import main
from station.core.bounds import CUT, MAX_TEXT
from station.live.errors import Refused
from station.live.journal import Journal, JournalError, JournalUnavailable, JournalUnopenable
from station.shared.rows import Row
from tests.conftest import spawn_run
from tests.diskkit import (
    disk_full,
    failing_commits,
    fill,
    padded_void,
    small_disk,
    sqlite_error,
    until_refused,
)
from tests.netkit import free_port
from tests.service.kit import Running, make_config, serve

pytestmark = pytest.mark.server

BURN = [{"type": "shoe"}, {"type": "card", "card": "2H"}, {"type": "card", "card": "KS"}]
BURN += [{"type": "card", "card": "QD"}]


def nested_body(kind: str, key: str, levels: int) -> bytes:
    """An event `levels` deep in all (the event object is level 1) through `key`."""
    inner = "[" * (levels - 1) + "]" * (levels - 1)
    return f'{{"type": "{kind}", "{key}": {inner}}}'.encode()


def post_raw(live: Running, body: bytes, role: str) -> httpx.Response:
    headers = {**live.headers(role), "Content-Type": "application/json"}
    return httpx.post(f"{live.url}/api/events", content=body, headers=headers)


def on_loop(live: Running, coro: Coroutine[Any, Any, Any]) -> Any:
    loop = live.station.loop
    assert loop is not None
    return asyncio.run_coroutine_threadsafe(coro, loop).result(10)


def journal_rows(path: Path) -> list[Row]:
    with Journal(path, create=False) as journal:
        return list(journal.rows())


def verify(path: Path) -> None:
    with Journal(path, create=False) as journal:
        report = journal.verify()
    assert report.ok, report.problems


def wait_for(what: Callable[[], bool], timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while not what():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def state(live: Running) -> httpx.Response:
    return httpx.get(f"{live.url}/api/state", headers=live.headers("viewer"))


# -- events out of bounds ------------------------------------------------------------------


@pytest.mark.parametrize("levels", [254, 253, 17])
def test_a_deeply_nested_event_is_refused_and_the_station_stays_up(
    live: Running, levels: int
) -> None:
    body = nested_body("close_bets", "x", levels)
    r = post_raw(live, body, "dealer")
    assert r.status_code == 422, r.text
    assert "nested deeper than 16 levels" in r.json()["detail"]
    r = post_raw(live, nested_body("resume", "card", levels), "supervisor")
    assert r.status_code == 422 and "nested deeper" in r.json()["detail"]
    assert live.station.fatal is None and live.station.unavailable is None
    assert post_raw(live, nested_body("close_bets", "x", 16), "dealer").status_code == 200
    assert live.post({"type": "shoe"}, "dealer").json()["ok"]
    kinds = [row.event["type"] for row in journal_rows(live.station.config.journal.path)]
    assert kinds == ["notice", "restart", "close_bets", "shoe"]


@pytest.mark.parametrize(
    ("body", "words"),
    [
        (b'{"type": "shoe", "n": 123456789012345678901234567890}', "past 64 bits"),
        (b'{"type": "shoe", "n": 9223372036854775808}', "integer past 64 bits"),
        (b'{"type": "fault", "detail": "' + b"x" * (MAX_TEXT + 1) + b'"}', "4097 characters"),
    ],
)
def test_numbers_past_64_bits_and_long_strings_are_refused(
    live: Running, body: bytes, words: str
) -> None:
    r = post_raw(live, body, "rig")
    assert r.status_code == 422 and words in r.json()["detail"]
    assert post_raw(live, b'{"type": "shoe", "n": 9223372036854775807}', "rig").json()["ok"]
    row = journal_rows(live.station.config.journal.path)[-1]
    assert row.event == {"type": "shoe", "n": 9223372036854775807}  # an int, not a float


def test_an_event_that_cannot_be_stored_is_refused_alone_and_journaled_as_a_notice(
    live: Running,
) -> None:
    """Past the API (a bug, a new source): the writer stores each row before the table
    decides it, so one that cannot be stored changes nothing and the batch commits."""
    station = live.station
    deep: dict[str, Any] = {"type": "cut", "x": []}
    inner = deep["x"]
    for _ in range(300):
        inner.append([])
        inner = inner[0]

    async def batch() -> list[Any]:
        events: list[dict[Any, Any]] = [{"type": "shoe"}, {"type": "cut", 7: "no str key"}, deep]
        events += [{"type": "card", "card": "\ud800"}, {"type": "card", "card": "9C"}]
        sent = [station.submit(e, "api", "tester") for e in events]
        return await asyncio.gather(*sent, return_exceptions=True)

    shoe, key, nest, surrogate, card = on_loop(live, batch())
    assert shoe.verdict["ok"] and card.verdict["role"] == "burn_reveal"
    for refused in (key, nest, surrogate):
        assert isinstance(refused, Refused) and "refused and not applied" in str(refused)
    assert "Dict key must be str" in str(key) and "surrogates" in str(surrogate)
    assert state(live).json()["cards_out"] == 1  # the refused card did not count
    rows = journal_rows(station.config.journal.path)[-5:]
    assert [r.seq for r in rows] == list(range(shoe.seq, card.seq + 1))
    notices = [r.event for r in rows[1:4]]
    assert all(n["type"] == "notice" and "was refused" in n["message"] for n in notices)
    assert [n["event_type"] for n in notices] == ["cut", "cut", "card"]
    assert station.fatal is None and station.unavailable is None
    verify(station.config.journal.path)


def test_a_readers_events_are_cut_to_the_bounds_not_refused(live: Running) -> None:
    station = live.station
    loop = station.loop
    assert loop is not None
    live.post({"type": "shoe"}, "dealer")
    bridge = station.readers.bridge("probe")
    bridge.event({"type": "card", "card": "2H", "raw": "ab" * 50_000, "n": 2**70})
    bridge.notice("frame", image=b"\x00" * 10, deep=orjson.loads(nested_body("x", "y", 40)))
    assert bridge.settled(10)
    card, note = journal_rows(station.config.journal.path)[-2:]
    assert card.verdict is not None and card.verdict["role"] == "burn_reveal"
    assert len(card.event["raw"]) == MAX_TEXT and CUT in card.event["raw"]
    assert card.event["n"] == str(2**70)
    assert (
        note.event["image"] == "00" * 10
        and "[cut: nested deeper" in orjson.dumps(note.event).decode()
    )
    verify(station.config.journal.path)


@pytest.mark.slow
def test_30000_unreadable_cards_while_suspended_keep_the_state_small(live: Running) -> None:
    station = live.station
    loop = station.loop
    assert loop is not None
    for e in BURN:
        live.post(e)
    bridge = station.readers.bridge("garbage")
    for i in range(30_000):
        bridge.event({"type": "card", "card": f"?{i}" + "#" * 200})
    assert bridge.settled(120)
    r = state(live)
    assert len(r.content) < 4096, len(r.content)
    susp = r.json()["suspension"]
    assert susp["code"] == "UNREADABLE_CARD" and susp["later_total"] == 29_999
    assert susp["later_counts"] == {"UNREADABLE_CARD": 29_999} and len(susp["later"]) == 10
    t0 = time.monotonic()
    assert live.post({"type": "card", "card": "AS"}).json()["error"] == "CARD_WHILE_SUSPENDED"
    assert time.monotonic() - t0 < 0.5


# -- a journal that cannot be written ------------------------------------------------------


def check_outage(live: Running, statuses: list[str], words: str) -> None:
    """While the journal cannot be written: 503 saying why, not ready, alive."""
    r = live.post({"type": "card", "card": "9S"})
    assert r.status_code == 503 and words in r.json()["detail"], r.text
    assert "nothing answered was lost" in r.json()["detail"]
    assert r.headers["Retry-After"]
    ready = httpx.get(f"{live.url}/api/ready")
    assert ready.status_code == 503 and words in ready.json()["checks"]["journal"]["detail"]
    health = httpx.get(f"{live.url}/api/health")
    assert health.status_code == 200 and health.json()["status"] == "degraded"
    assert live.station.fatal is None
    assert any("NOT READY" in s and words in s for s in statuses)


def check_recovered(live: Running, answered: list[dict[str, Any]], before: dict[str, Any]) -> None:
    """Written again: the gap and a fault journaled, the table suspended, every event
    answered ok in the journal, the chain whole; then the table deals on."""
    station = live.station
    wait_for(lambda: station.unavailable is None)
    after = state(live).json()
    assert after["suspension"]["code"] == "SCANNER_FAULT"
    assert after["cards_out"] == before["cards_out"]  # the refused card is not there
    path = station.config.journal.path
    rows = journal_rows(path)
    gap, fault = rows[-2:]
    assert gap.event["message"] == "the journal could not be written"
    assert gap.event["refused"]["api"] >= 2 and gap.event["reason"]
    assert fault.event["type"] == "fault" and "check the shoe" in fault.event["detail"]
    assert after["suspension"]["since_seq"] == fault.seq
    by_seq = {r.seq: r for r in rows}
    for answer in answered:
        verdict = by_seq[answer["seq"]].verdict
        assert verdict is not None and verdict["ok"] == answer["ok"]
    verify(path)
    assert live.post({"type": "resume"}, "supervisor").json()["ok"]
    assert live.post({"type": "close_bets"}, "dealer").json()["round"] == 1


@pytest.mark.parametrize(
    ("error", "words"),
    [
        (disk_full(), "disk full; free space on"),
        (sqlite_error("attempt to write a readonly database", 8), "the disk is read-only"),
        (sqlite_error("disk I/O error", 10), "disk I/O error; check the disk holding"),
    ],
)
def test_a_journal_that_cannot_be_written_is_waited_out(
    live: Running, error: sqlite3.Error, words: str
) -> None:
    station = live.station
    statuses: list[str] = []
    station.on_status = statuses.append
    answered = [live.post(e).json() for e in BURN]
    before = state(live).json()
    with failing_commits(station.journal, error):
        check_outage(live, statuses, words)
        loop = station.loop
        assert loop is not None
        bridge = station.readers.bridge("shoe")
        bridge.event({"type": "card", "card": "8D"})
        assert bridge.settled(10)  # refused, not waited for
        assert live.post({"type": "close_bets"}, "dealer").status_code == 503
    check_recovered(live, answered, before)
    assert "ready, journal written again" in statuses[-1]


def test_the_dashboards_hear_of_an_outage_from_a_state_with_no_row(live: Running) -> None:
    """Nothing is committed while the journal cannot be written, so no row can say so: a
    `state` alone does, to every listener (whatever seq it subscribed at), with why and
    since when; /api/state says the same; the rows after it say it is written again."""
    for e in BURN:
        live.post(e)
    assert state(live).json()["journal"] == {"writable": True}
    with connect(f"{live.ws_url}?token={live.tokens['viewer']}") as ws:
        hello = orjson.loads(ws.recv(5))
        assert hello["state"]["journal"] == {"writable": True}
        with failing_commits(live.station.journal, disk_full()):
            assert live.post({"type": "card", "card": "9S"}).status_code == 503
            down = orjson.loads(ws.recv(5))  # no row before it
            assert down["type"] == "state", down
            status = down["state"]["journal"]
            assert status["writable"] is False and "disk full" in status["detail"]
            assert status["since"].endswith("Z") and down["state"]["seq"] == hello["seq"]
            assert state(live).json()["journal"] == status
            with connect(f"{live.ws_url}?token={live.tokens['viewer']}") as late:
                assert orjson.loads(late.recv(5))["state"]["journal"] == status
            assert live.post({"type": "card", "card": "9S"}).status_code == 503
            with pytest.raises(TimeoutError):  # the same outage: said once
                ws.recv(0.5)
        messages = [orjson.loads(ws.recv(10)) for _ in range(3)]
    assert [m["type"] for m in messages] == ["row", "row", "state"]  # the gap, the fault
    assert messages[-1]["state"]["journal"] == {"writable": True}
    assert messages[-1]["state"]["suspension"]["code"] == "SCANNER_FAULT"
    wait_for(lambda: live.station.unavailable is None)
    assert state(live).json()["journal"] == {"writable": True}


def test_rows_lost_during_an_outage_stop_the_station(live: Running) -> None:
    """What cannot be waited out: the journal came back without a row that was answered."""
    station = live.station
    for e in BURN:
        live.post(e)
    with failing_commits(station.journal, sqlite_error("disk I/O error", 10)):
        assert live.post({"type": "close_bets"}, "dealer").status_code == 503
        with sqlite3.connect(station.config.journal.path) as other:
            other.execute("DELETE FROM journal WHERE seq = (SELECT max(seq) FROM journal)")
    wait_for(lambda: station.fatal is not None)
    assert station.fatal is not None and "rows were removed or changed" in station.fatal
    health = httpx.get(f"{live.url}/api/health")
    assert health.status_code == 503 and health.json()["status"] == "failed"


def test_a_station_that_starts_on_a_journal_it_cannot_write_waits_too(tmp_path: Path) -> None:
    config, tokens = make_config(tmp_path, allow_rig=True)
    with serve(config, tokens) as first:
        for e in BURN:
            first.post(e)
    original = Journal.append
    failing = {"on": True}

    def append(self: Journal, pending: Any, *more: Any, **keywords: Any) -> Any:
        if failing["on"]:
            raise JournalUnavailable(self.unwritable(disk_full()))
        return original(self, pending, *more, **keywords)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Journal, "append", append)
        with serve(config, tokens) as live:
            assert live.station.unavailable is not None
            assert httpx.get(f"{live.url}/api/ready").status_code == 503
            failing["on"] = False
            wait_for(lambda: live.station.unavailable is None)
            assert state(live).json()["suspension"]["code"] == "SCANNER_FAULT"
    verify(config.journal.path)


def test_a_journal_deleted_under_the_station_is_refused_until_restored(live: Running) -> None:
    station = live.station
    statuses: list[str] = []
    station.on_status = statuses.append
    answered = [live.post(e).json() for e in BURN]
    before = state(live).json()
    path = station.config.journal.path
    path.unlink()
    check_outage(live, statuses, "was deleted or replaced while the station was running")
    detail = live.post({"type": "close_bets"}, "dealer").json()["detail"]
    assert "never starts a new journal" in detail
    assert not path.exists()  # no new journal started by itself
    copy = re.search(r"`cp (\S+) (\S+)`", detail)
    assert copy is not None and copy[2] == str(path)
    shutil.copyfile(copy[1], copy[2])  # what the message tells the operator to do
    check_recovered(live, answered, before)


def test_a_foreign_file_put_where_the_journal_was_is_not_taken(live: Running) -> None:
    station = live.station
    live.post({"type": "shoe"}, "dealer")
    path = station.config.journal.path
    other = path.with_name("other.db")
    with Journal(other) as journal:  # a new journal: not the one the station wrote
        journal.start("t-test", station.config.table.new_table())
    path.unlink()
    shutil.copyfile(other, path)
    assert live.post({"type": "close_bets"}, "dealer").status_code == 503
    wait_for(lambda: "is not this station's journal" in (station.unavailable or ""))
    r = live.post({"type": "close_bets"}, "dealer")
    assert r.status_code == 503 and "ends at row 1" in r.json()["detail"]
    assert journal_rows(path)[-1].seq == 1  # left as it was


# -- a real small disk ---------------------------------------------------------------------


@pytest.mark.slow
def test_a_real_full_disk_is_waited_out(tmp_path: Path) -> None:
    with small_disk(tmp_path, "4m") as disk:
        config, tokens = make_config(tmp_path, allow_rig=True)
        config = config.model_copy(
            update={"journal": config.journal.model_copy(update={"path": disk / "journal.db"})}
        )
        with serve(config, tokens) as live:
            statuses: list[str] = []
            live.station.on_status = statuses.append
            answered = [live.post(e).json() for e in BURN]
            before = state(live).json()
            filler = fill(disk)

            def void() -> httpx.Response:
                r = live.post(padded_void(), "supervisor")
                if r.status_code == 200:
                    answered.append(r.json())
                return r

            r = until_refused(void)
            assert r.status_code == 503, r.text
            check_outage(live, statuses, "disk full; free space on")
            filler.unlink()
            check_recovered(live, answered, before)


@dataclass
class OnDisk:
    """`station run` with its journal on a small disk, demo tokens, systemd's notify
    socket: what the tests of a full disk talk to."""

    proc: subprocess.Popen[str]
    notify: socket.socket
    url: str
    config: Path
    auth: dict[str, str]  # the supervisor's


@contextmanager
def run_on(disk: Path, tmp_path: Path) -> Iterator[OnDisk]:
    """`station run` with its journal `disk/j.db`; stopped (SIGTERM) at the end, and
    checked to have stopped cleanly."""
    port = free_port()
    config = tmp_path / "station.toml"
    config.write_text(
        f'[journal]\npath = "{disk / "j.db"}"\n'
        f'[api]\nbind = "127.0.0.1:{port}"\ndemo_tokens = true\n'
    )
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(str(tmp_path / "notify"))
    notify.settimeout(30)
    proc = spawn_run(
        config,
        log_level="error",
        stderr=subprocess.DEVNULL,
        env={"NOTIFY_SOCKET": str(tmp_path / "notify")},
    )
    try:
        assert proc.stdout is not None
        tokens: dict[str, str] = {}
        for line in proc.stdout:
            parts = line.split()
            if len(parts) == 2 and parts[0] in ("dealer", "supervisor"):
                tokens[parts[0]] = parts[1]
            if len(tokens) == 2:
                break
        auth = {"Authorization": f"Bearer {tokens['supervisor']}"}
        yield OnDisk(proc, notify, f"http://127.0.0.1:{port}", config, auth)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
        notify.close()
    assert proc.returncode in (0, -signal.SIGTERM)


@pytest.mark.slow
def test_station_run_on_a_full_disk_stays_up_and_tells_systemd(tmp_path: Path) -> None:
    """The process: a hostile POST and a full disk do not stop it; systemd's status line
    says why it is not ready, and then that it is written again."""
    with small_disk(tmp_path, "4m") as disk:
        with run_on(disk, tmp_path) as run:
            assert "READY=1" in run.notify.recv(4096).decode()
            url, auth = f"{run.url}/api/events", run.auth
            body = nested_body("close_bets", "x", 254)
            assert len(body) < 600
            json_type = {**auth, "Content-Type": "application/json"}
            hostile = httpx.post(url, content=body, headers=json_type)
            assert hostile.status_code == 422 and run.proc.poll() is None
            assert httpx.post(url, json={"type": "shoe"}, headers=auth).json()["ok"]
            filler = fill(disk)
            r = until_refused(lambda: httpx.post(url, json=padded_void(), headers=auth))
            assert r.status_code == 503 and "disk full" in r.json()["detail"]
            status = run.notify.recv(4096).decode()
            assert status.startswith("STATUS=table table-1: NOT READY: the journal cannot be")
            assert httpx.get(f"{run.url}/api/ready").status_code == 503
            filler.unlink()
            assert "ready, journal written again" in run.notify.recv(4096).decode()
            assert httpx.post(url, json={"type": "resume"}, headers=auth).json()["ok"]
            assert run.proc.poll() is None
        assert main(["journal", "verify", "--config", str(run.config)]) == 0


def notified(notify: socket.socket, words: str) -> str:
    """The first sd_notify message from now that contains `words` (others skipped)."""
    while True:
        message = notify.recv(4096).decode()
        if words in message:
            return message


@pytest.mark.slow
def test_station_run_on_a_full_disk_waits_for_a_new_journal(tmp_path: Path) -> None:
    """A journal that cannot even be created (new, on a full disk) is waited out, not a
    failed start that systemd would retry five times and give up on: the station serves,
    tells systemd it is up but not ready and why, and starts once the disk has room."""
    with small_disk(tmp_path, "4m") as disk:
        filler = fill(disk)
        with run_on(disk, tmp_path) as run:
            url, auth = run.url, run.auth
            waiting = run.notify.recv(4096).decode()
            assert "READY=1" in waiting, waiting
            assert "NOT READY: the journal cannot be opened: disk full; free space on" in waiting
            ready = httpx.get(f"{url}/api/ready").json()
            assert "cannot be opened: disk full" in ready["checks"]["journal"]["detail"]
            health = httpx.get(f"{url}/api/health")
            assert health.status_code == 200 and health.json()["status"] == "degraded"
            r = httpx.post(f"{url}/api/events", json={"type": "shoe"}, headers=auth)
            assert r.status_code == 503 and "disk full" in r.json()["detail"]
            state = httpx.get(f"{url}/api/state", headers=auth)
            assert state.status_code == 503 and "disk full" in state.json()["detail"]
            time.sleep(1.0)  # a few tries more: still waiting, still up
            assert run.proc.poll() is None
            filler.unlink()
            assert "ready, journal at row" in notified(run.notify, "STATUS=")
            assert httpx.post(f"{url}/api/events", json={"type": "shoe"}, headers=auth).json()["ok"]
        rows = journal_rows(disk / "j.db")
        [waited] = [r for r in rows if r.event.get("message") == "the journal could not be opened"]
        assert "disk full" in waited.event["reason"]
        assert waited.event["since"] < waited.event["until"]
        assert [r.event["type"] for r in rows if r.kind == "event"] == ["restart", "shoe"]
        assert main(["journal", "verify", "--config", str(run.config)]) == 0


def test_a_command_on_a_journal_it_cannot_open_says_what_to_do(tmp_path: Path) -> None:
    """The same condition stops a command (it has no one to wait for), in words."""
    with small_disk(tmp_path, "1m") as disk:
        fill(disk)
        with pytest.raises(JournalError, match="cannot be opened: disk full; free space on"):
            Journal(disk / "j.db")
        (disk / "j.db").unlink(missing_ok=True)
        subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
        with pytest.raises(JournalUnopenable, match="the disk is read-only"):
            Journal(disk / "j.db")

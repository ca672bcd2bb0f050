"""Issue 32, the station's half: an insider who can write the journal file, the config
and the token file and restart the service (and cannot read the signing key), tried on
real `station run` processes with a signed journal, the sim reader (or dealt rounds where
a test must know the cards), and webhooks to a receiver that checks every HMAC signature
and keeps every delivery (`Ledger`). Whatever the attack, the game server never gets one
id with two bodies, nor two results for one round key (journal, epoch, shoe, round).

- attack 1: made-up `round_result` bodies written into the outbox under the ids of the
  next rows are never sent; they are journaled, alerted, and the real results arrive;
- attack 2: a journal rewritten as if never signed is not signed anew at the next start
  (`station journal adopt` is the explicit way), and `verify --public-key` fails on rows
  the key did not sign unless told which to accept;
- attack 11: a journal with two rows swapped (or a row rewritten and re-hashed) is
  refused at start, before anything new is signed;
- attack 3 (the station's half): a journal cut short, put back from an older copy, or
  whose head anchor is missing or signed by another key, goes on only in a new epoch,
  journaled and alerted, and a restart never heals it.
"""

from __future__ import annotations

import importlib.util
import secrets
import shutil
import sqlite3
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import orjson
import pytest

from station.core.table import Table
from station.live.journal import Journal
from station.live.journal import anchor as anchors
from station.live.signals import DELIVERY_HEADER, SIGNATURE_HEADER
from station.shared.rows import Pending, row_hash
from station.shared.signing import SigningKey
from tests.conftest import ROOT, spawn_run
from tests.service.stationkit import (
    BURN,
    PATIENCE,
    StationProcess,
    natural_round,
    running,
    station,
    write_config,
)

pytestmark = pytest.mark.server

SIM = """
[reader]
driver = "sim"
[reader.sim]
card_interval = 0.001
betting_time = 0.001
shuffle_time = 0.01
fault_chance = 0
supervisor_after = 0.01
seed = 32
"""


def example() -> ModuleType:
    """examples/verify_webhook.py: the manual's signature check , as a game server has it."""
    spec = importlib.util.spec_from_file_location(
        "verify_webhook", ROOT / "examples" / "verify_webhook.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


VERIFY = example()


@dataclass
class Ledger:
    """A game server that checks each delivery's HMAC signature and keeps every one it
    took (duplicates too), so a test can ask what it was ever told."""

    secret: bytes
    url: str = ""
    got: list[dict[str, Any]] = field(default_factory=list)
    forged: int = 0  # deliveries whose signature did not verify
    lock: threading.Lock = field(default_factory=threading.Lock)

    def bodies(self) -> list[dict[str, Any]]:
        with self.lock:
            return list(self.got)

    def results(self) -> list[dict[str, Any]]:
        return [b for b in self.bodies() if b["type"] == "round_result"]

    def check(self) -> None:
        """The guarantee: no id with two bodies, no round key with two results."""
        by_id: dict[str, dict[str, Any]] = {}
        by_round: dict[tuple[Any, ...], Any] = {}
        for body in self.bodies():
            seen = by_id.setdefault(body["id"], body)
            assert seen == body, f"id {body['id']} came with two bodies: {seen} and {body}"
            if body["type"] == "round_result":
                key = (body["journal"], body["epoch"], body["shoe"], body["round"])
                result = by_round.setdefault(key, body["result"])
                assert result == body["result"], f"round {key} got two results"
        assert self.forged == 0


@contextmanager
def ledger() -> Iterator[Ledger]:
    import http.server

    book = Ledger(secrets.token_hex(32).encode())

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            genuine = VERIFY.verify(body, self.headers.get(SIGNATURE_HEADER, ""), book.secret)
            with book.lock:
                if not genuine:
                    book.forged += 1
                else:
                    event = orjson.loads(body)
                    assert event["id"] == self.headers[DELIVERY_HEADER]
                    book.got.append(event)
            self.send_response(204 if genuine else 400)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    book.url = f"http://127.0.0.1:{server.server_address[1]}/station"
    try:
        yield book
    finally:
        server.shutdown()
        server.server_close()


def wait_for(ready: Callable[[], bool], what: str, timeout: float = PATIENCE) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def signed_station(tmp_path: Path, book: Ledger, sim: bool = True) -> tuple[Path, dict[str, str]]:
    """A station with a key, its webhooks to `book`, dealt by the sim reader (or not)."""
    (tmp_path / "hook.secret").write_text(book.secret.decode() + "\n")
    hook = f'[[signals.webhook]]\nurl = "{book.url}"\nsecret_file = "hook.secret"\n'
    config, tokens = write_config(
        tmp_path, 'signing_key = "station.pem"', hook + (SIM if sim else "")
    )
    made = station("key", "init", "--config", str(config))
    assert made.returncode == 0, made.stderr
    return config, tokens


def journal_path(tmp_path: Path) -> Path:
    return tmp_path / "var" / "journal.db"


def deal_results(book: Ledger, more: int) -> Callable[[], bool]:
    """Whether `more` results have come since now."""
    base = len(book.results())
    return lambda: len(book.results()) >= base + more


def verify(config: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return station(
        "journal",
        "verify",
        "--config",
        str(config),
        "--public-key",
        str(config.parent / "station.pem"),
        *extra,
    )


def refused_start(config: Path) -> subprocess.CompletedProcess[str]:
    """`station run` that must stop by itself (it cannot start); its exit and output."""
    proc = spawn_run(config)
    try:
        out, err = proc.communicate(timeout=PATIENCE)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise AssertionError("the station started on a journal it must refuse") from None
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def raw(path: Path) -> sqlite3.Connection:
    """The journal file as the insider opens it: plain SQLite, no station code."""
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    return db


def alerts(proc: StationProcess) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = proc.get("/api/state").json()["journal"].get("alerts", [])
    return found


def notices(proc: StationProcess, message: str) -> list[dict[str, Any]]:
    """The notices saying `message` among the rows committed when asked. Read up to the
    state's seq then, not to the journal's end: the sim deals on (a row a millisecond)
    while the pages are read, and a reader chasing the end under load never reaches it."""
    through: int = proc.get("/api/state").json()["seq"]
    found: list[dict[str, Any]] = []
    after = 0
    while after < through:
        answer = proc.get(f"/api/journal?after={after}&limit=1000")
        assert answer.status_code == 200, answer.text
        page: list[dict[str, Any]] = answer.json()["events"]
        assert page, f"the journal ends at row {after}, before row {through} of the state"
        found.extend(r for r in page if r["seq"] <= through)
        after = page[-1]["seq"]
    return [r for r in found if r["event"].get("message") == message]


# -- attack 1: fabricated results through the outbox --------------------------------------


def test_made_up_results_in_the_outbox_never_reach_the_game_server(tmp_path: Path) -> None:
    with ledger() as book:
        config, tokens = signed_station(tmp_path, book)
        with running(config, tokens) as proc:
            wait_for(deal_results(book, 5), "five results")
        genuine = book.results()[-1]
        path = journal_path(tmp_path)
        db = raw(path)
        last = db.execute("SELECT max(seq) FROM journal").fetchone()[0]
        endpoint = endpoint_key(book.url)
        forged: list[bytes] = []
        prefix = genuine["id"].rsplit(":", 2)[0]  # table:journal:epoch of the running epoch
        for seq in range(last + 1, last + 40):  # the ids of the 39 next rows
            body = {
                **genuine,
                "id": f"{prefix}:{seq}:round_result",
                "seq": seq,
                "round": genuine["round"] + seq - last,
                "result": {**genuine["result"], "winner": "banker"},
            }
            forged.append(orjson.dumps(body))
            db.execute(
                "INSERT INTO outbox (endpoint, seq, id, body) VALUES (?, ?, ?, ?)",
                (endpoint, seq, body["id"], forged[-1]),
            )
        # and a genuine id of a delivered event, given another body (another winner: the
        # same one would be the body delivered already), sealed with a junk seal
        winner = next(w for w in ("tie", "banker") if w != genuine["result"]["winner"])
        other = orjson.dumps({**genuine, "result": {**genuine["result"], "winner": winner}})
        seal = "0" * 64 + ":" + "A" * 88
        db.execute(
            "INSERT OR REPLACE INTO outbox (endpoint, seq, id, body, seal) VALUES (?, ?, ?, ?, ?)",
            (endpoint, genuine["seq"], genuine["id"], other, seal),
        )
        db.close()
        with running(config, tokens) as proc:
            (refused,) = notices(proc, "webhook events refused")
            assert refused["event"]["count"] == 40
            assert [a["code"] for a in alerts(proc)] == ["OUTBOX_FORGED"]
            wait_for(
                lambda: any(r["seq"] > last + 40 for r in book.results()),
                "real results past the forged ids",
            )
        sent = [orjson.dumps(b) for b in book.bodies()]
        assert not set(forged) & set(sent) and other not in sent
        real = {r["id"]: r for r in book.results() if last < r["seq"] < last + 40}
        assert real, "the real results under those ids were delivered"
        book.check()
        assert verify(config).returncode == 0


def endpoint_key(url: str) -> str:
    """The endpoint's key in the outbox (a hash of its URL)."""
    from station.live.signals import Endpoint

    return Endpoint(url, None, frozenset()).key


# -- attack 2: a rewritten history laundered through "unsigned" ----------------------------


def rewrite_unsigned(path: Path, change: Callable[[int, dict[str, Any]], dict[str, Any]]) -> int:
    """Rewrite the journal at `path` as if it had never been signed, with the station's
    own code: row 1 names no key, no signatures, `change` applied to every event, verdicts
    decided again by the core, hashes and the head anchor redone. Returns its last seq."""
    with Journal(path) as old:
        rows = list(old.rows())
        settings = old.settings()
    assert settings is not None
    forged = path.with_name("forged.db")
    table = Table()
    with Journal(forged) as new:
        created = rows[0]
        event = {k: v for k, v in created.event.items() if k != "signing_key"}
        new.append([Pending(created.source, created.actor, event, ts=created.ts)])
        for row in rows[1:]:
            if row.kind == "notice":
                if row.event.get("message") in ("journal signed", "signing key rotated"):
                    continue
                new.append([Pending(row.source, row.actor, row.event, ts=row.ts)])
                continue
            event = change(row.seq, row.event)
            verdict = dict(table.decide(event).verdict)
            new.append([Pending(row.source, row.actor, event, verdict, ts=row.ts)])
        last = new.last_seq
    for suffix in ("", ".head"):
        (path.with_name(path.name + suffix)).unlink(missing_ok=True)
        forged.with_name(forged.name + suffix).rename(path.with_name(path.name + suffix))
    for suffix in ("-wal", "-shm"):
        path.with_name(path.name + suffix).unlink(missing_ok=True)
    return last


def test_a_history_rewritten_as_unsigned_is_not_signed_anew(tmp_path: Path) -> None:
    with ledger() as book:
        config, tokens = signed_station(tmp_path, book, sim=False)
        with running(config, tokens) as proc:
            proc.post({"type": "shoe"}, "dealer")
            for event in BURN:
                proc.post(event)
            for n in range(1, 4):
                for event in natural_round(n):
                    proc.post(event)
            wait_for(lambda: len(book.results()) == 3, "three results")
        round_2 = book.results()[1]
        assert round_2["result"]["winner"] == "player"
        p1, b1, p2, b2 = range(round_2["seq"] - 3, round_2["seq"] + 1)  # its four cards
        swap = {p1: b1, b1: p1, p2: b2, b2: p2}
        with Journal(journal_path(tmp_path)) as j:
            events = {r.seq: r.event for r in j.rows()}

        def banker_wins(seq: int, event: dict[str, Any]) -> dict[str, Any]:
            """Round 2's hands swapped: the banker's natural 9 beats the player's 7."""
            return events[swap[seq]] if seq in swap else event

        rewrite_unsigned(journal_path(tmp_path), banker_wins)
        done = refused_start(config)
        assert done.returncode == 1
        assert f"station journal adopt --config {config}" in done.stderr
        assert "written unsigned" in done.stderr
        checked = verify(config)
        assert checked.returncode == 1
        assert "no row is signed by the key given" in checked.stderr
        assert verify(config, "--accept-unsigned-before", "1000").returncode == 1
        # nothing new reached the game server; what it has is what the station sent
        assert len(book.results()) == 3
        book.check()


def test_an_unsigned_journal_is_adopted_only_by_the_explicit_command(tmp_path: Path) -> None:
    """The honest way from unsigned to signed: refused at start, adopted by the operator
    with `station journal adopt`, which journals what it adopted; `verify --public-key`
    then fails on the unsigned rows unless told to accept them, and says how many."""
    config, tokens = write_config(tmp_path)
    with running(config, tokens) as proc:
        proc.post({"type": "shoe"}, "dealer")
    text = config.read_text().replace("[journal]\n", '[journal]\nsigning_key = "station.pem"\n')
    config.write_text(text)
    assert station("key", "init", "--config", str(config)).returncode == 0
    done = refused_start(config)
    assert done.returncode == 1 and "station journal adopt --config" in done.stderr
    adopted = station("journal", "adopt", "--config", str(config), "--by", "pit boss")
    assert adopted.returncode == 0, adopted.stderr
    with Journal(journal_path(tmp_path)) as journal:
        rows = list(journal.rows())
    (adoption,) = [r for r in rows if r.event.get("message") == "journal signed"]
    first, last = adoption.event["adopted"]["rows"]
    assert (first, last) == (1, adoption.seq - 1)
    assert adoption.event["adopted"]["by"] == "pit boss"
    assert adoption.event["adopted"]["head_hash"] == rows[last - 1].hash
    assert adoption.signature is not None
    again = station("journal", "adopt", "--config", str(config))
    assert again.returncode == 1 and "signed already" in again.stderr
    with running(config, tokens) as proc:
        proc.post(BURN[0])
    strict = verify(config)
    assert strict.returncode == 1 and f"--accept-unsigned-before {last + 1}" in strict.stderr
    accepted = verify(config, "--accept-unsigned-before", str(last + 1))
    assert accepted.returncode == 0, accepted.stderr
    assert f"{last} row(s) accepted unsigned" in accepted.stdout


def test_a_fresh_signed_journal_just_works(tmp_path: Path) -> None:
    with ledger() as book:
        config, tokens = signed_station(tmp_path, book)
        with running(config, tokens) as proc:
            wait_for(deal_results(book, 2), "two results")
            assert alerts(proc) == []
        head = anchors.read(journal_path(tmp_path).with_name("journal.db.head"))
        assert head is not None and head.signature is not None and not head.legacy
        with running(config, tokens) as proc:
            wait_for(deal_results(book, 2), "two more results")
            assert alerts(proc) == [] and notices(proc, "journal discontinuity") == []
        assert verify(config).returncode == 0
        book.check()


# -- attack 11: no chain check at start -----------------------------------------------------


def test_a_journal_with_two_rows_swapped_is_refused_at_start(tmp_path: Path) -> None:
    with ledger() as book:
        config, tokens = signed_station(tmp_path, book)
        with running(config, tokens):
            wait_for(deal_results(book, 3), "three results")
        path = journal_path(tmp_path)
        db = raw(path)
        last = db.execute("SELECT max(seq) FROM journal").fetchone()[0]
        i = last // 2
        cols = "ts, source, actor, kind, event, verdict, prev_hash, hash, signature"
        a = db.execute(f"SELECT {cols} FROM journal WHERE seq = ?", (i,)).fetchone()
        b = db.execute(f"SELECT {cols} FROM journal WHERE seq = ?", (i + 1,)).fetchone()
        sets = ", ".join(f"{c.strip()} = ?" for c in cols.split(","))
        db.execute(f"UPDATE journal SET {sets} WHERE seq = ?", (*b, i))
        db.execute(f"UPDATE journal SET {sets} WHERE seq = ?", (*a, i + 1))
        db.close()
        before = len(book.bodies())
        done = refused_start(config)
        assert done.returncode == 1
        assert f"row {i}:" in done.stderr
        assert "station journal verify" in done.stderr and "station journal restore" in done.stderr
        with Journal(path) as journal:  # nothing was signed after them
            assert journal.last_seq == last
        assert len(book.bodies()) == before
        book.check()


def test_a_row_rewritten_and_rehashed_is_refused_at_start(tmp_path: Path) -> None:
    """The chain and the anchor redone with the station's own code: only the signatures
    tell, and the start checks them (every one: the anchor no longer vouches)."""
    with ledger() as book:
        config, tokens = signed_station(tmp_path, book)
        with running(config, tokens):
            wait_for(deal_results(book, 3), "three results")
        path = journal_path(tmp_path)
        db = raw(path)
        rows = db.execute(
            "SELECT seq, ts, source, actor, kind, event, verdict FROM journal ORDER BY seq"
        ).fetchall()
        target = next(r for r in rows if r[4] == "notice" and r[0] > 1)[0]
        prev = db.execute("SELECT prev_hash FROM journal WHERE seq = ?", (target,)).fetchone()[0]
        for seq, ts, source, actor, kind, event, verdict in rows[target - 1 :]:
            if seq == target:
                event = orjson.dumps({**orjson.loads(event), "edited": True}).decode()
            h = row_hash(seq, ts, source, actor, kind, event, verdict, prev)
            db.execute(
                "UPDATE journal SET event = ?, prev_hash = ?, hash = ? WHERE seq = ?",
                (event, prev, h, seq),
            )
            prev = h
        db.close()
        path.with_name("journal.db.head").write_bytes(
            anchors.encode(rows[-1][0], prev, "", "", None)
        )
        done = refused_start(config)
        assert done.returncode == 1
        assert f"row {target}: its signature does not verify" in done.stderr
        book.check()


# -- attack 3, the station's half: a rollback or a cut without `journal restore` -----------


def banker_round(n: int) -> list[dict[str, Any]]:
    """`natural_round(n)` with the hands swapped: the banker's natural 9 beats a 7."""
    close, p1, b1, p2, b2 = natural_round(n)
    return [close, b1, p1, b2, p2]


def test_a_journal_cut_short_goes_on_only_in_a_new_epoch_alerted(tmp_path: Path) -> None:
    """The last three rounds deleted, the station started again, the rounds dealt again
    with other cards, their rows lined up on the deleted ones (refused resumes are rows
    too): in the same epoch the game server would get the deleted round 5's id with new
    round 4's body, and round 4 of shoe 1 with another winner."""
    with ledger() as book:
        config, tokens = signed_station(tmp_path, book, sim=False)
        with running(config, tokens) as proc:
            proc.post({"type": "shoe"}, "dealer")
            for event in BURN:
                proc.post(event)
            for n in range(1, 7):
                for event in natural_round(n):
                    proc.post(event)
            wait_for(lambda: len(book.results()) == 6, "six results")
        lost = [r["seq"] for r in book.results()[3:]]  # rounds 4-6
        path = journal_path(tmp_path)
        db = raw(path)
        last, h = db.execute("SELECT seq, hash FROM journal ORDER BY seq DESC LIMIT 1").fetchone()
        cut = lost[0] - 4  # round 4's close_bets
        db.execute("DELETE FROM journal WHERE seq >= ?", (cut,))
        db.close()
        with running(config, tokens) as proc:
            (found,) = notices(proc, "journal discontinuity")
            assert found["event"]["anchor"]["seq"] == last
            assert found["event"]["anchor"]["hash"] == h
            assert found["event"]["journal"]["last_seq"] == cut - 1
            assert found["seq"] == cut  # seqs go on from the journal's end, in a new epoch
            assert found["event"]["epoch"] == 2
            assert [a["code"] for a in alerts(proc)] == ["JOURNAL_DISCONTINUITY"]
            (said,) = alerts(proc)  # its figures, for the dashboard's words
            assert said["params"]["since"] == cut and said["params"]["detail"]
            state = proc.get("/api/state").json()
            assert state["suspension"]["code"] == "STATION_RESTART"  # a supervisor checks
            seq = proc.post({"type": "resume"}, "supervisor")["seq"]
            while seq + 1 < lost[1] - 4:
                seq = proc.post({"type": "resume"}, "supervisor")["seq"]
            for n in range(4, 6):
                for event in banker_round(n):
                    verdict = proc.post(event)
            assert verdict["seq"] == lost[2]  # new round 5 where round 6 was
            wait_for(lambda: len(book.results()) == 8, "the new rounds' results")
        again = book.results()[6:]
        assert [r["seq"] for r in again] == lost[1:]  # the same seqs as deleted rounds
        assert {r["epoch"] for r in again} != {book.results()[0]["epoch"]}  # a new epoch
        assert [r["result"]["winner"] for r in again] == ["banker", "banker"]
        book.check()  # so no id, no round key, came with two bodies
        with running(config, tokens) as proc:  # a restart never heals it, nor repeats it
            assert len(notices(proc, "journal discontinuity")) == 1
            assert [a["code"] for a in alerts(proc)] == ["JOURNAL_DISCONTINUITY"]
        checked = verify(config)  # the chain holds; what was found is said
        assert checked.returncode == 0, checked.stderr
        assert f"row {cut}: a journal discontinuity (epoch 2)" in checked.stderr


def test_an_older_copy_put_back_goes_on_only_in_a_new_epoch(tmp_path: Path) -> None:
    """A backup put back in place of the journal, without `station journal restore` (its
    anchor not brought back with it): the same seqs are dealt again, but in a new epoch."""
    with ledger() as book:
        config, tokens = signed_station(tmp_path, book)
        backup = tmp_path / "old.db"
        with running(config, tokens):
            wait_for(deal_results(book, 3), "three results")
            made = station("journal", "backup", str(backup), "--config", str(config))
            assert made.returncode == 0, made.stderr
            wait_for(deal_results(book, 4), "four results after the backup")
        path = journal_path(tmp_path)
        for suffix in ("-wal", "-shm"):
            path.with_name(path.name + suffix).unlink(missing_ok=True)
        shutil.copyfile(backup, path)
        with running(config, tokens) as proc:
            (found,) = notices(proc, "journal discontinuity")
            assert "rows were removed, or an older copy put back" in found["event"]["found"]
            assert [a["code"] for a in alerts(proc)] == ["JOURNAL_DISCONTINUITY"]
            wait_for(deal_results(book, 6), "six results in the new epoch")
        book.check()  # the same seqs again, other cards: never under the same ids


@pytest.mark.parametrize("anchor", ["missing", "another key", "unsigned"])
def test_a_signed_journal_without_its_own_anchor_is_a_discontinuity(
    tmp_path: Path, anchor: str
) -> None:
    with ledger() as book:
        config, tokens = signed_station(tmp_path, book)
        with running(config, tokens):
            wait_for(deal_results(book, 2), "two results")
        head = journal_path(tmp_path).with_name("journal.db.head")
        was = anchors.read(head)
        assert was is not None
        if anchor == "missing":
            head.unlink()
        else:
            key = SigningKey.generate() if anchor == "another key" else None
            head.write_bytes(anchors.encode(was.seq, was.hash, was.journal, was.epoch, key))
        with running(config, tokens) as proc:
            (found,) = notices(proc, "journal discontinuity")
            assert "head anchor" in found["event"]["found"]
            assert [a["code"] for a in alerts(proc)] == ["JOURNAL_DISCONTINUITY"]
            wait_for(deal_results(book, 2), "two results in the new epoch")
        book.check()

"""Issue 32, the floor's half, from real processes: a real nats-server, `station run` signing
its journal, `station floor` with the table's key configured (or on first use), and the
insider: someone who can write the station's files and restart it, and holds the table's
broker login (it sits on the dealer PC), but not the signing key.

3. A journal rolled back without `journal restore` (the station's files put back from an
   older copy), the station run again on it: it numbers rows the floor archived again,
   signed by its real key. Republished with the table's login (the cover-up), they are a
   ROLLBACK alert, held, never an epoch a supervisor can accept; `journal verify
   --public-key --against-floor` fails on the rolled-back journal.
4. Unsigned rows published before the station's first one, for a table whose key is
   configured: refused (FORGED_ROW), never "the unsigned beginning"; the station's signed
   rows are then archived and its honest journal passes `--against-floor`.
8. Signed heartbeats captured earlier (the station pointed at a broker of the insider's)
   and replayed with the table's login: refused (STALE_HEARTBEAT), the dead table stays
   offline, and a restarted floor still refuses them (the last one believed is kept).
9. Row 1 published first, signed by the insider's own key (first use): a supervisor
   accepts the real fingerprint without a restart; the station's rows are archived, the
   insider's stay refused."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from station.live.journal.reading import read_rows
from station.shared.messages import JournalMessage, heartbeat_subject, journal_subject
from station.shared.rows import Row
from station.shared.signing import PublicKey, SigningKey
from tests.floor.floorkit import make_journal
from tests.floor.kit import SITE, FloorBroker, Listener, ensure_stream, start_broker
from tests.floor.signedkit import floor_process, floor_section, signed_journal, wait_until
from tests.floor.test_forgery import deal, publish_as_the_table, signed_station
from tests.service.stationkit import BURN, TABLE, natural_round, running, station

pytestmark = [pytest.mark.floor, pytest.mark.server]


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[FloorBroker]:
    found = start_broker(tmp_path / "broker", (TABLE,))
    try:
        ensure_stream(found)
        yield found
    finally:
        found.broker.stop()


def verify(config: Path, public: str, url: str) -> tuple[int, str]:
    done = station(
        "journal", "verify", "--config", str(config),
        "--public-key", public, "--against-floor", url,
    )  # fmt: skip
    return done.returncode, done.stdout + done.stderr


def last_seq(config: Path) -> int:
    return read_rows(config.parent / "var" / "journal.db", 0, 100_000)[-1].seq


def as_published(rows: list[Row]) -> list[tuple[str, bytes]]:
    """Journal rows as messages at the table's subject (what the insider publishes)."""
    subject = journal_subject(SITE, TABLE)
    return [(subject, JournalMessage.of(TABLE, r).encode()) for r in rows]


def test_a_rolled_back_journal_republished_is_a_rollback_never_an_epoch(
    tmp_path: Path, broker: FloorBroker, monkeypatch: pytest.MonkeyPatch
) -> None:
    config, tokens, public = signed_station(tmp_path, broker, monkeypatch)
    var, older = tmp_path / "var", tmp_path / "older-copy"
    with floor_process(tmp_path / "floor", broker, {TABLE: public}) as floor:
        monkeypatch.setenv("STATION_FLOOR_TOKEN", floor.tokens["viewer"])
        with running(config, tokens) as proc:
            proc.post({"type": "shoe"}, "dealer")
            for event in BURN:
                proc.post(event)
            deal(proc, range(1, 3))
            now = proc.rows()[-1]["seq"]
            wait_until(lambda: floor.table(TABLE)["archived_seq"] >= now, "the rows archived")
        kept = last_seq(config)
        wait_until(lambda: floor.table(TABLE)["archived_seq"] == kept, "the rows archived")
        shutil.copytree(var, older)  # the insider's copy, taken while the station is stopped
        with running(config, tokens) as proc:
            deal(proc, range(3, 6))
            now = proc.rows()[-1]["seq"]
            wait_until(lambda: floor.table(TABLE)["archived_seq"] >= now, "the rows archived")
        head = last_seq(config)
        wait_until(lambda: floor.table(TABLE)["archived_seq"] == head, "every row archived")
        # The roll-back: every file of the station put back, and the station run again
        # (away from the floor): its next rows reuse seqs the floor archived, its key's.
        shutil.rmtree(var)
        shutil.copytree(older, var)
        (tmp_path / "station.toml").write_text(
            (tmp_path / "station.toml").read_text().replace(floor_section(broker, TABLE), "")
        )
        with running(config, tokens) as proc:
            deal(proc, range(3, 5))
        rolled = read_rows(var / "journal.db", 0, 100_000)
        assert rolled[kept].seq == kept + 1 and all(r.signature for r in rolled)
        # The cover-up: the rows the key really signed, republished with the table's login.
        asyncio.run(publish_as_the_table(broker, as_published(rolled[kept:])))
        alerts = wait_until(lambda: floor.alerts("ROLLBACK"), "the ROLLBACK alert")
        wait_until(lambda: floor.table(TABLE)["held"] == len(rolled) - kept, "all held")
        seen = floor.table(TABLE)
        refused = floor.post(
            f"/api/floor/tables/{TABLE}/accept-chain",
            {"seq": kept + 1, "reason": "restored from a backup"},
        )
        code, said = verify(config, public, floor.url)
        seen_after = floor.table(TABLE)
    [alert] = alerts
    assert alert["table"] == TABLE and alert["seq"] == kept + 1
    assert "no `journal restored` or `journal discontinuity` notice" in alert["message"]
    assert "cannot be accepted as an epoch" in alert["message"]
    assert seen["archived_seq"] == head and seen["held"] == len(rolled) - kept
    assert seen["new_epoch"] is None and seen["epoch"] == 1
    assert [a["kind"] for a in seen["alerts"]] == ["ROLLBACK"]
    assert refused.status_code == 409 and "held as a ROLLBACK" in refused.text
    assert seen_after["epoch"] == 1 and seen_after["archived_seq"] == head
    assert code != 0, said
    assert f"row {kept + 1}: the floor archive has hash" in said


def test_unsigned_rows_before_the_station_are_refused_when_its_key_is_configured(
    tmp_path: Path, broker: FloorBroker, monkeypatch: pytest.MonkeyPatch
) -> None:
    config, tokens, public = signed_station(tmp_path, broker, monkeypatch)
    made_up = [{"type": "shoe"}, *BURN, *(e for n in range(1, 4) for e in natural_round(n))]
    fakes = make_journal(tmp_path / "forged.db", TABLE, made_up, decks=8)[:19]
    assert all(r.signature is None for r in fakes) and len(fakes) == 19
    with floor_process(tmp_path / "floor", broker, {TABLE: public}) as floor:
        monkeypatch.setenv("STATION_FLOOR_TOKEN", floor.tokens["viewer"])
        asyncio.run(publish_as_the_table(broker, as_published(fakes)))
        wait_until(lambda: floor.table(TABLE)["forged"] == 19, "the unsigned rows refused")
        before = floor.table(TABLE)
        with running(config, tokens) as proc:
            proc.post({"type": "shoe"}, "dealer")
            for event in BURN:
                proc.post(event)
            deal(proc, range(1, 3))
            last = last_seq(config)
            wait_until(lambda: floor.table(TABLE)["archived_seq"] >= last, "the station's rows")
        after = floor.table(TABLE)
        archived = floor.get(f"/api/floor/tables/{TABLE}/rows?after=0&limit=1000")["rows"]
        code, said = verify(config, public, floor.url)
        alerts = floor.alerts("FORGED_ROW")
    assert before["archived_seq"] == 0 and before["held"] == 19 and before["signed"]
    assert before["results"] == [] and before["rounds"] == 0  # no made-up natural shown
    [alert] = alerts
    assert alert["seq"] == 1 and "covers the table from row 1" in alert["message"]
    rows = read_rows(tmp_path / "var" / "journal.db", 0, after["archived_seq"])
    assert [(r["seq"], r["hash"], r["signature"]) for r in archived] == [
        (r.seq, r.hash, r.signature) for r in rows
    ]
    assert not {f.hash for f in fakes} & {r["hash"] for r in archived}
    assert after["forged"] == 19 and after["key"]["origin"] == "config"
    assert not [a for a in after["alerts"] if a["kind"] in ("conflict", "chain")]
    assert code == 0, said
    assert "ok against the floor archive" in said


def test_replayed_heartbeats_are_refused_and_a_restarted_floor_still_refuses_them(
    tmp_path: Path, broker: FloorBroker, monkeypatch: pytest.MonkeyPatch
) -> None:
    config, tokens, public = signed_station(tmp_path, broker, monkeypatch)
    theirs = start_broker(tmp_path / "insider-broker", (TABLE,))
    text = config.read_text()
    try:
        ensure_stream(theirs)
        # The station pointed at the insider's broker: its signed heartbeats captured.
        config.write_text(text.replace(broker.url, theirs.url))
        monkeypatch.setenv("FLOOR_PASSWORD", theirs.user(TABLE).password)
        with Listener(theirs, heartbeat_subject(SITE, TABLE)) as captured, running(config, tokens):
            wait_until(lambda: len(captured.messages) >= 3, "heartbeats captured")
        replayed = list(captured.messages)
    finally:
        theirs.broker.stop()
    config.write_text(text)
    monkeypatch.setenv("FLOOR_PASSWORD", broker.user(TABLE).password)
    lines = "heartbeat_skew = 600.0"  # the replays are young: only their order refuses them
    floor_dir = tmp_path / "floor"
    with floor_process(floor_dir, broker, {TABLE: public}, 2.0, lines) as floor:
        with running(config, tokens):  # the station on the floor: its heartbeats believed
            wait_until(lambda: floor.table(TABLE)["online"], "the station online")
        wait_until(lambda: not floor.table(TABLE)["online"], "the stopped station offline")
        messages = [(heartbeat_subject(SITE, TABLE), m) for m in replayed]
        asyncio.run(publish_as_the_table(broker, messages))
        wait_until(
            lambda: floor.table(TABLE)["stale_heartbeats"] == len(replayed), "replays counted"
        )
        seen = floor.table(TABLE)
        [alert] = wait_until(lambda: floor.alerts("STALE_HEARTBEAT"), "the alert")
    with floor_process(floor_dir, broker, {TABLE: public}, 2.0, lines) as again:
        asyncio.run(publish_as_the_table(broker, messages))
        wait_until(
            lambda: again.table(TABLE)["stale_heartbeats"] == len(replayed),
            "replays refused after the floor's restart",
        )
        restarted = again.table(TABLE)
    assert not seen["online"] and seen["forged_messages"] == 0
    assert not restarted["online"] and restarted["forged_messages"] == 0
    assert restarted["station_seq"] is None  # nothing a replay said is shown
    assert alert["table"] == TABLE
    assert "not after the last heartbeat believed" in alert["message"]


def test_a_first_use_key_taken_by_the_insider_is_given_back_without_a_restart(
    tmp_path: Path, broker: FloorBroker, monkeypatch: pytest.MonkeyPatch
) -> None:
    config, tokens, public = signed_station(tmp_path, broker, monkeypatch)
    real = PublicKey.from_text(public)
    insider = SigningKey.generate()
    with signed_journal(tmp_path / "insider.db", TABLE, insider, []) as journal:
        taken = list(journal.rows())[:1]
    with floor_process(tmp_path / "floor", broker, {TABLE: ""}) as floor:
        monkeypatch.setenv("STATION_FLOOR_TOKEN", floor.tokens["viewer"])
        asyncio.run(publish_as_the_table(broker, as_published(taken)))
        wait_until(lambda: floor.table(TABLE)["key"], "the insider's key pending")
        assert floor.table(TABLE)["key"]["fingerprint"] == insider.public.fingerprint
        with running(config, tokens) as proc:
            proc.post({"type": "shoe"}, "dealer")
            for event in BURN:
                proc.post(event)
            deal(proc, range(1, 3))
            last = last_seq(config)
            wait_until(lambda: floor.table(TABLE)["held"] > last, "the station's rows held")
        answer = floor.post(
            f"/api/floor/tables/{TABLE}/accept-key",
            {"fingerprint": real.fingerprint, "reason": "compared with station key show"},
        )
        wait_until(lambda: floor.table(TABLE)["archived_seq"] >= last, "the station's rows")
        seen = floor.table(TABLE)
        code, said = verify(config, public, floor.url)
        decisions = floor.get("/api/floor/decisions")["decisions"]
        assert floor.process.poll() is None  # the same floor service: no restart
    assert answer.status_code == 200, answer.text
    decision = answer.json()["decision"]
    assert decision["kind"] == "set_key" and decision["hash"] == real.fingerprint
    assert decisions[0]["by"] == decision["by"] and decisions[0]["kind"] == "set_key"
    assert seen["key"]["fingerprint"] == real.fingerprint and seen["signed"]
    assert seen["forged"] == 1 and seen["held"] == 1  # the insider's row 1, refused
    assert not [a for a in seen["alerts"] if a["kind"] == "new_key"]
    assert code == 0, said

"""Issue 24, done-when (b) and (c), from real processes: a real nats-server, `station run`
with its signing key publishing to it, `station floor` knowing the table's public key.

(b) Someone holding the table's broker login (it sits on the dealer PC) reads the stream's
last row, forges the next one (its hash recomputed by the station's own code) and
publishes it with the right expected sequence: it takes the slot. The floor holds it and
alerts (FORGED_ROW), never archives it; the station treats it as foreign (journaled,
alerted), publishes its own rows after it, and the floor archives them in order: its
archive is the station's journal, row for row (`journal verify --against-floor`).

(c) Forged heartbeats and alerts (a stopped table made to look online, suspended with
JOURNAL_UNWRITABLE, 10^12 rows behind, its dashboard link pointed elsewhere) change
nothing the floor shows; they are counted and alerted (FORGED_MESSAGE)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nats
import orjson
import pytest

from station.live.journal.reading import read_rows
from station.live.publisher.tail import FOREIGN
from station.shared.messages import (
    EXPECTED_LAST_SUBJECT_SEQUENCE,
    STREAM,
    Alert,
    Heartbeat,
    JournalMessage,
    alert_subject,
    heartbeat_subject,
    inbox_prefix,
    journal_subject,
)
from station.shared.signing import SigningKey
from tests.floor.kit import SITE, FloorBroker, ensure_stream, start_broker
from tests.floor.signedkit import floor_process, floor_section, forged, wait_until
from tests.service.stationkit import (
    BURN,
    TABLE,
    StationProcess,
    natural_round,
    running,
    station,
    write_config,
)

pytestmark = [pytest.mark.floor, pytest.mark.server]


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[FloorBroker]:
    found = start_broker(tmp_path / "broker", (TABLE,))
    try:
        ensure_stream(found)
        yield found
    finally:
        found.broker.stop()


def signed_station(
    tmp_path: Path, broker: FloorBroker, monkeypatch: pytest.MonkeyPatch
) -> tuple[Path, dict[str, str], str]:
    """A station's config with a key (made by `station key init`) and a floor: the config,
    its tokens and its public key."""
    config, tokens = write_config(
        tmp_path, 'signing_key = "station.pem"', floor_section(broker, TABLE)
    )
    assert station("key", "init", "--config", str(config)).returncode == 0
    shown = station("key", "show", "--config", str(config))
    assert shown.returncode == 0, shown.stderr
    monkeypatch.setenv("FLOOR_PASSWORD", broker.user(TABLE).password)
    return config, tokens, shown.stdout.strip()


def deal(proc: StationProcess, rounds: range) -> None:
    for n in rounds:
        for event in natural_round(n):
            proc.post(event)


async def as_the_table(broker: FloorBroker) -> nats.NATS:
    """A connection with the table's broker login, as its station makes it."""
    user = broker.user(TABLE)
    return await nats.connect(
        broker.url,
        user=user.user,
        password=user.password,
        inbox_prefix=inbox_prefix(SITE, TABLE),
        connect_timeout=2,
        allow_reconnect=False,
    )


async def forge_next_row(broker: FloorBroker) -> JournalMessage:
    """The forger: the stream's last row of the table read back (the one read the login
    allows), the next row made on it and published with the right expected sequence."""
    nc = await as_the_table(broker)
    try:
        js = nc.jetstream(timeout=2)
        subject = journal_subject(SITE, TABLE)
        last = await js.get_last_msg(STREAM, subject, direct=True)
        assert last.data is not None and last.seq is not None
        held = JournalMessage.decode(last.data)
        body = forged(TABLE, held, message="floor publishing again")
        reply = await nc.request(
            subject, body, 2, headers={EXPECTED_LAST_SUBJECT_SEQUENCE: str(last.seq)}
        )
        assert "error" not in orjson.loads(reply.data), reply.data  # it took the slot
        return JournalMessage.decode(body)
    finally:
        await nc.close()


async def publish_as_the_table(broker: FloorBroker, messages: list[tuple[str, bytes]]) -> None:
    nc = await as_the_table(broker)
    try:
        for subject, body in messages:
            await nc.publish(subject, body)
        await nc.flush()
    finally:
        await nc.close()


def test_a_row_forged_with_the_tables_login_is_held_and_the_stations_rows_go_on(
    tmp_path: Path, broker: FloorBroker, monkeypatch: pytest.MonkeyPatch
) -> None:
    config, tokens, public = signed_station(tmp_path, broker, monkeypatch)
    journal = tmp_path / "var" / "journal.db"
    with (
        floor_process(tmp_path / "floor", broker, {TABLE: public}) as floor,
        running(config, tokens, log_level="info") as proc,
    ):
        monkeypatch.setenv("STATION_FLOOR_TOKEN", floor.tokens["viewer"])
        proc.post({"type": "shoe"}, "dealer")
        for event in BURN:
            proc.post(event)
        deal(proc, range(1, 3))
        last = read_rows(journal, 0, 10_000)[-1].seq
        wait_until(lambda: floor.table(TABLE)["archived_seq"] == last, "the rows archived")
        fake = asyncio.run(forge_next_row(broker))
        assert fake.seq == last + 1
        deal(proc, range(3, 5))  # the station's next rows, refused by the stream at first
        wait_until(
            lambda: floor.table(TABLE)["archived_seq"] == read_rows(journal, 0, 10_000)[-1].seq,
            "the station's rows after the forgery archived",
        )
        seen = floor.table(TABLE)
        rows = read_rows(journal, 0, 10_000)
        [said] = [r for r in rows if r.event.get("message") == FOREIGN]
        verified = station(
            "journal", "verify", "--config", str(config),
            "--public-key", public, "--against-floor", floor.url,
        )  # fmt: skip
        archived = floor.get(f"/api/floor/tables/{TABLE}/rows?after=0&limit=1000")["rows"]
    assert seen["forged"] == 1 and seen["held"] == 1 and seen["signed"]
    assert seen["key"]["state"] == "trusted" and seen["key"]["origin"] == "config"
    [alert] = [a for a in seen["alerts"] if a["kind"] == "FORGED_ROW"]
    assert alert["seq"] == fake.seq and "is unsigned with the table's key" in alert["message"]
    # The station's rows, every one, in order, and nothing else: the forged row is not.
    assert [(r["seq"], r["hash"], r["signature"]) for r in archived] == [
        (r.seq, r.hash, r.signature) for r in rows
    ]
    assert fake.hash not in {r["hash"] for r in archived}
    assert said.event["stream_seq"] and said.event["after_row"] == last
    assert said.event["claims_row"] == fake.seq
    assert verified.returncode == 0, verified.stderr
    assert "ok against the floor archive" in verified.stdout
    assert f"rows 1-{rows[-1].seq} of table {TABLE} are the journal's" in verified.stdout
    station_log = next(tmp_path.glob("station-*.log")).read_text()
    assert FOREIGN in station_log


def test_forged_heartbeats_and_alerts_change_nothing_the_floor_shows(
    tmp_path: Path, broker: FloorBroker, monkeypatch: pytest.MonkeyPatch
) -> None:
    config, tokens, public = signed_station(tmp_path, broker, monkeypatch)
    with floor_process(tmp_path / "floor", broker, {TABLE: public}, offline_after=2.0) as floor:
        with running(config, tokens) as proc:
            proc.post({"type": "shoe"}, "dealer")
            wait_until(lambda: floor.table(TABLE)["online"], "the station online")
            last = proc.rows()[-1]["seq"]
            wait_until(lambda: floor.table(TABLE)["archived_seq"] == last, "its rows archived")
        wait_until(lambda: not floor.table(TABLE)["online"], "the stopped station offline")
        before = floor.table(TABLE)
        beat = Heartbeat(
            SITE, TABLE, "2026-12-01T00:00:00Z", 10**12, "f" * 64, 10**12, "publishing",
            "punto_banco", 9, 3, True, "JOURNAL_UNWRITABLE", 1.0,
            "the journal cannot be written: disk full",
        )  # fmt: skip
        lie: dict[str, Any] = {**orjson.loads(beat.encode()), "dashboard": "https://evil.example/"}
        someone = SigningKey.generate()
        signed_lie = {**lie, "signature": someone.sign_message(lie)}
        alert = Alert(SITE, TABLE, "2026-12-01T00:00:00Z", "conflict", "call 555-0100 now")
        messages = [
            (heartbeat_subject(SITE, TABLE), orjson.dumps(lie)),
            (heartbeat_subject(SITE, TABLE), orjson.dumps(signed_lie)),
            (alert_subject(SITE, TABLE), alert.encode()),
            (alert_subject(SITE, TABLE), alert.signed(someone).encode()),
        ]
        for _ in range(3):
            asyncio.run(publish_as_the_table(broker, messages))
        wait_until(lambda: floor.table(TABLE)["forged_messages"] == 12, "the forgeries counted")
        after = floor.table(TABLE)
        alerts = floor.alerts("FORGED_MESSAGE")
    ignored = {"silent_for", "forged_messages", "alerts"}
    assert {k: v for k, v in after.items() if k not in ignored} == {
        k: v for k, v in before.items() if k not in ignored
    }
    assert not after["online"] and after["journal_down"] is None and not after["suspended"]
    assert after["rows_behind"] == 0 and after["dashboard"] is None
    assert after["station_alerts"] == []
    assert len(alerts) == 1 and alerts[0]["table"] == TABLE  # one open, the rest counted
    assert "not its station's" in alerts[0]["message"]
    assert [a["kind"] for a in after["alerts"]] == ["FORGED_MESSAGE"]
    assert "555-0100" not in floor.log.read_text()  # a forged alert's words are not logged

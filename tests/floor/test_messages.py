"""The floor's message format and `[floor]` settings (no broker needed)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from station.live.config import ConfigError, from_mapping
from station.live.journal import Journal
from station.shared.messages import (
    Alert,
    BadMessage,
    Heartbeat,
    JournalMessage,
    heartbeat_subject,
    journal_subject,
    parse_subject,
    wildcard,
)
from station.shared.rows import GENESIS, Pending, notice
from tests.floor.kit import VERDICT, new_journal


def journal_with_rows(path: Path) -> Journal:
    journal = new_journal(path, "table-1")
    verdict = {**VERDICT, "voided_round": None, "round": 3, "result": {"winner": "banker"}}
    journal.append(
        [
            Pending("api", "dealer", {"type": "close_bets", "note": "é ✓", "n": 2**60}, verdict),
            notice("station", "floor", "a notice", value=1.5, nested={"b": [1, None]}),
        ]
    )
    return journal


def test_a_row_as_a_message_and_back_keeps_its_hash(tmp_path: Path) -> None:
    journal = journal_with_rows(tmp_path / "j.db")
    prev = GENESIS
    for row in journal.rows():
        message = JournalMessage.of("table-1", row)
        body = orjson.loads(message.encode())
        assert body == {
            **row.to_api(),
            "table": "table-1",
            "prev_hash": row.prev_hash,
            "hash": row.hash,
        }
        back = JournalMessage.decode(message.encode())
        assert back == message
        assert back.computed_hash() == row.hash and back.chain_ok(prev)
        prev = row.hash
    assert not back.chain_ok(GENESIS)  # the wrong previous row
    edited = JournalMessage.decode(message.encode().replace(b"a notice", b"b notice"))
    assert not edited.chain_ok(back.prev_hash)  # an edited row


@pytest.mark.parametrize(
    ("data", "says"),
    [
        (b"not json", "not JSON"),
        (b"[]", "expected a JSON object"),
        (b'{"seq": 1}', "field 'table'"),
        (b'{"table": "t", "seq": true}', "field 'seq'"),
        (b'{"table": "t", "seq": 0}', "seq must be 1 or more"),
        (b'{"table": "t", "seq": 1, "verdict": {"ok": true}}', "the verdict must be null"),
    ],
)
def test_a_bad_journal_message_is_refused_with_a_reason(data: bytes, says: str) -> None:
    with pytest.raises(BadMessage, match=says):
        JournalMessage.decode(data)


def test_heartbeat_and_alert_round_trip() -> None:
    beat = Heartbeat("s", "t", "ts", 9, "h", 8, "publishing", "punto_banco", 2, 14, True, "x")
    assert Heartbeat.decode(beat.encode()) == beat
    with pytest.raises(BadMessage, match="'round'"):
        Heartbeat.decode(beat.encode().replace(b'"round":14', b'"round":"14"'))
    down = Heartbeat("s", "t", "ts", 9, "h", 8, "publishing", "punto_banco", 2, 14, False, None,
                     5.0, "the journal cannot be written: disk full")  # fmt: skip
    assert Heartbeat.decode(down.encode()) == down
    before = orjson.loads(beat.encode())
    del before["journal"]  # a station from before the field: its journal is not known down
    assert Heartbeat.decode(orjson.dumps(before)).journal is None
    with pytest.raises(BadMessage, match="'journal'"):
        Heartbeat.decode(orjson.dumps({**before, "journal": 1}))
    alert = Alert("s", "t", "ts", "conflict", "two journals")
    assert Alert.decode(alert.encode()) == alert


def test_subjects() -> None:
    assert journal_subject("site-1", "table-1") == "floor.site-1.table-1.journal"
    assert heartbeat_subject("s", "t") == "floor.s.t.heartbeat"
    assert wildcard("heartbeat") == "floor.*.*.heartbeat"
    assert parse_subject("floor.s.t.alert") == ("s", "t", "alert")
    for bad in ("floor.s.t", "floor.s.t.other", "x.s.t.journal", "floor.s.*.journal"):
        with pytest.raises(BadMessage):
            parse_subject(bad)
    with pytest.raises(ValueError, match="no dots, spaces or wildcards"):
        journal_subject("site.1", "t")


def test_no_floor_by_default() -> None:
    assert not from_mapping({}).floor.enabled


def test_floor_settings_are_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    def floor(**keys: object) -> dict[str, object]:
        return {"floor": {"url": "nats://127.0.0.1:4222", **keys}}

    monkeypatch.setenv("FLOOR_PW", "secret")
    config = from_mapping(floor(user="table-1", password="env:FLOOR_PW"))
    assert config.floor.secret_password == "secret"
    assert "secret" not in repr(config.floor) and "secret" not in config.model_dump_json()
    cases = [
        (floor(url="http://x:4222"), r"\[floor\] url: .*nats://HOST:PORT"),
        (floor(site="a.b"), r"\[floor\] site: .*no dots"),
        (floor(user="u", password="secret"), r'\[floor\] password: write password = "env:NAME"'),
        (floor(user="u", password="env:NOPE_NOT_SET"), "NOPE_NOT_SET is not set"),
        (floor(user="u"), "give user and password together"),
        (floor(token="env:FLOOR_PW", user="u", password="env:FLOOR_PW"), "one way to log in"),
        (floor(cert_file="c.pem"), "cert_file and key_file together"),
        (floor(heartbeat_interval=0.5), r"heartbeat_interval"),
        (
            {**floor(), "table": {"id": "table 1"}},
            r"\[table\] id: .*cannot be part of a floor subject",
        ),
    ]
    for data, message in cases:
        with pytest.raises(ConfigError, match=message):
            from_mapping(data)
    # a table id that is no subject token is fine without a floor
    assert from_mapping({"table": {"id": "table 1"}}).table.id == "table 1"

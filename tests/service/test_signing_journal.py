"""Signed journal rows: every row signed by the station's key, named in the journal's first
row; a journal rewritten and re-hashed with the station's own code passes the chain but
fails `station journal verify --public-key`, naming the first row that does not verify;
a key hands over only by the old key's endorsement; the key itself is never logged, never
journaled, never served."""

from __future__ import annotations

import base64
import logging
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import httpx
import orjson
import pytest
from cryptography.hazmat.primitives import serialization

from station.core.table import Table
from station.live.journal import Journal, JournalError, anchor
from station.shared import keychain
from station.shared.keychain import ROTATED, SIGNED, Endorsement
from station.shared.rows import dumps, notice, row_hash
from station.shared.signing import SigningKey
from tests.conftest import spawn_run
from tests.service.kit import Running
from tests.service.stationkit import BURN, natural_round, running, station, write_config

pytestmark = pytest.mark.server

COLUMNS = "seq, ts, source, actor, kind, event, verdict, prev_hash, hash, signature"


def signed_journal(path: Path, key: SigningKey, notices: int = 3) -> Journal:
    journal = Journal(path)
    journal.start("t-1", Table(), key)
    journal.append([notice("station", "station", f"n{i}") for i in range(notices)])
    return journal


def stored(path: Path) -> list[tuple[object, ...]]:
    db = sqlite3.connect(path)
    try:
        return db.execute(f"SELECT {COLUMNS} FROM journal ORDER BY seq").fetchall()
    finally:
        db.close()


# -- the journal ------------------------------------------------------------------------


def test_every_row_is_signed_and_the_first_names_the_key(tmp_path: Path) -> None:
    key = SigningKey.generate()
    with signed_journal(tmp_path / "j.db", key) as journal:
        first = next(journal.rows())
        assert first.event["signing_key"] == {
            "fingerprint": key.public.fingerprint,
            "public_key": key.public.text,
        }
        assert journal.signed_by == key.public
        assert journal.verify(key.public).ok
    for seq, ts, source, actor, kind, event, verdict, prev, h, signature in stored(
        tmp_path / "j.db"
    ):
        assert key.public.verify_row(str(h), str(signature))  # every row, on its own
        # the hash covers the row as before: the signature is not part of it
        assert row_hash(seq, ts, source, actor, kind, event, verdict, prev) == h  # type: ignore[arg-type]


def test_an_older_journal_keeps_its_hashes_and_is_signed_only_once_adopted(tmp_path: Path) -> None:
    """A journal of schema 2 (no signatures) opens and migrates, but a station with a key
    does not sign its continuation by itself (issue 32: a history rewritten as if never
    signed would be laundered so): it refuses, naming `station journal adopt`. Adopted,
    a `journal signed` notice names the key and what it adopted; the old rows stay
    unsigned, with their hashes, and `verify --public-key` accepts them only when told."""
    path = tmp_path / "j.db"
    with Journal(path) as journal:
        journal.start("t-1", Table())
        journal.append([notice("station", "station", "before the key")])
    db = sqlite3.connect(path)
    db.execute("ALTER TABLE journal DROP COLUMN signature")
    db.execute("ALTER TABLE outbox DROP COLUMN seal")
    db.execute("PRAGMA user_version = 2")
    db.commit()
    hashes = [h for (h,) in db.execute("SELECT hash FROM journal ORDER BY seq")]
    db.close()
    key = SigningKey.generate()
    with Journal(path) as journal, pytest.raises(JournalError, match="station journal adopt"):
        journal.start("t-1", Table(), key)
    with Journal(path) as journal:
        adoption = journal.adopt("t-1", Table(), key, "the operator")
        assert adoption.seq == 3 and adoption.event["message"] == SIGNED
        assert adoption.event["adopted"]["rows"] == [1, 2]
        assert adoption.event["adopted"]["head_hash"] == hashes[-1]
        assert adoption.event["adopted"]["by"] == "the operator"
    with Journal(path) as journal:
        journal.start("t-1", Table(), key)  # adopted: it goes on, signed
        rows = list(journal.rows())
        assert [r.hash for r in rows[:2]] == hashes
        assert rows[2].event["signing_key"]["fingerprint"] == key.public.fingerprint
        assert [r.signature is None for r in rows] == [True, True, False]
        strict = journal.verify(key.public)
        assert not strict.ok and "--accept-unsigned-before 3" in strict.problems[0]
        report = journal.verify(key.public, accept_unsigned_before=3)
        assert report.ok and report.signatures is not None
        assert (report.signatures.unsigned, report.signatures.signed) == (2, 1)


def test_a_signed_journal_never_continues_unsigned_or_under_another_key(tmp_path: Path) -> None:
    key = SigningKey.generate()
    signed_journal(tmp_path / "j.db", key).close()
    with (
        Journal(tmp_path / "j.db") as journal,
        pytest.raises(JournalError, match="never continued unsigned"),
    ):
        journal.start("t-1", Table())
    with (
        Journal(tmp_path / "j.db") as journal,
        pytest.raises(JournalError, match="no endorsement by the journal's key"),
    ):
        journal.start("t-1", Table(), SigningKey.generate())
    with Journal(tmp_path / "j.db") as journal:
        journal.start("t-1", Table(), key)  # its own key: it goes on
        assert journal.verify(key.public).ok


def test_a_rotated_key_takes_over_by_the_old_keys_endorsement(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    old, new, stranger = SigningKey.generate(), SigningKey.generate(), SigningKey.generate()
    signed_journal(tmp_path / "j.db", old).close()
    forged = Endorsement(stranger.public, new.public, stranger.endorse(new.public))
    with (
        Journal(tmp_path / "j.db") as journal,
        pytest.raises(JournalError, match="no endorsement"),
    ):
        journal.start("t-1", Table(), new, [forged])
    genuine = Endorsement(old.public, new.public, old.endorse(new.public))
    with Journal(tmp_path / "j.db") as journal, caplog.at_level(logging.WARNING):
        journal.start("t-1", Table(), new, [forged, genuine])
        journal.append([notice("station", "station", "after")])
        # The hand-over is in the log as well as in the journal.
        said = [r.getMessage() for r in caplog.records if ROTATED in r.getMessage()]
        assert said == [
            f"journal {tmp_path / 'j.db'}: {ROTATED}: from now on signed with key "
            f"{new.public.fingerprint} (endorsed by key {old.public.fingerprint})"
        ]
        handed = [r for r in journal.rows() if r.event.get("message") == ROTATED]
        assert [r.event["old_key"]["fingerprint"] for r in handed] == [old.public.fingerprint]
        assert journal.verify(new.public).ok and journal.verify(old.public).ok
        refused = journal.verify(stranger.public)
        assert not refused.ok
        assert refused.problems[0].startswith(f"row 1: signed by key {old.public.fingerprint}")
        assert "no row is signed by the key given" in refused.problems[0]


def test_a_hand_over_the_old_key_did_not_endorse_fails_verify(tmp_path: Path) -> None:
    """Whoever holds a key of their own cannot make the journal theirs: a `signing key
    rotated` row without the old key's endorsement is where the check stops."""
    old, thief = SigningKey.generate(), SigningKey.generate()
    with signed_journal(tmp_path / "j.db", old) as journal:
        journal._key = thief  # as if written by a station holding the thief's key
        journal.append(
            [
                notice(
                    "station",
                    "station",
                    ROTATED,
                    signing_key={"fingerprint": "x", "public_key": thief.public.text},
                    endorsement=thief.endorse(thief.public),
                )
            ]
        )
        seq = journal.last_seq
        for trusted in (old.public, thief.public):
            report = journal.verify(trusted)
            assert not report.ok
            assert report.problems[0].startswith(f"row {seq}: its hand-over to key")


# -- `station journal verify --public-key`, from real processes ---------------------------


def rewrite(path: Path, seq: int, actor: str, strip: bool = False) -> None:
    """What an insider who can write the journal file does with the station's own code:
    edit row `seq` (who acted), compute every later hash and the head anchor again; the
    signatures are kept (`strip`: set to null), as nobody without the key can make them."""
    db = sqlite3.connect(path)
    rows = db.execute(f"SELECT {COLUMNS} FROM journal ORDER BY seq").fetchall()
    prev = rows[seq - 2][8]
    for s, ts, source, who, kind, event, verdict, _prev, _h, signature in rows[seq - 1 :]:
        who = actor if s == seq else who
        h = row_hash(s, ts, source, who, kind, event, verdict, prev)
        db.execute(
            "UPDATE journal SET actor = ?, prev_hash = ?, hash = ?, signature = ? WHERE seq = ?",
            (who, prev, h, None if strip else signature, s),
        )
        prev = h
    db.commit()
    db.close()
    path.with_name(path.name + ".head").write_text(f"{rows[-1][0]:020d} {prev}\n")


def resign(path: Path, thief: SigningKey) -> None:
    """The whole journal made again under the insider's own key: row 1 names it, every
    hash computed again, every row signed by it."""
    db = sqlite3.connect(path)
    rows = db.execute(f"SELECT {COLUMNS} FROM journal ORDER BY seq").fetchall()
    prev = "0" * 64
    for seq, ts, source, actor, kind, event, verdict, _prev, _h, _signature in rows:
        if seq == 1:  # the journal's first row names the insider's key
            created = orjson.loads(event)
            created["signing_key"] = keychain.named(thief.public)
            event = dumps(created)
        h = row_hash(seq, ts, source, actor, kind, event, verdict, prev)
        db.execute(
            "UPDATE journal SET event = ?, prev_hash = ?, hash = ?, signature = ? WHERE seq = ?",
            (event, prev, h, thief.sign_row(h), seq),
        )
        prev = h
    db.commit()
    db.close()
    path.with_name(path.name + ".head").write_text(f"{rows[-1][0]:020d} {prev}\n")


def copy_journal(journal: Path, dest: Path) -> Path:
    dest.mkdir()
    for suffix in ("", ".head"):
        shutil.copy(journal.with_name(journal.name + suffix), dest / (journal.name + suffix))
    return dest / journal.name


def test_a_journal_rewritten_and_rehashed_fails_verify_with_the_public_key(
    tmp_path: Path,
) -> None:
    config, tokens = write_config(tmp_path, 'signing_key = "station.pem"')
    made = station("key", "init", "--config", str(config))
    assert made.returncode == 0, made.stderr
    public = made.stdout.strip()
    (tmp_path / "station.pub").write_text(public + "\n")
    with running(config, tokens) as proc:
        proc.post({"type": "shoe"}, "dealer")
        for event in BURN + natural_round(1) + natural_round(2):
            proc.post(event)
        close_bets = [r["seq"] for r in proc.rows() if r["event"]["type"] == "close_bets"]
    journal = tmp_path / "var" / "journal.db"
    for given in (public, str(tmp_path / "station.pub")):
        untouched = station("journal", "verify", "--config", str(config), "--public-key", given)
        assert untouched.returncode == 0, untouched.stderr
        assert "every signature verified" in untouched.stdout
    edited = close_bets[-1]  # the dealer who closed the bets of round 2, made someone else
    cases: dict[str, Callable[[Path], None]] = {
        "rewritten": lambda p: rewrite(p, edited, "test-supervisor"),
        "stripped": lambda p: rewrite(p, edited, "test-supervisor", strip=True),
        "resigned": lambda p: resign(p, SigningKey.generate()),
    }
    for name, attack in cases.items():
        forged = copy_journal(journal, tmp_path / name)
        attack(forged)
        chain = station("journal", "verify", "--journal", str(forged))
        assert chain.returncode == 0, chain.stderr  # the chain alone holds: the attack
        assert "signatures NOT checked" in chain.stdout
        checked = station("journal", "verify", "--journal", str(forged), "--public-key", public)
        assert checked.returncode == 1, (name, checked.stdout)
        said = {
            "rewritten": f"row {edited}: its signature does not verify",
            "stripped": f"row {edited}: has no signature",
            "resigned": "row 1: signed by key ",
        }[name]
        assert said in checked.stderr, (name, checked.stderr)


# -- the key is never shown, and an unsigned station says so ------------------------------


def secrets_of(pem: bytes) -> list[bytes]:
    """Every form in which the private key could leak: the PEM file, its base64 body, the
    raw 32 bytes, their base64 and hex."""
    private = serialization.load_pem_private_key(pem, password=None)
    raw = private.private_bytes(
        serialization.Encoding.Raw,
        serialization.PrivateFormat.Raw,
        serialization.NoEncryption(),
    )
    body = b"".join(line for line in pem.splitlines() if b"-----" not in line)
    return [pem, body, body[:40], raw, base64.b64encode(raw), raw.hex().encode()]


def test_the_key_is_never_logged_journaled_or_served(tmp_path: Path) -> None:
    config, tokens = write_config(tmp_path, 'signing_key = "station.pem"')
    assert station("key", "init", "--config", str(config)).returncode == 0
    pem = (tmp_path / "station.pem").read_bytes()
    public = SigningKey.load(tmp_path / "station.pem").public
    answers: list[bytes] = []
    with running(config, tokens, log_level="debug") as proc:
        proc.post({"type": "shoe"}, "dealer")
        for event in BURN + natural_round(1):
            proc.post(event)
        proc.post({"type": "fault", "detail": "a test"})
        proc.post({"type": "resume"}, "supervisor")
        paths = [
            "/api/health",
            "/api/ready",
            "/api/state",
            "/api/journal?after=0&limit=1000",
            "/api/export",
            "/api/history",
            "/api/odds",
            "/api/protection",
            "/api/pace",
            "/api/whoami",
            "/api/explanations",
            "/api/openapi.json",
            "/metrics",
            "/",
        ]
        for path in paths:
            answer = proc.get(path, "supervisor")
            assert answer.status_code == 200, (path, answer.text)
            answers.append(answer.content)
        health = httpx.get(f"{proc.url}/api/health").json()
        assert health["journal"] == {"signed": True, "key": public.fingerprint}
    files = [p.read_bytes() for p in (tmp_path / "var").iterdir() if p.is_file()]
    log = proc.log.read_bytes() + proc.out.read_bytes()  # and what it printed
    assert public.fingerprint.encode() in log  # the log does speak of the key: by name
    assert public.text.encode() in b"".join(answers)  # row 1 names it, as it should
    for secret in secrets_of(pem):
        for where, data in [("the log", log), *(("an API answer", a) for a in answers)]:
            assert secret not in data, where
        for data in files:
            assert secret not in data, "the journal's files"


def test_an_unsigned_station_says_so_in_health(live: Running) -> None:
    health = httpx.get(f"{live.url}/api/health").json()
    assert health["journal"]["signed"] is False
    assert "unsigned" in health["journal"]["detail"]
    assert live.station.journal is not None and live.station.journal.signed_by is None


def test_the_unsigned_warning_is_a_line_of_the_start(tmp_path: Path) -> None:
    config, tokens = write_config(tmp_path)
    with running(config, tokens):
        pass
    assert "the journal" in (text := next(tmp_path.glob("station-*.log")).read_text())
    assert "is unsigned: anyone who can write its file can rewrite it undetected" in text
    assert logging.getLevelName(logging.WARNING) in text


def test_a_missing_key_stops_the_start_and_names_the_command_that_makes_it(
    tmp_path: Path,
) -> None:
    """The example config names /etc/...; on a new machine the key is not there yet: the
    station does not start unsigned, and says which command makes the key, for this
    config file (not a placeholder)."""
    config, _ = write_config(tmp_path, 'signing_key = "keys/station.pem"')
    proc = spawn_run(config)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 1, err
    assert f"cannot read the signing key {tmp_path / 'keys' / 'station.pem'}" in err
    assert f"make one with `station key init --config {config}`" in err
    assert "Traceback" not in err
    made = station("key", "init", "--config", str(config))
    assert made.returncode == 2
    assert made.stderr.startswith(f"station key init: no folder {tmp_path / 'keys'} for ")
    assert "make it first" in made.stderr
    (tmp_path / "keys").mkdir(mode=0o700)
    made = station("key", "init", "--config", str(config))
    assert made.returncode == 0, made.stderr
    with running(config, {}):
        pass


# -- the signed head anchor and the checks at start (issue 32) ---------------------------


def downgrade_to_schema_3(path: Path, seq: int, h: str) -> None:
    """The journal as a station before issue 32 left it: no outbox seals, `seq hash`."""
    db = sqlite3.connect(path)
    db.execute("ALTER TABLE outbox DROP COLUMN seal")
    db.execute("PRAGMA user_version = 3")
    db.commit()
    db.close()
    path.with_name(path.name + ".head").write_text(f"{seq:020d} {h}\n")


def test_the_first_start_after_the_upgrade_believes_the_old_anchor_once(tmp_path: Path) -> None:
    key = SigningKey.generate()
    path = tmp_path / "j.db"
    with signed_journal(path, key) as journal:
        seq, h = journal.last_seq, journal.last_hash
    downgrade_to_schema_3(path, seq, h)
    with Journal(path) as journal:
        assert journal.migrated_from == 3
        journal.start("t-1", Table(), key)
        assert journal.discontinuity is None
        assert list(journal.rows())[-1].event["message"] == "journal migrated"
    head = anchor.read(path.with_name("j.db.head"))
    assert head is not None and head.signed_by(key.public)  # signed from now on
    # the same old anchor again, on a journal of this station: not believed
    path.with_name("j.db.head").write_text(f"{seq:020d} {h}\n")
    with Journal(path) as journal:
        journal.start("t-1", Table(), key)
        assert journal.discontinuity is not None
        assert "not signed" in journal.discontinuity.reason
        assert journal.epoch.number == 2


def test_a_cut_journal_is_a_new_epoch_and_a_restart_keeps_it(tmp_path: Path) -> None:
    key = SigningKey.generate()
    path = tmp_path / "j.db"
    with signed_journal(path, key, notices=6) as journal:
        seq, h = journal.last_seq, journal.last_hash
        first_epoch = journal.epoch
    db = sqlite3.connect(path)
    db.execute("DELETE FROM journal WHERE seq > 4")
    db.commit()
    db.close()
    with Journal(path) as journal:
        journal.start("t-1", Table(), key)
        found = journal.discontinuity
        assert found is not None
        assert (found.anchor or {})["seq"] == seq and (found.anchor or {})["hash"] == h
        assert found.journal["last_seq"] == 4
        rows = list(journal.rows())
        assert rows[4].seq == 5 and rows[4].event["message"] == "journal discontinuity"
        assert journal.epoch.number == 2 and journal.epoch.mark != first_epoch.mark
        assert journal.verify(key.public).ok
    with Journal(path) as journal:  # the anchor was rewritten after the notice: no second
        journal.start("t-1", Table(), key)
        assert journal.discontinuity is None and journal.epoch.number == 2


def test_a_row_signed_by_no_one_after_the_anchor_refuses_the_start(tmp_path: Path) -> None:
    """Rows appended after the last verified point are checked one by one: one without the
    station's signature (someone appended it, re-hashing nothing before) stops the start."""
    key = SigningKey.generate()
    path = tmp_path / "j.db"
    with signed_journal(path, key) as journal:
        seq, h = journal.last_seq, journal.last_hash
    db = sqlite3.connect(path)
    event = dumps({"type": "notice", "message": "made up"})
    ts = "2026-12-04T00:00:00.000000Z"
    digest = row_hash(seq + 1, ts, "station", "station", "notice", event, None, h)
    db.execute(
        f"INSERT INTO journal ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (seq + 1, ts, "station", "station", "notice", event, None, h, digest, None),
    )
    db.commit()
    db.close()
    with (
        Journal(path) as journal,
        pytest.raises(JournalError, match=f"row {seq + 1}: it has no signature"),
    ):
        journal.start("t-1", Table(), key)


def test_adopt_refuses_a_journal_its_key_signed_before(tmp_path: Path) -> None:
    """A signed journal rewritten as if never signed, its signed anchor left as it was:
    the anchor says this key signed it, so `adopt` refuses it (restore it instead)."""
    key = SigningKey.generate()
    path = tmp_path / "j.db"
    signed_journal(path, key).close()
    head = path.with_name("j.db.head").read_bytes()
    path.unlink()
    path.with_name("j.db.head").unlink()
    with Journal(path) as journal:  # the same rows, unsigned
        journal.start("t-1", Table())
        journal.append([notice("station", "station", f"n{i}") for i in range(3)])
    path.with_name("j.db.head").write_bytes(head)
    with Journal(path) as journal, pytest.raises(JournalError, match="rewritten unsigned"):
        journal.adopt("t-1", Table(), key, "someone")

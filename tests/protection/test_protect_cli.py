"""`station protect` over files: one JSON line per alert, an index fed once."""

from __future__ import annotations

from pathlib import Path

import orjson

from tests.conftest import run_station
from tests.protection.test_watch import shoes_events


def events_file(tmp_path: Path, models: list[str]) -> Path:
    path = tmp_path / "events.jsonl"
    path.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in shoes_events(models)))
    return path


def test_alerts_over_a_file_and_stdin(tmp_path: Path) -> None:
    path = events_file(tmp_path, ["uniform", "riffle:1", "none"])
    result = run_station("protect", "--decks", "2", str(path))
    assert result.returncode == 1, result.stderr  # alerts: a script can gate on it
    alerts = [orjson.loads(line) for line in result.stdout.splitlines()]
    assert [a["code"] for a in alerts] == ["WEAK_SHUFFLE", "SHOE_SEQUENCE", "WEAK_SHUFFLE"]
    assert all(a["message"] and a["advice"] for a in alerts)
    piped = run_station("protect", "--decks", "2", stdin=path.read_bytes())
    assert (piped.returncode, piped.stdout) == (1, result.stdout)


def test_fair_shoes_print_nothing(tmp_path: Path) -> None:
    result = run_station("protect", "--decks", "2", str(events_file(tmp_path, ["uniform"] * 3)))
    assert (result.returncode, result.stdout) == (0, b"")


def test_an_index_is_fed_once_and_catches_a_shoe_of_another_file(tmp_path: Path) -> None:
    index = str(tmp_path / "index.sqlite")
    first = events_file(tmp_path, ["uniform", "uniform"])
    assert run_station("protect", "--decks", "2", "--index", index, str(first)).stdout == b""
    # The same file again: its shoes are in the index already, and are not "repeated".
    assert run_station("protect", "--decks", "2", "--index", index, str(first)).stdout == b""
    # The same shoes under another name: they are.
    again = run_station(
        "protect", "--decks", "2", "--index", index, "--table-name", "T9", str(first)
    )
    codes = [orjson.loads(line)["code"] for line in again.stdout.splitlines()]
    assert codes[:1] == ["SHOE_SEQUENCE"] and codes.count("SHOE_SEQUENCE") == 2


def test_bad_arguments_say_what_to_do(tmp_path: Path) -> None:
    missing = run_station("protect", str(tmp_path / "nope.jsonl"))
    assert missing.returncode == 2 and b"cannot read" in missing.stderr
    bad = run_station("protect", "--weak-below", "2")
    assert bad.returncode == 2 and b"between 0 and 1" in bad.stderr
    foreign = tmp_path / "foreign.sqlite"
    foreign.write_bytes(b"not a database at all" * 100)
    refused = run_station("protect", "--index", str(foreign), stdin=b"")
    assert refused.returncode == 2 and b"--index" in refused.stderr


def test_export_lines_give_journal_seqs(tmp_path: Path) -> None:
    lines = []
    for i, event in enumerate(shoes_events(["uniform", "none"])):
        ts = f"2026-12-01T10:{i // 60 % 60:02d}:{i % 60:02d}.000000Z"
        lines.append(orjson.dumps({**event, "journal": {"seq": 1000 + 2 * i, "ts": ts}}))
    result = run_station("protect", "--decks", "2", stdin=b"\n".join(lines) + b"\n")
    (alert,) = [orjson.loads(line) for line in result.stdout.splitlines()][:1]
    assert (
        alert["code"] == "SHOE_SEQUENCE"
        and alert["earlier"] == "file shoe at seq 1000 started 2026-12-01T10:00:00.000000Z"
    )
    assert alert["at_seq"] >= 1000 and alert["at_seq"] % 2 == 0


def test_simulate_shuffle_streams_are_caught_by_protect() -> None:
    """`station simulate --shuffle MODEL` shuffles each next shoe from the previous one's
    cards: riffle:1 is a weak shuffle, none a repeated shoe, uniform a fair one."""

    def alerts(*options: str) -> list[dict[str, object]]:
        dealt = run_station("simulate", "--seed", "4", "--decks", "2", "--shoes", "3", *options)
        assert dealt.returncode == 0, dealt.stderr
        found = run_station("protect", "--decks", "2", stdin=dealt.stdout)
        assert found.returncode == (1 if found.stdout else 0), found.stderr
        return [orjson.loads(line) for line in found.stdout.splitlines()]

    weak = alerts("--shuffle", "riffle:1")
    assert [a["code"] for a in weak] == ["WEAK_SHUFFLE", "WEAK_SHUFFLE"]
    assert len({a["shoe_seq"] for a in weak}) == 2  # the second shoe and the third
    repeated = alerts("--shuffle", "none")
    assert [a["code"] for a in repeated].count("SHOE_SEQUENCE") >= 2
    assert alerts("--shuffle", "uniform") == [] and alerts() == []
    bad = run_station("simulate", "--shuffle", "riffle:x")
    assert bad.returncode == 2 and b"--shuffle" in bad.stderr and b"riffle:x" in bad.stderr

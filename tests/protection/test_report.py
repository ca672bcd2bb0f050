"""`station report` against a shift computed by hand."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

from station.core.table import Table
from station.live.journal import Journal
from station.shared.rows import Pending
from tests.conftest import run_station

T0 = datetime(2026, 12, 1, 10, 0, 0, tzinfo=UTC)

#: (seconds after 10:00, actor, event). One deck, gated: ana deals rounds 1 and 2, bo
#: deals round 3 (a scanner fault at 55 s, resumed 30 s later) and round 4 (voided).
SHIFT: list[tuple[int, str, dict[str, Any]]] = [
    (0, "ana", {"type": "shoe"}),
    (1, "reader", {"type": "card", "card": "AH"}),  # burn reveal: one more card
    (2, "reader", {"type": "card", "card": "2C"}),
    (10, "ana", {"type": "close_bets"}),
    *(
        (t, "reader", {"type": "card", "card": c})
        for t, c in zip(range(11, 15), ("4S", "KS", "5S", "QS"), strict=True)
    ),
    (30, "ana", {"type": "close_bets"}),
    *(
        (t, "reader", {"type": "card", "card": c})
        for t, c in zip(range(31, 35), ("4H", "KH", "5H", "QH"), strict=True)
    ),
    (50, "bo", {"type": "close_bets"}),
    (51, "reader", {"type": "card", "card": "4D"}),
    (55, "reader", {"type": "fault", "detail": "reader disconnected"}),
    (85, "sup", {"type": "resume"}),
    *(
        (t, "reader", {"type": "card", "card": c})
        for t, c in zip(range(86, 89), ("KD", "5D", "QD"), strict=True)
    ),
    (100, "bo", {"type": "close_bets"}),
    (101, "reader", {"type": "card", "card": "4C"}),
    (110, "sup", {"type": "void"}),
]


def write_journal(path: Path) -> None:
    table = Table(decks=1)
    journal = Journal(path)
    journal.start("t-hand", table)
    pendings = []
    for seconds, actor, event in SHIFT:
        ts = (T0 + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        verdict = dict(table.decide(event).verdict)
        pendings.append(Pending("api", actor, event, verdict, ts))
    journal.append(pendings)
    journal.close()


def test_the_report_of_a_shift_computed_by_hand(tmp_path: Path) -> None:
    path = tmp_path / "journal.db"
    write_journal(path)
    result = run_station("report", "--journal", str(path), "--format", "json")
    assert result.returncode == 0, result.stderr
    (report,) = orjson.loads(result.stdout)["tables"]
    totals = report["totals"]
    # Cycles: 14 s (shoe start to round 1), 20 s, 54 s: 3 rounds in 88 s.
    assert totals["rounds"] == 3 and totals["voided_rounds"] == 1
    assert totals["rounds_per_hour"] == round(3600 * 3 / 88, 1) == 122.7
    assert totals["seconds_per_round"] == 29.3
    # Bets closed to result: 4, 4 and 38 s.
    assert totals["close_to_result_seconds"] == 15.3 and totals["close_to_result_median"] == 4.0
    assert totals["suspensions_by_code"] == {"SCANNER_FAULT": 1}
    assert totals["suspensions_per_100_rounds"] == 33.33
    assert totals["resolve_seconds"] == 30.0
    ana, bo = report["dealers"]["ana"], report["dealers"]["bo"]
    assert (ana["rounds"], ana["rounds_per_hour"], ana["seconds_per_round"]) == (2, 211.8, 17.0)
    assert ana["suspensions"] == 0 and ana["voided_rounds"] == 0
    assert (bo["rounds"], bo["voided_rounds"], bo["rounds_per_hour"]) == (1, 1, 66.7)
    assert bo["suspensions_per_100_rounds_by_code"] == {"SCANNER_FAULT": 100.0}
    assert bo["resolve_seconds"] == 30.0
    (shoe,) = report["shoes"]
    assert shoe["dealers"] == ["ana", "bo"] and shoe["rounds"] == 3


def test_a_time_window_and_the_html_page(tmp_path: Path) -> None:
    path = tmp_path / "journal.db"
    write_journal(path)
    window = run_station(
        "report", "--journal", str(path), "--format", "json",
        "--from", "2026-12-01T10:00:20", "--to", "2026-12-01T10:01:00",
    )  # fmt: skip
    report = orjson.loads(window.stdout)["tables"][0]
    totals = report["totals"]
    assert totals["rounds"] == 1 and totals["seconds_per_round"] == 20.0
    # Every time in the JSON as the journal writes a row's (one style, UTC, `Z`).
    times = [report[k] for k in ("from", "to", "first_row", "last_row")]
    times += [shoe["started"] for shoe in report["shoes"]]
    assert times[:4] == [
        "2026-12-01T10:00:20.000000Z",
        "2026-12-01T10:01:00.000000Z",
        "2026-12-01T10:00:30.000000Z",  # the window's first row and its last
        "2026-12-01T10:00:55.000000Z",
    ]
    assert all(t.endswith("Z") and "+" not in t for t in times)
    page = tmp_path / "report.html"
    assert run_station("report", "--journal", str(path), "-o", str(page)).returncode == 0
    html = page.read_text()
    assert html.startswith("<!DOCTYPE html>") and "<svg" in html and "Table t-hand" in html
    assert "<script" not in html and "http://" not in html.replace("http://www.w3.org/2000/svg", "")
    assert run_station("report", "--journal", str(path), "--table", "other").returncode == 2


def test_bad_input_says_what_to_do(tmp_path: Path) -> None:
    assert b"give --journal" in run_station("report").stderr
    missing = run_station("report", "--journal", str(tmp_path / "none.db"))
    assert missing.returncode == 2 and b"no such journal" in missing.stderr
    bad = run_station("report", "--journal", "x", "--from", "yesterday")
    assert bad.returncode == 2 and b"not a date or time" in bad.stderr

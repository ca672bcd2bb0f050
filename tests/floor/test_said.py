"""An alert's code and figures (`station.floor.said`): what the floor's producers make fits
the words the catalogue has for its code, and one that does not is stored without a code
(shown as its English message), never lost."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from station.floor.alerts import HELD_FULL, gap_words, raise_alert, read_alerts
from station.floor.archive import Archive
from station.floor.holding import PENDING_KEY, UNSIGNED, full_words
from station.floor.said import CODES, Said


def test_the_producers_figures_fit_their_codes() -> None:
    assert gap_words(20, 22) == Said(
        "gap_row", gap_words(20, 22).message, {"seq": 22, "head": 20, "missing": 21}
    )
    assert gap_words(20, 25).code == "gap_rows" and gap_words(20, 25).fits()
    assert full_words("t1", PENDING_KEY, 500).code == "held_full_pending"
    assert full_words("t1", UNSIGNED, 500).fits()
    assert all(Said(code, "", dict.fromkeys(figures, 1)).fits() for code, figures in CODES.items())


def test_an_alert_whose_figures_do_not_fit_is_kept_without_a_code(tmp_path: Path) -> None:
    with Archive(tmp_path / "floor.db"):
        pass
    db = sqlite3.connect(tmp_path / "floor.db", isolation_level=None)
    wrong = Said("gap_row", "row 22 arrived but the archive ends at row 20", {"seq": 22})
    raised = raise_alert(db, "t1", 22, "gap", wrong, "2026-12-01T00:00:00Z")
    unknown = Said("no_such_code", "words of a newer floor", {})
    raise_alert(db, "t1", None, HELD_FULL, unknown, "2026-12-01T00:00:01Z")
    assert raised.code is None and raised.message == wrong.message
    kept = {a.kind: a for a in read_alerts(db, 10)}
    assert kept["gap"].code is None and kept["gap"].params == {"seq": 22}
    assert kept[HELD_FULL].code is None and kept[HELD_FULL].message == "words of a newer floor"
    db.close()

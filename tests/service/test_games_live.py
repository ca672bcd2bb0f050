"""A live cercle table (issue 10): `[table] game` and the game's defaults, the journal of
one game, decisions from the dealer, the supervisor and the shoe's buttons, the banque's
roads per tableau, odds not offered, and the game server's round results."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from station.core.table import Table
from station.live.config import ConfigError, TableConfig, from_mapping
from station.live.journal import Journal, JournalError
from station.live.signals import table_events
from tests.service.kit import Running, make_config, serve

pytestmark = pytest.mark.server


# --- [table] game and its defaults ------------------------------------------------------


def test_each_game_brings_its_defaults() -> None:
    assert (
        TableConfig().game,
        TableConfig().decks,
        TableConfig().burn,
        TableConfig().cut_policy,
        TableConfig().paytable,
    ) == ("punto_banco", 8, "reveal", "one_more", "traditional")
    chemin = TableConfig(game="chemin_de_fer")
    assert (chemin.decks, chemin.burn, chemin.cut_policy, chemin.paytable) == (
        6,
        "none",
        "stop",
        "chemin_de_fer",
    )
    banque = from_mapping({"table": {"game": "baccarat_banque"}}).table
    assert (banque.decks, banque.burn, banque.cut_policy, banque.paytable) == (
        6,
        "none",
        "stop",
        "baccarat_banque",
    )
    # A key that is given wins over the game's value.
    mine = TableConfig(game="baccarat_banque", decks=4, burn="reveal", cut_policy="one_more")
    assert (mine.decks, mine.burn, mine.cut_policy) == (4, "reveal", "one_more")
    table = mine.new_table()
    assert (table.game.name, table.decks, table.burn, table.cut_policy, table.gated) == (
        "baccarat_banque",
        4,
        "reveal",
        "one_more",
        True,
    )


@pytest.mark.parametrize(
    ("table", "message"),
    [
        (
            {"game": "faro"},
            "[table] game: must be one of punto_banco, chemin_de_fer, baccarat_banque",
        ),
        ({"burn": "twice"}, "[table] burn: must be one of reveal, none"),
        ({"cut_policy": "never"}, "[table] cut_policy: must be one of one_more, last_round, stop"),
        (
            {"game": "baccarat_banque", "paytable": "traditional"},
            "[table] paytable: paytable traditional is for punto_banco, but this table plays "
            "baccarat_banque: give a baccarat_banque paytable "
            '(the shipped one is "baccarat_banque")',
        ),
        (
            {"paytable": "chemin_de_fer"},
            "paytable chemin_de_fer is for chemin_de_fer, but this table plays punto_banco",
        ),
        ({"game": "chemin_de_fer", "paytable": "baccarat_banque"}, "is for baccarat_banque"),
    ],
)
def test_bad_game_settings_name_the_key(table: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        from_mapping({"table": table}, source="station.toml")
    assert message in str(caught.value)


# --- the journal is one game's record ----------------------------------------------------


def test_the_journal_records_the_game_and_refuses_another(tmp_path: Path) -> None:
    path = tmp_path / "j.db"
    chemin = TableConfig(game="chemin_de_fer").new_table()
    with Journal(path) as journal:
        journal.start("t1", chemin)
        assert journal.settings() == {
            "id": "t1",
            "game": "chemin_de_fer",
            "decks": 6,
            "gated": True,
            "cut_policy": "stop",
            "burn": "none",
        }
    with Journal(path) as journal, pytest.raises(JournalError) as caught:
        journal.start("t1", TableConfig(game="baccarat_banque").new_table())
    words = str(caught.value)
    assert "is the record of a chemin_de_fer table" in words
    assert "[table] game = 'baccarat_banque'" in words
    assert "give the new game a new journal file ([journal] path)" in words
    assert "set [table] game = 'chemin_de_fer' back" in words
    with Journal(path) as journal:  # the same game goes on
        journal.start("t1", TableConfig(game="chemin_de_fer").new_table())
        assert journal.verify().ok


def test_a_journal_from_before_the_games_is_punto_bancos(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its first row has no game or burn: a punto banco table with the burn reveal goes on
    with it, a cercle table is refused."""
    from station.live.journal import store as journal_module

    def before_the_games(table_id: str, table: Table) -> dict[str, Any]:
        return {
            "id": table_id,
            "decks": table.decks,
            "gated": table.gated,
            "cut_policy": table.cut_policy,
        }

    path = tmp_path / "j.db"
    with monkeypatch.context() as patched:
        patched.setattr(journal_module, "table_settings", before_the_games)
        with Journal(path) as journal:
            journal.start("t1", Table())
            assert journal.settings() == {
                "id": "t1",
                "decks": 8,
                "gated": True,
                "cut_policy": "one_more",
            }
    with Journal(path) as journal:
        journal.start("t1", Table())  # accepted: the same table
        assert journal.verify().ok
    with Journal(path) as journal, pytest.raises(JournalError, match="record of a punto_banco"):
        journal.start("t1", TableConfig(game="chemin_de_fer").new_table())
    with Journal(path) as journal, pytest.raises(JournalError, match="belongs to table"):
        journal.start("t1", Table(burn="none"))


def test_the_station_stops_on_a_journal_of_another_game(tmp_path: Path) -> None:
    config, tokens = make_config(tmp_path, allow_rig=True)
    chemin = config.model_copy(update={"table": TableConfig(id="t-test", game="chemin_de_fer")})
    with serve(chemin, tokens) as live:
        assert send(live, {"type": "shoe"}, "dealer")["ok"]
    banque = config.model_copy(update={"table": TableConfig(id="t-test", game="baccarat_banque")})
    with serve(banque, tokens, wait_ready=False) as live:
        deadline = time.monotonic() + 10
        while live.station.fatal is None:
            assert time.monotonic() < deadline, "the station did not stop"
            time.sleep(0.01)
        assert not live.station.ready
        assert "is the record of a chemin_de_fer table" in live.station.fatal
        assert "give the new game a new journal file" in live.station.fatal
        assert live.post({"type": "shoe"}, "dealer").status_code == 503


# --- a live baccarat banque table ---------------------------------------------------------


@pytest.fixture
def banque(tmp_path: Path) -> Iterator[Running]:
    config, tokens = make_config(tmp_path, allow_rig=True)
    config = config.model_copy(update={"table": TableConfig(id="t-banque", game="baccarat_banque")})
    with serve(config, tokens) as running:
        yield running


def send(live: Running, event: dict[str, Any], role: str = "rig") -> dict[str, Any]:
    answer = live.post(event, role)
    assert answer.status_code == 200, answer.text
    verdict: dict[str, Any] = answer.json()  # {"seq", **verdict}
    return verdict


def cards(live: Running, *codes: str) -> list[dict[str, Any]]:
    return [send(live, {"type": "card", "card": c}) for c in codes]


def from_the_shoe(live: Running, event: dict[str, Any]) -> dict[str, Any]:
    """`event` as the serial reader hands it to the station (its thread, then the loop)."""
    station = live.station
    before = station.snapshot.seq
    assert station.loop is not None
    station.loop.call_soon_threadsafe(station.reader_event, "serial", dict(event))
    deadline = time.monotonic() + 10
    while station.snapshot.seq == before:
        assert time.monotonic() < deadline, "the reader's event was not committed"
        time.sleep(0.01)
    rows = httpx.get(
        f"{live.url}/api/journal?after={before}", headers=live.headers("viewer")
    ).json()["events"]
    (row,) = rows
    return row  # type: ignore[no-any-return]


def test_a_banque_shoe_with_decisions_from_the_dealer_the_supervisor_and_the_shoe(
    banque: Running,
) -> None:
    live = banque
    state = httpx.get(f"{live.url}/api/state", headers=live.headers("viewer")).json()
    assert state["game"] == "baccarat_banque"
    assert send(live, {"type": "shoe"}, "dealer")["ok"]
    assert send(live, {"type": "close_bets"}, "dealer")["round"] == 1  # no burn
    # Round 1: T1 2+3 = 5 (option), T2 4+2 = 6, banker K+6 = 6.
    roles = [v["role"] for v in cards(live, "2S", "4D", "KD", "3H", "2C", "6C")]
    assert roles == ["T1.1", "T2.1", "B.1", "T1.2", "T2.2", "B.2"]
    # A viewer may not decide; the dealer may.
    assert (
        live.post({"type": "decision", "hand": "tableau1", "draw": True}, "viewer").status_code
        == 403
    )
    decided = send(live, {"type": "decision", "hand": "tableau1", "draw": True}, "dealer")
    assert (decided["ok"], decided["role"], decided["round"], decided["result"]) == (
        True,
        None,
        1,
        None,
    )
    # T1 draws a 9: 4. T2 stands on 6; the banker's 6 stands against a 9 and a stand.
    (third,) = cards(live, "9S")
    assert third["role"] == "T1.3"
    first = third["result"]
    assert (first["tableau1_outcome"], first["tableau2_outcome"]) == ("lose", "tie")

    # Round 2: T1 5+K = 5 (option), T2 A+2 = 3, banker 2+T = 2. A card comes out while
    # T1's option waits: DECISION_MISSING holds it; the supervisor resumes with T1's decision.
    assert send(live, {"type": "close_bets"}, "dealer")["round"] == 2
    cards(live, "5S", "AH", "2D", "KH", "2H", "TD")
    held = send(live, {"type": "card", "card": "7C"})
    assert (held["ok"], held["error"]) == (False, "DECISION_MISSING")
    resume = {"type": "resume", "decision": {"hand": "tableau1", "draw": True}}
    assert live.post(resume, "dealer").status_code == 403  # the supervisor's
    resumed = send(live, resume, "supervisor")
    assert (resumed["ok"], resumed["role"]) == (True, "T1.3")  # the held card, placed
    # T2 on 3 must draw (4: 7); the banker on 2 must draw (3: 5).
    t2, banker = cards(live, "4S", "3C")
    assert (t2["role"], banker["role"]) == ("T2.3", "B.3")
    second = banker["result"]
    assert (second["tableau1_outcome"], second["tableau2_outcome"]) == ("lose", "win")

    # Round 3: T1 3+2 = 5 (option), T2 8+K = 8 natural, banker 4+2 = 6. The shoe's "no
    # card" button: a decision with no hand, for the turn that waits (T1's).
    assert send(live, {"type": "close_bets"}, "dealer")["round"] == 3
    cards(live, "3S", "8C", "4H", "2S", "KC", "2C")
    row = from_the_shoe(
        live, {"type": "decision", "draw": False, "raw": "4e4f4e", "actor": "reader"}
    )
    assert (row["source"], row["actor"], row["event"]["type"]) == ("reader", "reader", "decision")
    third_round = row["verdict"]["result"]  # the banker's 6 stands against a stand: complete
    assert third_round is not None and "tableau2" in third_round["naturals"]
    assert (third_round["tableau1_outcome"], third_round["tableau2_outcome"]) == ("lose", "win")
    # A button pressed with no option waiting is refused and changes nothing.
    assert send(live, {"type": "close_bets"}, "dealer")["round"] == 4
    refused = from_the_shoe(live, {"type": "decision", "draw": True, "actor": "reader"})["verdict"]
    assert (refused["ok"], refused["error"]) == (False, "DECISION_NOT_ALLOWED")

    history = httpx.get(f"{live.url}/api/history", headers=live.headers("viewer")).json()
    assert history["game"] == "baccarat_banque"
    assert [r["round"] for r in history["rounds"]] == [1, 2, 3]
    roads = history["roads"]
    assert roads["game"] == "baccarat_banque" and roads["counts"] == {
        "rounds": 3,
        "banker_natural": 0,
    }
    assert [b["outcome"] for b in roads["tableau1"]["bead_plate"]] == ["lose", "lose", "lose"]
    assert [b["outcome"] for b in roads["tableau2"]["bead_plate"]] == ["tie", "win", "win"]
    assert [b["natural"] for b in roads["tableau2"]["bead_plate"]] == [False, False, True]
    assert roads["tableau2"]["counts"] == {"rounds": 3, "win": 2, "lose": 0, "tie": 1, "natural": 1}
    assert [(b["x"], b["y"]) for b in roads["tableau1"]["bead_plate"]] == [(0, 0), (0, 1), (0, 2)]

    odds = httpx.get(f"{live.url}/api/odds", headers=live.headers("viewer")).json()
    assert (odds["game"], odds["offered"], odds["odds"], odds["paytable"]) == (
        "baccarat_banque",
        False,
        None,
        "baccarat_banque",
    )
    assert "odds are offered for punto banco only" in odds["reason"]
    assert "baccarat banque" in odds["reason"]
    # A shipped punto banco paytable asked for by name gets the same answer: the table's
    # game decides, not the paytable.
    asked = httpx.get(f"{live.url}/api/odds?paytable=traditional", headers=live.headers("viewer"))
    assert asked.status_code == 200 and asked.json()["offered"] is False


def test_odds_are_still_offered_at_a_punto_banco_table(live: Running) -> None:
    odds = httpx.get(f"{live.url}/api/odds", headers=live.headers("viewer")).json()
    assert (odds["game"], odds["offered"], odds["reason"]) == (
        "punto_banco",
        True,
        "no shoe in play",
    )


# --- chemin de fer ------------------------------------------------------------------------


def test_a_chemin_de_fer_round_decided_by_the_dealer_has_the_usual_roads(tmp_path: Path) -> None:
    config, tokens = make_config(tmp_path, allow_rig=True)
    config = config.model_copy(update={"table": TableConfig(id="t-chemin", game="chemin_de_fer")})
    with serve(config, tokens) as live:
        send(live, {"type": "shoe"}, "dealer")
        send(live, {"type": "close_bets"}, "dealer")
        # The ponte 2+3 = 5 (option), the banker K+7 = 7.
        assert [v["role"] for v in cards(live, "2S", "KD", "3H", "7D")] == ["P1", "B1", "P2", "B2"]
        wrong = send(live, {"type": "decision", "hand": "banker", "draw": True}, "dealer")
        assert (wrong["ok"], wrong["error"]) == (False, "DECISION_NOT_ALLOWED")
        # The ponte stands; the banker's 7 stands against a stand: the decision completes it.
        done = send(live, {"type": "decision", "hand": "player", "draw": False}, "dealer")
        assert done["result"]["winner"] == "banker"
        history = httpx.get(f"{live.url}/api/history", headers=live.headers("viewer")).json()
        assert history["game"] == "chemin_de_fer"
        assert [b["winner"] for b in history["roads"]["bead_plate"]] == ["banker"]
        assert history["roads"]["counts"]["banker"] == 1
        odds = httpx.get(f"{live.url}/api/odds", headers=live.headers("viewer")).json()
        assert odds["offered"] is False and "chemin de fer" in odds["reason"]
        journal = live.station.journal
        assert journal is not None
        assert journal.settings() == {
            "id": "t-chemin",
            "game": "chemin_de_fer",
            "decks": 6,
            "gated": True,
            "cut_policy": "stop",
            "burn": "none",
        }
    with Journal(config.journal.path) as journal:  # verified under the game it records
        report = journal.verify()
        assert report.ok and report.events == 9, report.problems  # restart and 8 events


# --- what the game server hears -----------------------------------------------------------


def test_round_result_carries_the_games_result_and_shoe_started_its_settings() -> None:
    table = TableConfig(game="baccarat_banque").new_table()
    heard: list[tuple[str, dict[str, Any]]] = []
    stream = [
        {"type": "shoe"},
        {"type": "close_bets"},
        *({"type": "card", "card": c} for c in ("4S", "9C", "3D", "4H", "KD", "3C")),
    ]
    for event in stream:
        was = table.in_play
        verdict, cleared, began = table.decide(event)
        heard += table_events(table, event, verdict, was, cleared, began)
    (started,) = [f for what, f in heard if what == "shoe_started"]
    assert started == {
        "shoe": 1,
        "game": "baccarat_banque",
        "decks": 6,
        "gated": True,
        "cut_policy": "stop",
        "burn": "none",
    }
    (result,) = [f for what, f in heard if what == "round_result"]
    assert (result["game"], result["round"]) == ("baccarat_banque", 1)
    # T1 4+4 = 8 and T2 9+K = 9, both naturals, against the banker's 3+3 = 6.
    assert result["result"]["tableau1"] == ["4S", "4H"]
    assert (result["result"]["tableau1_outcome"], result["result"]["tableau2_outcome"]) == (
        "win",
        "win",
    )
    from station.core import paytables
    from station.core.settlement import settle

    banque_pays = paytables.load("baccarat_banque")
    settled = settle(banque_pays, 1, result["result"], [{"bet": "a_cheval", "stake": "10"}])
    assert settled[0].net == 10

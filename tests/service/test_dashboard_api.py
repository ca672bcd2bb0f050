"""The dashboard's endpoints over a real uvicorn server: the page and its files, whoami,
explanations, history and roads from the committed journal, the export, the odds."""

from __future__ import annotations

import io
from pathlib import Path

import httpx
import orjson
import pytest

from drivers.sim.stream import simulate
from station.core.events import EVENT_ROLES
from station.core.odds import Analyzer, seed_bets
from station.core.paytables import load
from station.core.roads import scoreboards
from station.core.table import Table
from station.core.words import EXPLANATIONS
from station.live.replay import replay
from tests.service.kit import Running, make_config, serve

pytestmark = pytest.mark.server

BURN = [{"type": "card", "card": c} for c in ("2H", "KS", "QD")]
ROUND = [{"type": "close_bets"}] + [{"type": "card", "card": c} for c in ("9S", "2D", "KH", "5C")]


def get(live: Running, path: str, role: str | None = "viewer") -> httpx.Response:
    return httpx.get(f"{live.url}{path}", headers=live.headers(role) if role else {})


def deal(live: Running, events: list[dict[str, object]]) -> None:
    for e in events:
        live.post(e, "rig").raise_for_status()


def test_the_page_and_its_files_are_served_locally(live: Running) -> None:
    page = get(live, "/", None)
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "default-src 'self'" in page.headers["content-security-policy"]
    html = page.text
    assert "http://" not in html and "https://" not in html  # nothing from a CDN
    for name, kind in (
        ("app.js", "text/javascript"),
        ("style.css", "text/css"),
        ("roads.js", "text/javascript"),
        ("favicon.svg", "image/svg+xml"),
    ):
        r = get(live, f"/web/{name}", None)
        assert r.status_code == 200 and r.headers["content-type"].startswith(kind), name
        assert "https://" not in r.text, name
    for bad in ("../api/web.py", "..%2F..%2Fstation%2Ftable.py", "nope.js", "index.txt"):
        assert get(live, f"/web/{bad}", None).status_code == 404, bad


def test_whoami_and_explanations(live: Running) -> None:
    assert get(live, "/api/whoami", "supervisor").json() == {
        "name": "test-supervisor",
        "role": "supervisor",
        "acts_as": "supervisor",
        "public_read": False,
        "table": "t-test",
    }
    anonymous = get(live, "/api/whoami", None).json()
    assert anonymous["name"] is None and anonymous["public_read"] is False
    r = httpx.get(f"{live.url}/api/whoami", headers={"Authorization": "Bearer wrong"})
    assert r.status_code == 401
    words = get(live, "/api/explanations", None).json()
    assert words["errors"] == EXPLANATIONS and words["event_roles"] == EVENT_ROLES
    assert words["roles"] == ["display", "viewer", "dealer", "supervisor", "rig"]
    events = words["events"]  # the page's buttons take their words from here
    assert events["void"]["confirm"].startswith("Void the round in progress?")
    assert events["void"]["done"] == "void round" and events["void"]["reader"] is False
    assert events["card"]["reader"] is True and events["card"]["confirm"] is None
    assert words["due"]["B2"] == "banker second card" and words["due"]["burn"] == "burn card"
    assert None not in words["due"] and "null" not in words["due"]


def test_a_rig_token_without_allow_rig_acts_as_a_viewer(tmp_path: Path) -> None:
    config, tokens = make_config(tmp_path)
    with serve(config, tokens) as running:
        me = get(running, "/api/whoami", "rig").json()
        assert me["role"] == "rig" and me["acts_as"] == "viewer"


def test_history_follows_the_committed_journal(live: Running) -> None:
    assert get(live, "/api/history", None).status_code == 401
    empty = get(live, "/api/history").json()
    assert empty["rounds"] == [] and empty["shoe"] == 0 and empty["roads"]["bead_plate"] == []
    deal(
        live,
        [
            {"type": "shoe"},
            *BURN,
            *ROUND,
            {"type": "close_bets"},
            {"type": "card", "card": None},
            {"type": "void"},
        ],
    )
    hist = get(live, "/api/history").json()
    assert hist["seq"] == live.station.snapshot.seq
    assert hist["shoe"] == 1 and hist["in_play"] is True and hist["voided"] == [2]
    assert get(live, "/api/state").json()["actions"] == ["close_bets", "end_shoe"]
    [r1] = hist["rounds"]
    assert (r1["player"], r1["banker"], r1["winner"]) == (["9S", "KH"], ["2D", "5C"], "player")
    assert hist["roads"] == scoreboards(hist["rounds"])
    assert hist["previous"] is None
    deal(live, [{"type": "end_shoe"}, {"type": "shoe"}])
    fresh = get(live, "/api/history").json()
    assert fresh["shoe"] == 2 and fresh["rounds"] == [] and fresh["voided"] == []
    # until the new shoe has a result, the finished shoe is still there to see
    assert fresh["previous"] == {"shoe": 1, "rounds": [r1], "voided": [2], "roads": hist["roads"]}
    deal(live, [*BURN, *ROUND])
    assert get(live, "/api/history").json()["previous"] is None


def test_export_is_the_journal_export(live: Running) -> None:
    deal(live, [{"type": "shoe"}, *BURN, {"type": "card", "card": "??", "raw": "x"}])
    r = get(live, "/api/export")
    assert r.status_code == 200
    assert r.headers["content-disposition"].startswith('attachment; filename="t-test-journal-')
    ours = [orjson.loads(line) for line in r.content.splitlines()]
    # what `station journal export` writes: the event, its journal row and its verdict
    rows = get(live, "/api/journal?limit=1000").json()["events"]
    expected = [
        {
            **row["event"],
            "journal": {k: row[k] for k in ("seq", "ts", "source", "actor")},
            "verdict": {k: v for k, v in row["verdict"].items() if k != "seq"},
        }
        for row in rows
        if row["event"]["type"] != "notice"
    ]
    # the first line also says the table the journal is the record of, as the CLI's does
    table = {
        "id": "t-test",
        "game": "punto_banco",
        "decks": 8,
        "gated": True,
        "cut_policy": "one_more",
        "burn": "reveal",
    }
    expected[0]["journal"]["table"] = table
    assert ours == expected
    later = get(live, f"/api/export?after={rows[-2]['seq']}").content.splitlines()
    assert len(later) == 1 and orjson.loads(later[0])["verdict"]["error"] == "UNREADABLE_CARD"
    assert orjson.loads(later[0])["journal"]["table"] == table
    assert get(live, "/api/export", None).status_code == 401


def test_odds_between_rounds_and_during_a_round(live: Running) -> None:
    assert get(live, "/api/odds").json()["odds"] is None
    deal(live, [{"type": "shoe"}, *BURN, *ROUND])
    analyzer = Analyzer(seed_bets(load("traditional")))
    table = Table()
    for e in [{"type": "shoe"}, *BURN, *ROUND]:
        table.apply(e)
    between = get(live, "/api/odds").json()
    assert between["betting_closed"] is False
    assert between["odds"] == analyzer.live_edge(table.remaining(), 2)
    assert between["cards"] == {"size": 416, "out": 7, "left": 409, "unreadable": 0, "round": 0}
    deal(live, [{"type": "close_bets"}, {"type": "card", "card": "AS"}])
    during = get(live, "/api/odds").json()
    # betting is closed: the odds round 2 was bet at, from the shoe before its first card
    assert during["betting_closed"] is True
    assert during["odds"] == between["odds"]
    assert during["cards"] == {"size": 416, "out": 8, "left": 408, "unreadable": 0, "round": 1}
    deal(live, [{"type": "card", "card": None}, {"type": "resume", "card": "2S"}])
    cards = get(live, "/api/odds").json()["cards"]
    # the cards not seen: the shoe's, the unreadable one (out, never identified), the round's
    assert cards == {"size": 416, "out": 10, "left": 406, "unreadable": 1, "round": 2}
    assert (
        cards["left"] + cards["unreadable"] + cards["round"]
        == get(live, "/api/odds").json()["odds"]["cards_left"]
    )
    assert get(live, "/api/odds?paytable=nope").status_code == 422
    no_commission = get(live, "/api/odds?paytable=no_commission").json()
    assert no_commission["paytable"] == "no_commission" and no_commission["odds"]["next_round"] == 2


def replayed_table(export: bytes) -> Table:
    """A fresh `station replay` of an export: the table it leaves (its verdicts checked)."""
    table = Table()
    out = io.BytesIO()
    replay(table, io.BytesIO(export), out)
    lines = [orjson.loads(line) for line in export.splitlines()]
    verdicts = [orjson.loads(line) for line in out.getvalue().splitlines()]
    assert [{k: v for k, v in r.items() if k != "seq"} for r in verdicts] == [
        line["verdict"] for line in lines
    ]
    return table


def test_history_and_odds_are_a_replay_of_the_export_at_the_same_seq(live: Running) -> None:
    """Published by the writer, not read back: still exactly what `station replay` of the
    journal's export up to the same row gives, through faults, voids and a new shoe."""
    events = [
        {k: v for k, v in e.items() if k not in ("actor", "expect", "fault")}  # the API's own
        for e in simulate(7, shoes=1, faults={"all": 0.05}, rounds=14)
    ]
    events += [
        {"type": "shoe"},
        *BURN,
        *ROUND,
        {"type": "close_bets"},
        {"type": "card", "card": "AS"},
    ]
    analyzer = Analyzer(seed_bets(load("traditional")))
    checked, voided, seen_previous = 0, 0, 0
    with httpx.Client(headers=live.headers("rig")) as client:
        for i, event in enumerate(events):
            client.post(f"{live.url}/api/events", json=event).raise_for_status()
            if i % 13 and i != len(events) - 1:
                continue
            history = client.get(f"{live.url}/api/history").json()
            odds = client.get(f"{live.url}/api/odds").json()
            export = client.get(f"{live.url}/api/export")
            seq = history["seq"]
            assert odds["seq"] == seq and export.headers["content-disposition"].endswith(
                f'-{seq}.jsonl"'
            )
            table = replayed_table(export.content)
            rounds = orjson.loads(orjson.dumps(table.results))
            previous = None
            if not rounds and (table.previous_results or table.previous_voided):
                before = orjson.loads(orjson.dumps(table.previous_results))
                previous = {
                    "shoe": table.shoes_started - 1,
                    "rounds": before,
                    "voided": table.previous_voided,
                    "roads": scoreboards(before),
                }
            assert history == {
                "seq": seq,
                "game": "punto_banco",
                "shoe": table.shoes_started,
                "in_play": table.in_play,
                "rounds": rounds,
                "voided": table.voided,
                "roads": scoreboards(rounds),
                "previous": previous,
            }
            seen_previous += previous is not None
            assert odds["betting_closed"] == (table.round is not None)
            if not table.in_play:
                assert odds["odds"] is None
            else:
                composition = table.remaining()
                rnd = table.round
                for card in [] if rnd is None else [*rnd.player, *rnd.banker]:
                    composition[card] += 1
                number = table.rounds_opened + 1 if rnd is None else rnd.number
                assert odds["odds"] == orjson.loads(
                    orjson.dumps(analyzer.live_edge(composition, number))
                )
            checked += 1
            voided += len(history["voided"])
    assert checked >= 8 and voided and seen_previous
    assert table.shoes_started == 2 and table.round is not None and table.results

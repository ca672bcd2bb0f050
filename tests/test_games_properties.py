"""Properties of every game's table on random event streams (hypothesis): replaying twice
gives the same verdicts; no stream crashes it; each verdict is well formed; a rejection
changes nothing and an error suspends; the table's own views (due, option, held,
actions, the snapshot) agree with its state after every event.

The streams are mostly what a dealer does (close_bets, a round's cards, the hands'
decisions), mixed with single events of any kind, malformed ones included.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from station.core.cards import ALL_CARDS
from station.core.games import BURNS, CUT_POLICIES, GAMES, HAND_NAMES
from station.core.snapshot import TableSnapshot, take
from station.core.table import ACTIONS, Table
from station.core.verdicts import ERRORS, REJECTIONS

VERDICT_KEYS = {"ok", "error", "role", "round", "result", "voided_round"}

cards = st.sampled_from([*ALL_CARDS, "10h", None, "??"])
real_card = st.builds(lambda c: {"type": "card", "card": c}, st.sampled_from(ALL_CARDS))
hands = st.sampled_from([*HAND_NAMES, None, "nobody", 3])
draws = st.sampled_from([True, False, True, False, "yes", None, 1])
decision_values = st.one_of(
    st.fixed_dictionaries({"hand": hands, "draw": draws}),
    st.fixed_dictionaries({"draw": st.booleans()}),
    st.sampled_from([None, "draw", {}, [], {"hand": "banker"}]),
)
decision = st.one_of(
    st.builds(lambda h, d: {"type": "decision", "hand": h, "draw": d}, hands, draws),
    st.builds(lambda d: {"type": "decision", "draw": d}, st.booleans()),
)
resume = st.one_of(
    st.just({"type": "resume"}),
    st.builds(lambda c: {"type": "resume", "card": c}, cards),
    st.builds(lambda d: {"type": "resume", "decision": d}, decision_values),
    st.builds(lambda d, c: {"type": "resume", "decision": d, "card": c}, decision_values, cards),
)
single = st.one_of(
    st.builds(lambda c: {"type": "card", "card": c}, cards),
    st.sampled_from(
        [{"type": t} for t in ("shoe", "cut", "close_bets", "void", "end_shoe", "fault", "restart")]
    ),
    resume,
    decision,
    st.sampled_from([{"type": "card"}, {"type": "decision"}, {"type": "nope"}, {}, None, 7]),
)
# A round as a dealer deals it: close_bets, the first cards, decisions among the rest.
dealt_round = st.tuples(
    st.lists(real_card, min_size=4, max_size=9),
    st.lists(st.tuples(st.integers(0, 9), decision), max_size=3),
).map(
    lambda rd: [
        {"type": "close_bets"},
        *_interleave(rd[0], rd[1]),
    ]
)


def _interleave(dealt: list[dict[str, Any]], decisions: list[tuple[int, Any]]) -> list[Any]:
    out: list[Any] = list(dealt)
    for where, event in sorted(decisions, key=lambda d: -d[0]):
        out.insert(min(where + 4, len(out)), event)
    return out


chunks = st.one_of(dealt_round, dealt_round, dealt_round, single.map(lambda e: [e]))
tables = st.fixed_dictionaries(
    {
        "game": st.sampled_from(list(GAMES)),
        "decks": st.integers(1, 2),
        "gated": st.booleans(),
        "cut_policy": st.sampled_from(CUT_POLICIES),
        "burn": st.sampled_from(BURNS),
    }
)


def streams_for(options: dict[str, Any]) -> st.SearchStrategy[list[Any]]:
    """A shoe (and its burn: reveal an ace, burn one card), then the chunks."""
    start = [{"type": "shoe"}]
    if options["burn"] == "reveal":
        start += [{"type": "card", "card": "AS"}, {"type": "card", "card": "2D"}]
    return st.lists(chunks, max_size=20).map(lambda cs: [*start, *(e for c in cs for e in c)])


cases = tables.flatmap(lambda o: streams_for(o).map(lambda stream: (o, stream)))


def state(table: Table) -> tuple[Any, ...]:
    rnd = table.round
    return (
        table.in_play,
        table.shoes_started,
        dict(table.copies),
        table.unreadable,
        table.reveal_due,
        table.burns_due,
        table.rounds_opened,
        None if rnd is None else (rnd.due, rnd.turn, [list(c) for c in rnd.cards]),
        table.suspension,
        table.cut_seen,
        table.last_round,
        len(table.results),
        list(table.voided),
    )


@settings(max_examples=150, deadline=None)
@given(case=cases)
def test_replaying_twice_gives_the_same_verdicts(case: tuple[dict[str, Any], list[Any]]) -> None:
    options, stream = case
    first, second = Table(**options), Table(**options)
    assert [first.apply(e) for e in stream] == [second.apply(e) for e in stream]


@settings(max_examples=150, deadline=None)
@given(case=cases)
def test_every_stream_is_decided_and_the_views_agree(
    case: tuple[dict[str, Any], list[Any]],
) -> None:
    options, stream = case
    table = Table(**options)
    game = table.game
    roles = set(game.roles)
    snap: TableSnapshot | None = None
    for seq, event in enumerate(stream, 1):
        before = state(table)
        decided = table.decide(event)
        verdict = decided.verdict
        assert set(verdict) == VERDICT_KEYS
        assert verdict["ok"] == (verdict["error"] is None)
        if verdict["error"] in REJECTIONS:
            assert state(table) == before, (seq, event, verdict)
            assert verdict["round"] is None
        else:
            assert verdict["error"] in (None, *ERRORS)
        if verdict["error"] in ERRORS:
            assert table.suspension is not None and verdict["round"] is None
        if verdict["error"] == "BAD_INPUT":
            assert table.bad_input_reason(event)
        if verdict["role"] is not None:
            assert verdict["role"] in roles | {"burn", "burn_reveal"}
        result = verdict["result"]
        if result is not None:
            assert set(game.hands) <= set(result) and result["round"] == verdict["round"]
            for hand in game.hands:
                assert 2 <= len(result[hand]) <= 3  # type: ignore[literal-required]
        # The views.
        rnd = table.round
        option = table.option()
        assert (option is not None) == (rnd is not None and rnd.due == "decision")
        if option is not None:
            assert option["hand"] in game.hands and option["words"].endswith("draw or stand?")
        assert table.held is None or table.suspension is not None
        if table.held is not None:
            assert table.suspension.code == "DECISION_MISSING"  # type: ignore[union-attr]
        actions = table.actions()
        assert set(actions) <= set(ACTIONS)
        assert ("decision" in actions) == (option is not None and table.suspension is None)
        due = table.due()
        assert due in {"shoe", None, "burn_reveal", "burn", "close_bets", "decision"} | roles
        if due == "decision":
            assert table.expecting() == option["words"]  # type: ignore[index]
        snap = take(table, seq, "t", None, snap)
        assert snap.to_dict() == take(table, seq, "t", None).to_dict()
        assert snap.game == game.name and snap.hands == game.hands and snap.held == table.held
        if snap.round is not None:
            assert set(snap.round) == {"number", "due", *game.hands}

"""The core against the plain baseline (benchmarks/plain_replay.py) on random event streams.

The two implementations share no code; hypothesis drives both with arbitrary sequences
of events (mostly cards, in any order a careless dealer or a broken reader could
produce) and they must agree on every verdict.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.plain_replay import PlainTable
from station.core.cards import ALL_CARDS
from station.core.table import Table

SPEC_RESULT_KEYS = ("round", "player", "banker", "player_total", "banker_total", "winner")

cards = st.sampled_from([*ALL_CARDS[:20], "10h", " as ", None, "", "??"])
events = st.one_of(
    st.builds(lambda c: {"type": "card", "card": c}, cards),
    st.sampled_from(
        [
            {"type": t}
            for t in ("shoe", "cut", "close_bets", "void", "end_shoe", "fault", "restart", "resume")
        ]
    ),
    st.builds(lambda c: {"type": "resume", "card": c}, cards),
    st.sampled_from([{"type": "card"}, {"type": "nope"}, {}, None]),
)
real_cards = st.builds(lambda c: {"type": "card", "card": c}, st.sampled_from(ALL_CARDS))
# Mostly what a dealer does (a short burn, then close_bets and four to six cards), mixed
# with single events of any kind, so that rounds get dealt and every rule gets exercised.
burn = st.sampled_from(
    [[{"type": "card", "card": c}, {"type": "card", "card": "2D"}] for c in ("AS", "AH", "AC")]
)
dealt_round = st.lists(real_cards, min_size=3, max_size=7).map(
    lambda cs: [{"type": "close_bets"}, *cs]
)
resume = st.just([{"type": "resume"}])
chunks = st.one_of(burn, dealt_round, dealt_round, dealt_round, resume, events.map(lambda e: [e]))
streams = st.lists(chunks, max_size=30).map(lambda cs: [e for chunk in cs for e in chunk])


def comparable(verdict: dict[str, Any]) -> dict[str, Any]:
    out = dict(verdict)
    if out["result"] is not None:
        out["result"] = {k: out["result"][k] for k in SPEC_RESULT_KEYS}
    return out


@settings(max_examples=400, deadline=None)
@given(
    stream=streams,
    decks=st.integers(1, 3),
    gated=st.booleans(),
    cut_policy=st.sampled_from(["one_more", "last_round"]),
)
def test_core_agrees_with_the_plain_baseline(
    stream: list[Any], decks: int, gated: bool, cut_policy: str
) -> None:
    core = Table(decks=decks, gated=gated, cut_policy=cut_policy)  # type: ignore[arg-type]
    plain = PlainTable(decks, gated, cut_policy)
    for seq, event in enumerate([{"type": "shoe"}, *stream], 1):
        expected = comparable(plain.handle(event))
        got = comparable(dict(core.apply(event)))
        assert got == expected, f"event {seq} {event}"

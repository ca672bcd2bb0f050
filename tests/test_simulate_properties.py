"""Property tests: the real `Table` against streams of the independent simulated dealer.

The dealer decides from the rules data alone, so agreement here is two implementations
agreeing, not one agreeing with itself. Example counts are bounded to keep the file fast.
"""

from __future__ import annotations

from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from drivers.sim.faults import applicable_faults
from drivers.sim.shoe import MIN_CUT_DEPTH
from drivers.sim.stream import simulate
from station.core.cards import BURN_VALUE
from station.core.games import CUT_POLICIES
from tests.simkit import check_each_verdict, replay_twice, shoes, table_for
from tests.test_simulated import drawn

PROPERTY = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def tables(draw: st.DrawFn) -> dict[str, Any]:
    """Simulator options: a seed, a table set-up and a cut card depth that fits the shoe."""
    decks = draw(st.integers(1, 8))
    depth = draw(
        st.one_of(
            st.integers(MIN_CUT_DEPTH, min(52 * decks - 1, 60)),
            st.floats(0.32, 0.9),  # a fraction: at least 16 cards behind even in one deck
        )
    )
    return {
        "seed": draw(st.integers(0, 2**64)),
        "decks": decks,
        "gated": draw(st.booleans()),
        # `stop` (the cercle games' policy) is the simulator's once branch games-sim lands.
        "cut_policy": draw(st.sampled_from([p for p in CUT_POLICIES if p != "stop"])),
        "cut_depth": depth,
        "shoes": draw(st.integers(1, 3 if decks <= 2 else 1)),
    }


@st.composite
def faulty_tables(draw: st.DrawFn) -> dict[str, Any]:
    options = draw(tables())
    names = applicable_faults(options["gated"])
    rate = st.floats(0.0, 0.4, allow_nan=False)
    options["faults"] = draw(st.dictionaries(st.sampled_from(names), rate, min_size=1))
    return options


def hands_in_dealing_order(result: dict[str, Any]) -> list[str]:
    player, banker = result["player"], result["banker"]
    return [player[0], banker[0], player[1], banker[1], *player[2:], *banker[2:]]


@PROPERTY
@given(tables())
def test_a_fault_free_stream_gives_no_error_and_every_shoe_finishes_by_the_rules(
    options: dict[str, Any],
) -> None:
    events = list(simulate(**options))
    assert not any("fault" in e or "expect" in e for e in events)
    assert {e["type"] for e in events} <= {"shoe", "card", "cut", "close_bets"}
    assert ("close_bets" in {e["type"] for e in events}) == options["gated"]
    split = list(shoes(events))
    assert len(split) == options["shoes"]
    table = table_for(options)
    for shoe in split:
        verdicts = [table.apply(e) for e in shoe]
        assert [v["error"] for v in verdicts] == [None] * len(shoe)
        # Finished by the rules: the cut card came out once, and its last round is done.
        assert not table.in_play
        assert [e["type"] for e in shoe].count("cut") == 1
        assert table.last_round == table.rounds_opened == len(table.results) > 0
        # The burn is the reveal's burn value, and every other card is in a hand, in order.
        cards = [e["card"] for e in shoe if e["type"] == "card"]
        burn = 1 + BURN_VALUE[cards[0]]
        assert table.burned == cards[:burn]
        dealt = [c for r in table.results for c in hands_in_dealing_order(dict(r))]
        assert dealt == cards[burn:]


@PROPERTY
@given(faulty_tables())
def test_every_verdict_of_a_fault_stream_is_the_error_its_event_expects(
    options: dict[str, Any],
) -> None:
    check_each_verdict(options, list(simulate(**options)))


@PROPERTY
@given(faulty_tables())
def test_replaying_the_same_stream_twice_gives_the_same_verdicts(options: dict[str, Any]) -> None:
    replay_twice(options, list(simulate(**options)))


@PROPERTY
@given(faulty_tables(), st.integers(0, 2**64))
def test_the_same_seed_gives_the_same_stream_and_another_seed_another(
    options: dict[str, Any], other: int
) -> None:
    def stream(**changes: Any) -> bytes:
        return b"\n".join(orjson.dumps(e) for e in simulate(**{**options, **changes}))

    assert stream() == stream()
    if other != options["seed"]:
        assert stream(seed=other) != stream()


@PROPERTY
@given(faulty_tables())
def test_faults_change_what_is_dealt_but_not_the_shoe(options: dict[str, Any]) -> None:
    # The cards of the first shoe, in the shoe's order.
    clean = drawn(next(shoes(list(simulate(**{**options, "faults": {}})))))
    noisy = drawn(next(shoes(list(simulate(**options)))))
    n = min(len(clean), len(noisy))
    assert clean[:n] == noisy[:n]

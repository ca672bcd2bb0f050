"""The table's own view of itself against the rules it replaced, over simulated streams.

`Table.due`, `Table.actions` and `Table.decide`'s suspension changes took over from
copies elsewhere: `due_role` in the snapshot module, `allowedNow` in the dashboard's
app.js, and comparing `table.suspension` before and after each event in the writer and
the journal's replay. Those old rules are kept here, as they were, and both must agree
on every event of simulated shoes with every fault, and of arbitrary event streams
(tests/test_differential.py's). The snapshot built incrementally (sharing the previous
snapshot's results and remaining cards) must equal one built from scratch.
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drivers.sim.stream import simulate
from station.core.snapshot import TableSnapshot, take
from station.core.table import Table
from tests.test_differential import streams


def old_due_role(table: Table) -> str | None:
    """`station.core.snapshot.due_role`, as it was."""
    if not table.in_play:
        return "shoe"
    if table.suspension is not None:
        return None
    if table.reveal_due:
        return "burn_reveal"
    if table.burns_due:
        return "burn"
    if table.round is not None and table.round.due is not None:
        return table.round.due
    return "close_bets" if table.gated else "P1"


def old_allowed_now(st: dict[str, Any]) -> tuple[str, ...]:
    """app.js `allowedNow`, as it was, over the published state."""
    round_in_progress = bool(st["round"])
    allowed = {
        "shoe": not st["in_play"],
        "close_bets": st["in_play"] and not st["suspension"] and st["due"] == "close_bets",
        "resume": bool(st["suspension"]),
        "void": bool(st["suspension"]) or round_in_progress,
        "end_shoe": st["in_play"],
    }
    return tuple(a for a in ("shoe", "close_bets", "resume", "void", "end_shoe") if allowed[a])


def check_stream(events: list[Any], **options: Any) -> None:
    """Run `events` through a table, checking its view against the old rules after each."""
    table = Table(**options)
    since: int | None = None
    snap: TableSnapshot | None = None
    for seq, event in enumerate(events, 1):
        before = table.suspension
        verdict, cleared, began = table.decide(event)
        after = table.suspension
        assert cleared == (before is not None and after is not before), (seq, event, verdict)
        assert began == (after is not None and after is not before), (seq, event, verdict)
        if began:
            since = seq
        elif cleared:
            since = None
        assert table.due() == old_due_role(table)
        snap = take(table, seq, "t", since, snap)
        fresh = take(table, seq, "t", since)
        state = snap.to_dict()
        assert state == fresh.to_dict()
        assert snap.actions == table.actions() == old_allowed_now(state), (seq, event)
        assert snap.results == fresh.results == tuple(table.results)
        assert dict(snap.remaining) == fresh.remaining == table.remaining()
        assert "results" not in state and "remaining" not in state
        if snap.suspension is not None:
            assert snap.suspension["since_seq"] == since and since is not None


@pytest.mark.parametrize("gated", [True, False])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_simulated_shoes_with_every_fault(seed: int, gated: bool) -> None:
    events = list(simulate(seed, decks=1, shoes=3, faults={"all": 0.08}, gated=gated))
    errors = {e.get("expect") for e in events}
    assert len(errors) > 4  # the faults did happen
    check_stream(events, decks=1, gated=gated)


@settings(max_examples=300, deadline=None)
@given(stream=streams, decks=st.integers(1, 2), gated=st.booleans())
def test_arbitrary_streams(stream: list[Any], decks: int, gated: bool) -> None:
    check_stream(stream, decks=decks, gated=gated)


def test_snapshots_share_what_did_not_change() -> None:
    table = Table(decks=1)
    snaps = [take(table, 0, "t", None)]
    for seq, event in enumerate(simulate(5, decks=1, shoes=2), 1):
        table.apply(event)
        snaps.append(take(table, seq, "t", None, snaps[-1]))
    pairs = list(pairwise(snaps))
    same_results = [a.results is b.results for a, b in pairs]
    assert sum(same_results) > len(pairs) * 0.7  # a round ends at one card in five or so
    for a, b in pairs:
        if a.results is b.results and a.results:  # (every empty tuple is the same one)
            assert a.rounds_complete == b.rounds_complete and a.shoes_started == b.shoes_started
        if a.remaining is b.remaining:
            assert a.cards_out - a.unreadable == b.cards_out - b.unreadable
    with pytest.raises(TypeError):
        snaps[-1].remaining["AS"] = 9  # type: ignore[index]  # published: read-only

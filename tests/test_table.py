"""The state machine against the spec: every error, every rejection, cut policies, gating,
supervisor actions, fault and restart."""

from __future__ import annotations

import pytest

from station.core.table import Table
from station.core.words import EXPLANATIONS
from tests.tablekit import BURNED, errors, event, play, roles

# A complete natural round after BURNED + close: player 9, banker 2.
NATURAL = ["9S", "KD", "TC", "2C"]
# A round where the player draws (5) and the banker (3) then draws on P3 = 2.
BOTH_DRAW = ["2H", "3D", "3H", "KS", "2D", "4C"]


def test_the_burn_reveal_sets_how_many_cards_are_burned() -> None:
    got = play(["shoe", "5H", "2S", "3S", "4S", "5S", "6S", "close"])
    assert roles(got) == [None, "burn_reveal", "burn", "burn", "burn", "burn", "burn", None]
    assert got[-1]["round"] == 1 and got[-1]["ok"]


@pytest.mark.parametrize("reveal", ["TH", "JH", "QH", "KH"])
def test_ten_and_faces_burn_ten(reveal: str) -> None:
    burns = ["AS", "2S", "3S", "4S", "5S", "6S", "7S", "8S", "9S"]
    got = play(["shoe", reveal, *burns, "close", "TS", "close"])
    assert errors(got) == [None] * 11 + ["BURN_INCOMPLETE", "CARD_WHILE_SUSPENDED", "SUSPENDED"]
    table = Table()
    play(["shoe", reveal, *burns, "TS", "close"], table)
    assert table.round is not None and table.round.number == 1


def test_unexpected_card_between_rounds_and_before_betting_closed() -> None:
    got = play([*BURNED, "close", *NATURAL, "7H"])
    assert got[-1] == {
        "ok": False,
        "error": "UNEXPECTED_CARD",
        "role": None,
        "round": None,
        "result": None,
        "voided_round": None,
    }


def test_burn_excess_before_round_one_then_unexpected_after() -> None:
    assert errors(play([*BURNED, "7H"]))[-1] == "BURN_EXCESS"
    got = play([*BURNED, "close", "void", "7H"])
    assert got[-2]["voided_round"] == 1
    assert errors(got)[-1] == "UNEXPECTED_CARD"


def test_burn_incomplete_and_missing_card_suspend() -> None:
    got = play(["shoe", "close", "resume"])
    assert errors(got) == [None, "BURN_INCOMPLETE", None]
    got = play(["shoe", "3H", "2S", "close"])
    assert errors(got)[-1] == "BURN_INCOMPLETE"
    got = play([*BURNED, "close", "9S", "KD", "TC", "close", "2C"])
    assert errors(got)[-2:] == ["MISSING_CARD", "CARD_WHILE_SUSPENDED"]


def test_resume_expects_what_was_expected_before_the_error() -> None:
    table = Table()
    got = play([*BURNED, "close", "9S", "KD", "TC", "close", "resume", "2C"], table)
    assert errors(got)[-3:] == ["MISSING_CARD", None, None]
    assert got[-1]["role"] == "B2" and got[-1]["result"] is not None


def test_flagged_cards_stay_discarded_after_resume() -> None:
    got = play([*BURNED, "close", "9S", "fault", "KD", "resume", "KH", "TC", "2C"])
    assert errors(got) == [None] * 5 + [
        "SCANNER_FAULT",
        "CARD_WHILE_SUSPENDED",
        None,
        None,
        None,
        None,
    ]
    result = got[-1]["result"]
    assert result is not None and result["banker"] == ["KH", "2C"]


def test_unreadable_card_resumed_with_the_card_read_by_eye() -> None:
    table = Table()
    got = play([*BURNED, "close", "9S", "?", "resume:kd", "TC", "2C"], table)
    assert errors(got)[5] == "UNREADABLE_CARD"
    assert got[6]["role"] == "B1" and got[6]["round"] == 1
    result = got[-1]["result"]
    assert result is not None and result["banker"] == ["KD", "2C"]
    assert table.copies["KD"] == 1 and table.unreadable == 1


def test_resume_with_a_card_that_is_wrong_suspends_again() -> None:
    got = play([*BURNED, "close", *NATURAL, "?", "resume:7H", "resume"])
    assert errors(got)[-3:] == ["UNREADABLE_CARD", "UNEXPECTED_CARD", None]


@pytest.mark.parametrize("value", ["", "??", "1S", "AX", 7, [], {}])
def test_values_that_are_not_card_codes_are_unreadable(value: object) -> None:
    table = Table()
    play(BURNED, table)
    assert table.apply({"type": "card", "card": value})["error"] == "UNREADABLE_CARD"
    assert table.apply({"type": "resume", "card": None})["ok"]
    assert table.apply({"type": "resume", "card": value})["error"] == "NOT_SUSPENDED"


def test_excess_copies_counts_every_identified_card_whatever_its_verdict() -> None:
    # One deck: the AS is the reveal; a second AS is foreign even though it is flagged.
    got = play(["shoe", "AS", "2S", "AS", "resume", "AS"], decks=1)
    assert errors(got) == [None, None, None, "EXCESS_COPIES", None, "EXCESS_COPIES"]
    # Cards flagged for another reason count too: this AS was UNEXPECTED, the next is foreign.
    got = play([*BURNED, "close", *NATURAL, "AH", "resume", "close", "AH", "AH"], decks=2)
    assert errors(got)[-5:] == ["UNEXPECTED_CARD", None, None, None, "EXCESS_COPIES"]


def test_excess_copies_is_checked_before_suspension_and_unreadable_after_it() -> None:
    got = play(["shoe", "AS", "fault", "AS", "?"], decks=1)
    assert errors(got)[-2:] == ["EXCESS_COPIES", "UNREADABLE_CARD"]


def test_card_while_suspended() -> None:
    got = play([*BURNED, "fault", "7H", "resume", "close", "7H"])
    assert errors(got) == [
        None,
        None,
        None,
        "SCANNER_FAULT",
        "CARD_WHILE_SUSPENDED",
        None,
        None,
        None,
    ]
    assert got[-1]["role"] == "P1"


def test_fault_and_restart_suspend_only_while_a_shoe_is_in_play() -> None:
    assert errors(play(["fault", "restart"])) == [None, None]
    assert errors(play(["shoe", "restart", "close"])) == [None, "STATION_RESTART", "SUSPENDED"]


def test_rejections_change_nothing() -> None:
    assert errors(play(["AS", "cut", "close", "end"])) == ["NO_ACTIVE_SHOE"] * 4
    assert errors(play(["shoe", "shoe"])) == [None, "SHOE_ACTIVE"]
    assert errors(play(["shoe", "resume"])) == [None, "NOT_SUSPENDED"]
    assert errors(play(["shoe", "fault", "close", "close"])) == [
        None,
        "SCANNER_FAULT",
        "SUSPENDED",
        "SUSPENDED",
    ]


@pytest.mark.parametrize(
    "event",
    [
        None,
        [],
        "card",
        7,
        {},
        {"type": "deal"},
        {"type": None},
        {"type": ["card"]},
        {"card": "AS"},
        {"type": "card"},
    ],
)
def test_bad_input(event: object) -> None:
    table = Table()
    table.apply({"type": "shoe"})
    verdict = table.apply(event)
    assert verdict["error"] == "BAD_INPUT" and not verdict["ok"]
    assert table.suspension is None


def test_void_discards_the_round_in_progress_and_its_number() -> None:
    table = Table()
    got = play([*BURNED, "close", "9S", "KD", "void", "close", *NATURAL], table)
    assert got[6]["voided_round"] == 1
    assert got[7]["round"] == 2
    result = got[-1]["result"]
    assert result is not None and result["round"] == 2 and result["player"] == ["9S", "TC"]
    assert table.voided == [1]


def test_void_never_touches_a_completed_round_and_is_ok_without_a_shoe() -> None:
    got = play([*BURNED, "close", *NATURAL, "void"])
    assert got[-1] == {
        "ok": True,
        "error": None,
        "role": None,
        "round": None,
        "result": None,
        "voided_round": None,
    }
    assert play(["void"])[0]["ok"]


def test_void_clears_a_suspension_during_the_burn_and_the_burn_goes_on() -> None:
    got = play(["shoe", "3H", "2S", "fault", "void", "4S", "5S", "close"])
    assert errors(got) == [None, None, None, "SCANNER_FAULT", None, None, None, None]
    assert roles(got)[5:7] == ["burn", "burn"]


def test_end_shoe_voids_the_round_and_clears_the_suspension() -> None:
    table = Table()
    got = play([*BURNED, "close", "9S", "fault", "end", "AS", "shoe"], table)
    assert got[6]["voided_round"] == 1
    assert errors(got)[-2:] == ["NO_ACTIVE_SHOE", None]
    assert table.suspension is None and table.rounds_opened == 0


# -- the cut card ---------------------------------------------------------------------------


def rounds_until_finished(words: list[str], **options: object) -> tuple[Table, list[int]]:
    table = Table(**options)  # type: ignore[arg-type]
    play(words, table)
    return table, [r["round"] for r in table.results]


@pytest.mark.parametrize("policy", ["one_more", "last_round"])
def test_cut_during_the_burn_makes_round_one_the_last(policy: str) -> None:
    table, done = rounds_until_finished(
        ["shoe", "AS", "cut", "2S", "close", *NATURAL], cut_policy=policy
    )
    assert done == [1] and not table.in_play
    assert errors(play(["close"], table)) == ["NO_ACTIVE_SHOE"]


def test_cut_mid_round_one_more() -> None:
    words = [*BURNED, "close", "9S", "cut", "KD", "TC", "2C", "close", *NATURAL, "close"]
    table, done = rounds_until_finished(words)
    assert done == [1, 2] and not table.in_play


def test_cut_mid_round_last_round() -> None:
    words = [*BURNED, "close", "9S", "cut", "KD", "TC", "2C", "close"]
    got = play(words, cut_policy="last_round")
    assert errors(got)[-1] == "NO_ACTIVE_SHOE"
    assert got[-2]["result"] is not None


@pytest.mark.parametrize("policy", ["one_more", "last_round"])
def test_cut_after_close_bets_before_any_card_makes_that_round_the_last(policy: str) -> None:
    table, done = rounds_until_finished([*BURNED, "close", "cut", *NATURAL], cut_policy=policy)
    assert done == [1] and not table.in_play


def test_cut_between_rounds_makes_the_next_round_the_last() -> None:
    table, done = rounds_until_finished([*BURNED, "close", *NATURAL, "cut", "close", *BOTH_DRAW])
    assert done == [1, 2] and not table.in_play


def test_cut_while_suspended_counts_and_only_the_first_cut_counts() -> None:
    words = [*BURNED, "close", "9S", "fault", "cut", "resume", "KD", "cut", "TC", "2C"]
    table, done = rounds_until_finished(words, cut_policy="last_round")
    assert done == [1] and not table.in_play and table.last_round == 1


def test_voiding_the_last_round_finishes_the_shoe() -> None:
    got = play([*BURNED, "close", "9S", "cut", "void", "close"], cut_policy="last_round")
    assert got[-2]["voided_round"] == 1
    assert errors(got)[-1] == "NO_ACTIVE_SHOE"


def test_a_flagged_card_does_not_make_a_round_being_dealt() -> None:
    # The only card out is flagged, so the round has no placed card: it is the last one.
    table, done = rounds_until_finished([*BURNED, "close", "?", "cut", "resume", *NATURAL])
    assert done == [1] and not table.in_play


# -- gating off -----------------------------------------------------------------------------


def test_ungated_the_first_card_opens_a_round_and_close_bets_changes_nothing() -> None:
    got = play([*BURNED, "close", *NATURAL, "close", "close", *BOTH_DRAW], gated=False)
    assert errors(got) == [None] * len(got)
    assert [v["round"] for v in got[4:8]] == [1, 1, 1, 1]
    assert [v["round"] for v in got[10:]] == [2] * 6
    assert got[3]["round"] is None  # close_bets opened nothing


def test_ungated_close_bets_is_ok_while_suspended_and_mid_burn() -> None:
    got = play(["shoe", "close", "5H", "close", "fault", "close"], gated=False)
    assert errors(got) == [None, None, None, None, "SCANNER_FAULT", None]
    assert errors(play(["close"], gated=False)) == ["NO_ACTIVE_SHOE"]


def test_ungated_cut_mid_round_one_more() -> None:
    words = [*BURNED, "9S", "KD", "cut", "TC", "2C", *BOTH_DRAW, "7H"]
    got = play(words, gated=False)
    assert errors(got)[-1] == "NO_ACTIVE_SHOE"


def test_every_code_has_an_explanation() -> None:
    from station.core import verdicts

    for code in (*verdicts.ERRORS, *verdicts.REJECTIONS):
        assert EXPLANATIONS[code]


def test_expecting_describes_the_next_step() -> None:
    table = Table()
    assert table.expecting() == "new shoe"
    play(["shoe"], table)
    assert table.expecting() == "burn reveal card"
    play(["3H", "2S"], table)
    assert table.expecting() == "burn card (2 to go)"
    play(["4S", "5S", "close", "2H", "3D", "3H", "KS"], table)
    assert table.expecting() == "player third card"
    play(["fault"], table)
    assert table.expecting().startswith("supervisor")


def test_remaining_counts_what_is_left_in_the_shoe() -> None:
    table = Table(decks=2)
    play([*BURNED, "close", *NATURAL], table)
    remaining = table.remaining()
    assert sum(remaining.values()) == 104 - 6
    assert remaining["AS"] == 1 and remaining["KH"] == 2


def test_remaining_never_counts_a_foreign_copy_below_zero() -> None:
    table = Table(decks=1)
    got = play(["shoe", "AS", "AS"], table)  # the second AS is a foreign card
    assert errors(got)[-1] == "EXCESS_COPIES"
    remaining = table.remaining()
    assert remaining["AS"] == 0
    assert sum(remaining.values()) == 51


def test_table_options_are_checked() -> None:
    with pytest.raises(ValueError, match="decks"):
        Table(decks=0)
    with pytest.raises(ValueError, match="cut_policy"):
        Table(cut_policy="never")  # type: ignore[arg-type]


# -- the suspension's changes, as the table itself reports them (`Table.decide`) -----------


def changes(steps: list[object], table: Table) -> list[str]:
    """What each event did to the suspension: "began", "cleared", "cleared began" or "".
    A step is a tests.tablekit word or, if not a string, the raw event itself."""
    out = []
    for step in steps:
        _, cleared, began = table.decide(event(step) if isinstance(step, str) else step)
        out.append(" ".join(w for w, on in (("cleared", cleared), ("began", began)) if on))
    return out


#: A way to each error that suspends the table (a one-deck table: EXCESS_COPIES is cheap).
TO_ERROR = {
    "UNEXPECTED_CARD": [*BURNED, "close", *NATURAL, "7H"],
    "BURN_EXCESS": [*BURNED, "7H"],
    "BURN_INCOMPLETE": ["shoe", "AS", "close"],
    "MISSING_CARD": [*BURNED, "close", "9S", "close"],
    "EXCESS_COPIES": [*BURNED, "close", "9S", "9S"],
    "UNREADABLE_CARD": [*BURNED, "?"],
    "SCANNER_FAULT": [*BURNED, "close", "9S", "fault"],
    "STATION_RESTART": [*BURNED, "restart"],
}
#: Every way out of a suspension, and what the table reports for it.
WAYS_OUT = {"resume": "cleared", "resume:?": "cleared began", "void": "cleared", "end": "cleared"}


@pytest.mark.parametrize("way_out", WAYS_OUT)
@pytest.mark.parametrize("code", TO_ERROR)
def test_the_table_says_when_a_suspension_begins_and_when_it_is_cleared(
    code: str, way_out: str
) -> None:
    table = Table(decks=1)
    steps = TO_ERROR[code]
    assert changes(list(steps), table) == [""] * (len(steps) - 1) + ["began"]
    assert table.suspension is not None and table.suspension.code == code
    # Every later error, and every rejection, while suspended: the same suspension.
    later: list[object] = [
        "8H",
        "?",
        "fault",
        "restart",
        "close",
        "shoe",
        None,
        {"type": "nope"},
        {"type": "card"},
        "cut",
    ]
    assert changes(later, table) == [""] * len(later)
    assert [c for c, _ in table.suspension.later] == [
        "CARD_WHILE_SUSPENDED",
        "UNREADABLE_CARD",
        "SCANNER_FAULT",
        "STATION_RESTART",
    ]
    assert changes([way_out], table) == [WAYS_OUT[way_out]]
    assert (table.suspension is not None) == WAYS_OUT[way_out].endswith("began")
    if table.suspension is not None:  # a resume whose card is unreadable: a new one began
        assert table.suspension.code == "UNREADABLE_CARD" and not table.suspension.later


def test_a_resume_with_a_bad_card_clears_one_suspension_and_begins_the_next() -> None:
    table = Table(decks=1)
    changes([*BURNED, "close", "9S", "fault"], table)
    assert changes(["resume:9S"], table) == ["cleared began"]  # a second 9S in one deck
    assert table.suspension is not None and table.suspension.code == "EXCESS_COPIES"
    assert changes(["resume:KD"], table) == ["cleared"]
    assert table.suspension is None and table.round is not None and table.round.banker == ["KD"]


def test_rejections_and_quiet_events_never_begin_or_clear_a_suspension() -> None:
    table = Table()
    idle: list[object] = [
        "close",
        "AS",
        "end",
        "resume",
        "void",
        "fault",
        "restart",
        "cut",
        None,
        {"type": "nope"},
    ]
    assert changes(idle, table) == [""] * len(idle)
    dealing = [
        "shoe",
        "shoe",
        "resume",
        "void",
        "AS",
        "2S",
        "close",
        "9S",
        "void",
        "cut",
        "close",
        *NATURAL,
    ]
    assert changes(list(dealing), table) == [""] * len(dealing)
    assert table.voided == [1] and len(table.results) == 1


def test_ungated_a_suspension_begins_and_clears_the_same_way() -> None:
    table = Table(gated=False)
    assert changes([*BURNED, "9S", "fault", "close", "resume"], table) == [
        "",
        "",
        "",
        "",
        "began",
        "",
        "cleared",
    ]


def test_decide_gives_apply_s_verdict() -> None:
    words = [*BURNED, "close", "9S", "?", "resume:KD", "TC", "2C", "7H", "void", "end"]
    decided = Table()
    assert [decided.decide(event(w)).verdict for w in words] == play(words)

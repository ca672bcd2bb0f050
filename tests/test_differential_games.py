"""The core against the plain oracle of every game (benchmarks/plain_games.py).

The two share no code. Hypothesis drives both with streams of two kinds and they must
agree on every verdict: the simulated dealer's streams of chemin de fer and baccarat
banque (faults and the supervisor's reactions included) with random perturbations
(events inserted, dropped or repeated: decisions of any hand, well-formed or not,
resumes carrying decisions and cards, cut cards, voids...), and careless streams built
from dealt rounds and single events of any kind.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.plain_games import PlainGameTable
from drivers.sim.faults import applicable_faults
from drivers.sim.shoe import MIN_CUT_DEPTH
from drivers.sim.stream import simulate
from station.core.cards import ALL_CARDS
from station.core.table import Table

GAMES = ("punto_banco", "chemin_de_fer", "baccarat_banque")
DIFFERENTIAL = settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

RESULT_KEYS = {
    "punto_banco": ("round", "player", "banker", "player_total", "banker_total", "winner"),
    "chemin_de_fer": ("round", "player", "banker", "player_total", "banker_total", "winner"),
    "baccarat_banque": (
        "round",
        "tableau1",
        "tableau2",
        "banker",
        "tableau1_total",
        "tableau2_total",
        "banker_total",
        "tableau1_outcome",
        "tableau2_outcome",
        "naturals",
    ),
}
VERDICT_KEYS = ("ok", "error", "role", "round", "result", "voided_round")

cards = st.sampled_from([*ALL_CARDS[:12], "AS", "2S", "3S", "4S", "5S", "10h", " kd ", None, "??"])
hands = st.sampled_from(["player", "banker", "tableau1", "tableau2", None, "ponte", 2])
draws = st.sampled_from([True, False, True, False, 1, "yes", None])


@st.composite
def decision_objects(draw: st.DrawFn) -> Any:
    """A decision as an event or a resume carries it: usually well-formed, not always."""
    shape = draw(st.sampled_from(["both", "both", "both", "draw only", "hand only", "junk"]))
    if shape == "junk":
        return draw(st.sampled_from([5, "draw", [], True]))
    out: dict[str, Any] = {}
    if shape != "draw only":
        out["hand"] = draw(hands)
    if shape != "hand only":
        out["draw"] = draw(draws)
    if draw(st.booleans()):
        out["note"] = "extra keys are ignored"
    return out


def decision_event(value: Any) -> Any:
    return {"type": "decision", **value} if isinstance(value, dict) else {"type": "decision"}


@st.composite
def resumes(draw: st.DrawFn) -> dict[str, Any]:
    event: dict[str, Any] = {"type": "resume"}
    if draw(st.booleans()):
        event["decision"] = draw(st.one_of(st.none(), decision_objects()))
    if draw(st.booleans()):
        event["card"] = draw(cards)
    return event


events = st.one_of(
    st.builds(lambda c: {"type": "card", "card": c}, cards),
    decision_objects().map(decision_event),
    resumes(),
    st.sampled_from(
        [{"type": t} for t in ("shoe", "cut", "close_bets", "void", "end_shoe", "fault", "restart")]
    ),
    st.sampled_from([{"type": "card"}, {"type": "nope"}, {}, None]),
)
real_cards = st.builds(lambda c: {"type": "card", "card": c}, st.sampled_from(ALL_CARDS))


def good_decision(hand: str | None, draw: bool) -> dict[str, Any]:
    return {"type": "decision", "draw": draw, **({"hand": hand} if hand else {})}


good_decisions = st.builds(
    good_decision,
    st.sampled_from(["player", "banker", "tableau1", "tableau2", None]),
    st.booleans(),
)
dealt_round = st.lists(
    st.one_of(real_cards, real_cards, real_cards, good_decisions), min_size=4, max_size=11
).map(lambda es: [{"type": "close_bets"}, *es])
chunks = st.one_of(
    dealt_round,
    dealt_round,
    st.just([{"type": "resume"}]),
    resumes().map(lambda e: [e]),
    events.map(lambda e: [e]),
)
careless = st.lists(chunks, max_size=25).map(lambda cs: [e for chunk in cs for e in chunk])


def comparable(game: str, verdict: Any) -> dict[str, Any]:
    out = {key: verdict[key] for key in VERDICT_KEYS}
    if out["result"] is not None:
        out["result"] = {key: out["result"][key] for key in RESULT_KEYS[game]}
    return out


def agree(options: dict[str, Any], stream: list[Any]) -> None:
    """The core and the oracle give the same verdict on every event of `stream`."""
    game = options["game"]
    core = Table(
        game=game,
        decks=options["decks"],
        gated=options["gated"],
        cut_policy=options["cut_policy"],
        burn=options["burn"],
    )
    plain = PlainGameTable(
        game, options["decks"], options["gated"], options["cut_policy"], options["burn"]
    )
    for seq, event in enumerate(stream, 1):
        expected = comparable(game, plain.handle(event))
        got = comparable(game, core.apply(event))
        assert got == expected, f"event {seq} {event}"


@st.composite
def setups(draw: st.DrawFn, games: tuple[str, ...] = GAMES) -> dict[str, Any]:
    return {
        "game": draw(st.sampled_from(games)),
        "decks": draw(st.integers(1, 3)),
        "gated": draw(st.booleans()),
        "cut_policy": draw(st.sampled_from(["one_more", "last_round", "stop"])),
        "burn": draw(st.sampled_from(["reveal", "none"])),
    }


@DIFFERENTIAL
@given(data=st.data())
def test_the_core_agrees_with_the_oracle_on_perturbed_simulated_streams(
    data: st.DataObject,
) -> None:
    options = data.draw(setups(("chemin_de_fer", "baccarat_banque")))
    names = applicable_faults(options["gated"], options["game"], options["burn"])
    faults = data.draw(st.dictionaries(st.sampled_from(names), st.floats(0.0, 0.3), max_size=4))
    if data.draw(st.booleans()):  # many held cards, so many resumes with a decision
        faults["decision_missing"] = data.draw(st.sampled_from([0.5, 1.0]))
    stream: list[Any] = list(
        simulate(
            data.draw(st.integers(0, 2**32)),
            shoes=data.draw(st.integers(1, 2)),
            cut_depth=data.draw(st.integers(MIN_CUT_DEPTH, 40)),
            faults=faults,
            option_draw=data.draw(st.sampled_from([0.2, 0.5, 0.8])),
            **options,
        )
    )
    for _ in range(data.draw(st.integers(0, 12))):
        at = data.draw(st.integers(0, len(stream)))
        change = data.draw(st.sampled_from(["insert", "insert", "drop", "repeat", "tamper"]))
        if change == "insert":
            stream.insert(at, data.draw(events))
        elif change == "tamper":
            # The supervisor's resume, given another decision (or none) and maybe a card.
            resuming = [
                i for i, e in enumerate(stream) if isinstance(e, dict) and e.get("type") == "resume"
            ]
            if resuming:
                at = data.draw(st.sampled_from(resuming))
                stream[at] = {**stream[at], "decision": data.draw(decision_objects())}
                if data.draw(st.booleans()):
                    stream[at]["card"] = data.draw(cards)
        elif stream and at < len(stream):
            if change == "drop":
                del stream[at]
            else:
                stream.insert(at, stream[at])
    agree(options, stream)


@DIFFERENTIAL
@given(setup=setups(), stream=careless)
def test_the_core_agrees_with_the_oracle_on_careless_streams(
    setup: dict[str, Any], stream: list[Any]
) -> None:
    agree(setup, [{"type": "shoe"}, *stream])

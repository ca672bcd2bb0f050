"""The table's words for people: what each verdict code means, and what the table waits
for.

Data, not rules: the dashboard's banner and buttons (`/api/explanations`), the terminal,
the journal's log lines, the webhooks and the floor all show these same words for a
code, so a supervisor reads one sentence wherever the table speaks.
"""

from __future__ import annotations

from station.core import events as ev
from station.core.games import GAMES
from station.core.verdicts import (
    BAD_INPUT,
    BURN_EXCESS,
    BURN_INCOMPLETE,
    CARD_WHILE_SUSPENDED,
    DECISION_MISSING,
    DECISION_NOT_ALLOWED,
    EXCESS_COPIES,
    MISSING_CARD,
    NO_ACTIVE_SHOE,
    NOT_SUSPENDED,
    SCANNER_FAULT,
    SHOE_ACTIVE,
    STATION_RESTART,
    SUSPENDED,
    UNEXPECTED_CARD,
    UNREADABLE_CARD,
)

#: What each code means, for people: the dashboard banner, the terminal, the journal.
EXPLANATIONS: dict[str, str] = {
    UNEXPECTED_CARD: "a card came out when none was due (an extra card, or before betting closed)",
    BURN_EXCESS: "a card came out after the burn was complete, before betting closed",
    BURN_INCOMPLETE: "betting was closed before the burn was complete",
    MISSING_CARD: "betting was closed while the round still had a card due",
    EXCESS_COPIES: "more copies of this card came out than the shoe holds (a foreign card)",
    UNREADABLE_CARD: "the reader could not identify the card",
    CARD_WHILE_SUSPENDED: "a card came out while the table was suspended",
    SCANNER_FAULT: "the card reader failed or was disconnected",
    STATION_RESTART: "the station restarted during the shoe; cards may have come out unseen",
    DECISION_MISSING: "a card came out while a hand's option waited for its decision (the "
    "card is held: resume with the decision to place it)",
    NO_ACTIVE_SHOE: "no shoe is in play: start a shoe first",
    SHOE_ACTIVE: "a shoe is already in play: end it first",
    SUSPENDED: "the table is suspended: a supervisor must resume it or void the round",
    NOT_SUSPENDED: "the table is not suspended",
    BAD_INPUT: "not a valid event",
    DECISION_NOT_ALLOWED: "that hand cannot decide that now (not its turn, or the rules or "
    "an earlier decision say otherwise)",
}


#: The roles of a round's cards in a supervisor's words, every game's (a role code means
#: the same card in every game that has it).
ROLE_WORDS: dict[str, str] = {
    role: words for game in GAMES.values() for role, words in game.role_words.items()
}

#: What the table waits for (`Table.due`) in a supervisor's words; None: suspended.
DUE_WORDS: dict[str | None, str] = {
    "shoe": "new shoe",
    None: "supervisor (resume or void)",
    "burn_reveal": "burn reveal card",
    "burn": "burn card",
    "close_bets": "close bets",
    ev.DECISION: "a hand's decision (draw or stand)",
}
DUE_WORDS.update(ROLE_WORDS.items())

"""Game protection (issue 15): pre-arranged or repeated shoes, weak shuffles.

Pure statistics and bookkeeping over the card order of the journal (burns included):
`sequence` finds runs in the order of an earlier shoe or of a new deck, `shuffle`
scores how well a shoe was shuffled from the previous one's discards, `watch` turns
committed events and verdicts into alerts. The live station (`station.live.protection.monitor`)
and `station protect` drive `Protector`; neither decides anything the rules core does.
"""

from station.core.protection.sequence import (
    FALSE_ALARM_BUDGET,
    NEW_DECK_ORDER,
    History,
    MemoryHistory,
    SequenceMatch,
    SequenceWatch,
    run_length,
)
from station.core.protection.shuffle import DEFAULT_THRESHOLD, ShuffleScore, shuffle_score
from station.core.protection.watch import (
    ALERT_CODES,
    SHOE_SEQUENCE,
    WEAK_SHUFFLE,
    Alert,
    Protector,
)

__all__ = [
    "ALERT_CODES",
    "DEFAULT_THRESHOLD",
    "FALSE_ALARM_BUDGET",
    "NEW_DECK_ORDER",
    "SHOE_SEQUENCE",
    "WEAK_SHUFFLE",
    "Alert",
    "History",
    "MemoryHistory",
    "Protector",
    "SequenceMatch",
    "SequenceWatch",
    "ShuffleScore",
    "run_length",
    "shuffle_score",
]

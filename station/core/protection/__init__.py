"""Game protection (issues 15 and 28): pre-arranged or repeated shoes, weak shuffles.

Pure statistics and bookkeeping over the card order of the journal (burns included):
`sequence` finds runs in the order of an earlier shoe or of a new deck; `riffle` scores
how much of the previous shoe's order a shoe kept (how many riffles it is of the
discards), `riffle_null` is that score's fair-shuffle distribution (simulated) and
`shuffle` decides from them; `watch` turns committed events and verdicts into alerts.
The live station (`station.live.protection.monitor`) and `station protect` drive
`Protector`; neither decides anything the rules core does.
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
from station.core.protection.shuffle import (
    DEFAULT_THRESHOLD,
    DealtShoe,
    ShuffleScore,
    shuffle_score,
)
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
    "DealtShoe",
    "History",
    "MemoryHistory",
    "Protector",
    "SequenceMatch",
    "SequenceWatch",
    "ShuffleScore",
    "run_length",
    "shuffle_score",
]

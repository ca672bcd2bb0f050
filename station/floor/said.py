"""What a floor alert says, twice: a language-free `code` with the figures its words need
(`params`: rows, hashes' prefixes, a table's id, a count), which the floor view turns into
the supervisor's language from its catalogue (`said.<code>`), and the English `message`
kept for the logs, the archive's history and older clients.

Why apart: the archive, the key checks, the witness and the protection thread all raise
alerts; one list of codes and their figures is what the catalogue and its test hold them
to (a code added here without its words in every language fails tests/test_catalogue.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

#: Each code and the figures its words take (the catalogue's `said.<code>` placeholders).
CODES: dict[str, tuple[str, ...]] = {
    "malformed": ("detail",),
    "altered": ("seq",),
    "gap_row": ("seq", "head", "missing"),
    "gap_rows": ("seq", "head", "from", "to"),
    "chain": ("seq", "head", "prev", "expected"),
    "chain_after_gap": ("seq", "head"),
    "conflict": ("seq", "hash", "have"),
    "conflict_unarchived": ("seq", "hash"),
    "late": ("seq", "by", "from", "to", "at"),
    "epoch_restored": ("seq", "prev", "head", "number", "before"),
    "epoch_discontinuity": ("seq", "prev", "head", "number", "before"),
    "rollback": ("seq", "prev", "head"),
    "rollback_beat": ("table", "seq", "hash", "archived"),
    "forged_row": ("seq",),
    "forged_bad_key": ("seq", "detail"),
    "forged_other_key": ("seq", "named", "fp"),
    "forged_handover": ("seq", "named", "fp"),
    "forged_named_unsigned": ("seq", "fp"),
    "forged_config": ("seq", "fp"),
    "forged_set": ("seq", "fp"),
    "forged_unsigned": ("seq", "fp"),
    "forged_bad_signature": ("seq", "fp"),
    "key_waits": (),
    "key_unknown": ("seq",),
    "key_named": ("seq", "fp"),
    "held_full_pending": ("table", "bound"),
    "held_full_unsigned": ("table", "bound"),
    "forged_heartbeat_unsigned": ("table", "fp", "count"),
    "forged_heartbeat_bad_signature": ("table", "fp", "count"),
    "forged_alert_unsigned": ("table", "fp", "count"),
    "forged_alert_bad_signature": ("table", "fp", "count"),
    "stale_not_iso": ("table", "ts", "count"),
    "stale_replayed": ("table", "ts", "last", "count"),
    "stale_behind": ("table", "ts", "age", "window", "count"),
    "stale_ahead": ("table", "ts", "age", "skew", "count"),
    "protection_off": ("error",),
    # Why the floor cannot show a table's state (its line's `problem`), not alerts:
    "problem_rules": ("seq",),
    "problem_settings": ("detail",),
    "unsure_epoch": ("seq",),
    "unsure_row": ("missing",),
    "unsure_rows": ("from", "to"),
    "unsure_chain": ("seq",),
}
#: Codes whose figures are a game-protection alert's own (the notice's fields: its code,
#: shoe, run, earlier shoe...), put into words by the screens' `alertSentence`.
PROTECTION_CODES = ("station_protection", "floor_protection")


@dataclass(frozen=True, slots=True)
class Said:
    """An alert's code and figures (for the screens) and its English words (for logs); a
    heartbeat's reason to be refused too, whose figures its alert adds to."""

    code: str
    message: str
    params: Mapping[str, Any] = field(default_factory=dict)

    def fits(self) -> bool:
        """Whether its figures are the ones its code's words take: what `raise_alert`
        stores as its code (one that does not, a bug of the floor's, is stored without a
        code and shown as its message: an alert is never lost to its words)."""
        if self.code in PROTECTION_CODES:
            return True
        wanted = CODES.get(self.code)
        return wanted is not None and set(wanted) == set(self.params)

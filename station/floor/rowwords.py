"""What the archive says of a row it holds instead of archiving (a message that is no row,
a row changed on the way, one that does not link or comes again with other contents, one
its table's key did not sign): each as a code with its figures and the English words
(`station.floor.said`).

Why apart from the archive: the archive decides that a row is held; how that is said, in
the floor view's languages and in the log, is kept here, beside nothing else.
"""

from __future__ import annotations

from station.floor.said import Said

#: A signed row of a table whose key waits for a supervisor, the key check naming none.
KEY_WAITS = Said("key_waits", "the table's key waits for a supervisor")


def malformed(exc: Exception) -> Said:
    """A message at a table's subject that is not a journal row (`exc`: why)."""
    words = f"a message that is not a journal row ({exc}); it is held, not archived"
    return Said("malformed", words, {"detail": str(exc)})


def altered(seq: int) -> Said:
    """Row `seq`, whose hash does not match its contents."""
    words = (
        f"row {seq}: its hash does not match its contents (changed on the way or in the "
        "journal); it is held, not archived"
    )
    return Said("altered", words, {"seq": seq})


def chain(seq: int, head_seq: int, prev_hash: str, head_hash: str) -> Said:
    """Row `seq`, whose `prev_hash` is not the hash of the archive's last row `head_seq`."""
    words = (
        f"row {seq} does not link to row {head_seq} (its prev_hash {prev_hash[:12]}… is not "
        f"{head_hash[:12]}…): the chain is broken; the row and every later one are held, "
        "not archived"
    )
    figures = {"seq": seq, "head": head_seq, "prev": prev_hash[:12], "expected": head_hash[:12]}
    return Said("chain", words, figures)


def chain_after_gap(seq: int, head_seq: int) -> Said:
    """Row `seq`, held after a gap now filled, which does not link to row `head_seq`."""
    words = (
        f"row {seq} (held after a gap) does not link to row {head_seq}: the chain is "
        "broken; it stays held"
    )
    return Said("chain_after_gap", words, {"seq": seq, "head": head_seq})


def unsigned(seq: int) -> Said:
    """A row's words when the key check gave none: its table's key did not sign it."""
    return Said("forged_row", f"row {seq} is not signed by the table's key", {"seq": seq})


def conflict(seq: int, digest: str, have: str | None) -> Said:
    """Row `seq` again with other contents (`digest`) than the archived one (`have`)."""
    message = (
        f"row {seq} arrived again with other contents (hash {digest[:12]}…, the "
        f"archive has {have[:12] if have else 'none'}…): the table's journal "
        "was changed or replaced; the new row is held, not archived"
    )
    if have is None:
        return Said("conflict_unarchived", message, {"seq": seq, "hash": digest[:12]})
    return Said("conflict", message, {"seq": seq, "hash": digest[:12], "have": have[:12]})

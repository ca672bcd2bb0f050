"""What the publisher asks of the JetStream stream, and what the stream's answers mean:
whether it takes the table's subject, where the table's rows end in it, and its replies to
a publish.

Why apart from the publishing: where to resume is decided by the stream, not by what the
publisher believes it sent. At start and after any error the publisher asks for the
table's last message in the stream (`last_held`, the one message a station's broker login
may read back). What it is decides what happens:
- this journal's row at that seq (same hash): publishing resumes after it;
- a row signed by this station's key that this journal does not have, the journal being
  restored from a backup that ends before it: the rows of the epoch the restore replaced;
  the new epoch goes on after the backup's last row (the floor holds it for a supervisor);
- a message this station did not sign, while its journal is signed: *foreign* (a row
  forged with the table's broker login, or another station's): the publisher says so and
  publishes its own rows after it, so a forgery never takes the table's place;
- anything else (another journal signed by this key, or an unsigned journal's rows that
  are not its own): a `Conflict`, two journals claim one table, and the publisher refuses.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import nats
import orjson
from nats.errors import Error as NatsError
from nats.js.client import JetStreamContext
from nats.js.errors import APIError, NotFoundError

from station.live.publisher.tail import JournalTail
from station.shared.messages import WRONG_LAST_SEQUENCE, BadMessage, JournalMessage


class Conflict(Exception):
    """The stream holds rows of this table that are not this journal's."""


class StreamMissing(Exception):
    """The broker has no stream for this table's subject (the floor service creates it)."""


@dataclass(frozen=True, slots=True)
class Held:
    """The table's last message in the stream, as this journal reads it."""

    #: Its stream sequence: what the next row is published after.
    stream_seq: int
    #: The journal row the stream holds last of this station's (None: not known, the
    #: last message is foreign and hides it).
    row: int | None
    #: Why the last message is not this station's (None: it is).
    foreign: str | None = None
    #: What a foreign message says it is, if it reads as a row (its seq and prev_hash
    #: are the forger's word, checked against the journal before they are used).
    claims: JournalMessage | None = None


def subject_matches(pattern: str, subject: str) -> bool:
    """NATS subject matching: `*` is one token, a final `>` one or more."""
    ptoks, stoks = pattern.split("."), subject.split(".")
    for i, p in enumerate(ptoks):
        if p == ">":
            return len(stoks) > i
        if i >= len(stoks) or (p != "*" and p != stoks[i]):
            return False
    return len(ptoks) == len(stoks)


async def check_stream(js: JetStreamContext, stream: str, subject: str) -> None:
    """`StreamMissing` unless the broker has `stream` and it takes `subject`."""
    try:
        info = await js.stream_info(stream)
    except NotFoundError:
        raise StreamMissing(
            f"the broker has no stream {stream!r}: start the floor service "
            "(it creates it) or create it (README, 'The floor: publishing'); rows wait "
            "in the journal"
        ) from None
    subjects = info.config.subjects or []
    if not any(subject_matches(p, subject) for p in subjects):
        raise StreamMissing(
            f"the stream {stream!r} does not take {subject} (its "
            f"subjects: {', '.join(subjects) or 'none'}); fix the stream or [floor] stream"
        )


async def last_held(
    js: JetStreamContext, stream: str, subject: str, table: str, tail: JournalTail
) -> Held | None:
    """The table's last message in the stream, read against the journal (see the module's
    words; None: the stream holds no message of the table); `Conflict` if another journal
    claims the table."""
    try:
        last = await js.get_last_msg(stream, subject, direct=True)
    except NotFoundError:
        return None
    if last.seq is None:
        raise NatsError(f"the stream's last message on {subject} has no sequence")
    keys = tail.keys()
    try:
        if last.data is None:
            raise BadMessage("an empty message")
        held = JournalMessage.decode(last.data)
    except BadMessage as exc:
        if keys:
            return Held(last.seq, None, f"it is not a journal row ({exc})")
        raise Conflict(
            f"the stream's last message on {subject} (stream seq {last.seq}) is not "
            f"a journal row of this station ({exc})"
        ) from None
    ours = tail.hash_at(held.seq)
    if ours == held.hash:
        return Held(last.seq, held.seq)
    if any(held.signed_by(key) for key in keys):
        restored = tail.restored_from()
        if restored is not None and held.seq > restored:
            return Held(last.seq, restored)  # the replaced epoch's: the new one goes after
        where = f"this journal's has {ours[:12]}…" if ours else "this journal ends before it"
        raise Conflict(
            f"row {held.seq} of table {table!r} in the stream is signed by this station's "
            f"key but is not this journal's ({where}): another journal of this station "
            "publishes as this table"
        )
    if keys:
        why = "unsigned" if held.signature is None else "not signed by this station's key"
        return Held(last.seq, None, f"a row {held.seq} {why}", held)
    if ours is None:
        journal_last = tail.last()[0]
        raise Conflict(
            f"the stream holds row {held.seq} of table {table!r}, but this journal "
            f"ends at row {journal_last}: another station publishes as this table, or "
            "this journal was replaced"
        )
    raise Conflict(
        f"row {held.seq} of table {table!r} in the stream has hash "
        f"{held.hash[:12]}…, this journal's has {ours[:12]}…: another station "
        "publishes as this table"
    )


def check_reply(data: bytes) -> dict[str, Any] | None:
    """A batch message's reply: empty (received), a publish ack, or an error (raised)."""
    if not data:
        return None
    try:
        body = orjson.loads(data)
    except orjson.JSONDecodeError:
        raise NatsError(f"an unreadable reply from the stream: {data[:200]!r}") from None
    if not isinstance(body, dict):
        raise NatsError(f"an unexpected reply from the stream: {data[:200]!r}")
    if isinstance(body.get("error"), dict):
        APIError.from_error(body["error"])
    return body


def wrong_last(exc: BaseException) -> bool:
    """Whether the stream refused a row for not following the table's last one."""
    return isinstance(exc, APIError) and exc.err_code == WRONG_LAST_SEQUENCE


def describe(exc: BaseException) -> str:
    """A broker error in the words of the publisher's status."""
    if wrong_last(exc):
        return "the stream's last row is not the one expected"
    if isinstance(exc, TimeoutError | nats.errors.TimeoutError):
        return "the broker did not acknowledge in time"
    text = str(exc) or type(exc).__name__
    return f"broker error: {text}"

"""What the publisher asks of the JetStream stream, and what the stream's answers mean:
whether it takes the table's subject, where the table's rows end in it, and its replies to
a publish.

Why apart from the publishing: where to resume is decided by the stream, not by what the
publisher believes it sent. At start and after any error the publisher asks for the
table's last message in the stream (`last_held`): it must be this journal's row at that
seq (same hash), and publishing resumes after it; anything else is a `Conflict` (two
journals claim one table), which the publisher refuses to publish over.
"""

from __future__ import annotations

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
) -> tuple[int, int] | None:
    """The table's last row in the stream, checked against the journal: its stream
    sequence and its journal seq (None: the stream holds no row of the table);
    `Conflict` if it is not this journal's row."""
    try:
        last = await js.get_last_msg(stream, subject, direct=True)
    except NotFoundError:
        return None
    try:
        if last.data is None or last.seq is None:
            raise BadMessage("an empty message")
        held = JournalMessage.decode(last.data)
    except BadMessage as exc:
        raise Conflict(
            f"the stream's last message on {subject} (stream seq {last.seq}) is not "
            f"a journal row of this station ({exc})"
        ) from None
    ours = tail.hash_at(held.seq)
    if ours is None:
        journal_last = tail.last()[0]
        raise Conflict(
            f"the stream holds row {held.seq} of table {table!r}, but this journal "
            f"ends at row {journal_last}: another station publishes as this table, or "
            "this journal was replaced"
        )
    if ours != held.hash:
        raise Conflict(
            f"row {held.seq} of table {table!r} in the stream has hash "
            f"{held.hash[:12]}…, this journal's has {ours[:12]}…: another station "
            "publishes as this table"
        )
    return last.seq, held.seq


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

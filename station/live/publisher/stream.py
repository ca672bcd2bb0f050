"""What the publisher asks of the JetStream stream, and what the stream's answers mean:
whether it takes the table's subject, where the table's rows end in it, and its replies to
a publish.

Why apart from the publishing: where to resume is decided by the stream, not by what the
publisher believes it sent. At start and after any error the publisher asks for the
table's last message in the stream (`last_held`, the one message a station's broker login
may read back). Only what the station's key signed is believed (issue 32: the table's
broker login sits on the dealer PC, so anyone there can publish at the subject). What it
is decides what happens:
- this journal's row at that seq (same hash, and signed by this station's key where the
  journal's row is signed) that this station published (its `PUBLISHED` header, signed
  by the key, says so): publishing resumes after it. A copy of a journal row that no
  publisher of this station sent (whoever can read the journal file can publish one
  with the login, ahead of the rows that wait) is *unproven*: the rows are sent again
  from what the publisher knows (the floor takes the ones it has as duplicates), never
  skipped;
- a row signed by this station's key that this journal does not have (this journal is
  shorter, or its row at that seq has another hash) is a *discontinuity*: the journal was
  rolled back or cut under the station, or another journal of this station publishes. If
  this journal's epoch began after it (a `journal restore`, the station's own start-up
  check, or the publisher's discontinuity notice that names it), the new epoch goes on
  after the stream's last row (the floor holds it for a supervisor); else the publisher
  has the station journal a discontinuity notice, which begins a new epoch, and goes on
  the same way (`Held.discontinuity`);
- a message this station did not sign, while its journal is signed: *foreign* (a row
  forged with the table's broker login, or another station's): the publisher says so and
  publishes its own rows after it, so a forgery never takes the table's place; where its
  own rows end behind it is never taken from the foreign message's word (`foreign`);
- anything else (an unsigned journal's rows that are not its own): a `Conflict`, two
  journals claim one table, and the publisher refuses.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import nats
import orjson
from nats.errors import Error as NatsError
from nats.js.client import JetStreamContext
from nats.js.errors import APIError, NotFoundError

from station.live.journal.epoch import RESTORED
from station.live.publisher.tail import JournalTail
from station.shared.messages import WRONG_LAST_SEQUENCE, BadMessage, JournalMessage
from station.shared.rows import Row
from station.shared.signing import SigningKey

#: The header with which a station's publisher says it sent a row: its key's signature of
#: `published(subject, row)`. A row's own signature says the station wrote it; this says
#: the station sent it there, right after the rows before it.
PUBLISHED = "Station-Published"


def published(subject: str, seq: int, row_hash: str) -> dict[str, Any]:
    """What the `PUBLISHED` header signs (as a floor message body, which no heartbeat or
    alert body can be mistaken for)."""
    return {"published": subject, "seq": seq, "hash": row_hash}


class NotJournaled(Exception):
    """The station has not journaled the publisher's discontinuity notice yet: nothing of
    the new epoch goes out before it."""


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
    #: What a foreign message says it is, if it reads as a row (the forger's word: never
    #: believed), or the row signed by this station's key that this journal lacks.
    claims: JournalMessage | None = None
    #: What a row signed by this station's key but not this journal's says of this
    #: journal (None: not one): a discontinuity, for the station to journal.
    discontinuity: str | None = None
    #: Why this journal's row at the stream's end is not believed to be where the
    #: station's rows end there (None: it is, or it is not this journal's row).
    unproven: str | None = None


def proof(key: SigningKey | None, subject: str, row: Row) -> dict[str, str]:
    """The `PUBLISHED` header of `row` (none without a key): at the next look at the
    stream, the sign that this station sent it, not someone who copied it from the journal
    file."""
    if key is None:
        return {}
    return {PUBLISHED: key.sign_message(published(subject, row.seq, row.hash))}


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
            "(it creates it) or create it (docs/floor-publishing.md); rows wait "
            "in the journal"
        ) from None
    subjects = info.config.subjects or []
    if not any(subject_matches(p, subject) for p in subjects):
        raise StreamMissing(
            f"the stream {stream!r} does not take {subject} (its "
            f"subjects: {', '.join(subjects) or 'none'}); fix the stream or [floor] stream"
        )


async def last_held(
    js: JetStreamContext,
    stream: str,
    subject: str,
    table: str,
    tail: JournalTail,
    proven: bool = False,
) -> Held | None:
    """The table's last message in the stream, read against the journal (see the module's
    words; None: the stream holds no message of the table); `Conflict` if another journal
    claims the table. `proven`: a signed row of this journal is believed only with its
    `PUBLISHED` header (the publisher signs what it sends)."""
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
    signed = any(held.signed_by(key) for key in keys)
    if ours == held.hash and (signed or not tail.signed_at(held.seq)):
        proof = (last.headers or {}).get(PUBLISHED)
        body = published(subject, held.seq, held.hash)
        if proven and signed and not any(key.verify_message(body, proof) for key in keys):
            why = f"row {held.seq} is this journal's but no publisher of this station sent it"
            return Held(last.seq, None, claims=held, unproven=why)
        return Held(last.seq, held.seq)
    if signed:
        return _signed_not_ours(last.seq, held, ours, table, tail)
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


def _signed_not_ours(
    stream_seq: int, held: JournalMessage, ours: str | None, table: str, tail: JournalTail
) -> Held:
    """The stream's last row is signed by this station's key but is not this journal's:
    the rows of an epoch this journal's epoch replaced (a restore, a discontinuity already
    journaled: the new epoch goes on after its first row's predecessor), else a
    discontinuity to journal (`Held.discontinuity`)."""
    began = tail.epoch_began()
    if began is not None:
        row, event = began
        if event.get("message") == RESTORED:
            restored = event.get("backup_rows")
            if isinstance(restored, int) and held.seq > restored:
                return Held(stream_seq, restored)  # the replaced epoch's: the new one after
        else:
            noticed = tail.discontinuity_of(stream_seq, held.hash)
            if noticed is not None:  # the publisher's own notice of this very row
                return Held(stream_seq, noticed, claims=held)
            if held.seq >= row and "stream_hash" not in event:
                # The station's start-up found the discontinuity and began a new epoch:
                # this journal's rows before it are what the stream holds of the old one.
                return Held(stream_seq, row - 1, claims=held)
    journal_last = tail.last()[0]
    where = (
        f"this journal's row {held.seq} has hash {ours[:12]}…"
        if ours
        else f"this journal ends at row {journal_last}"
    )
    words = (
        f"the stream holds row {held.seq} of table {table!r} (stream seq {stream_seq}, "
        f"hash {held.hash[:12]}…) signed by this station's key, but {where}: the journal "
        "was rolled back or cut without `station journal restore`, or another journal of "
        "this station publishes as this table"
    )
    return Held(stream_seq, None, claims=held, discontinuity=words)


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

"""What a station and the floor say to each other over NATS: one module both sides import.

Subjects (`site` and `table` are single subject tokens, see `check_token`):

- `floor.<site>.<table>.journal` (JetStream, stream `STREAM`): one message per journal
  row, notices included, in journal order, each exactly once. The body is the row as
  `/api/journal` returns it plus `table`, `prev_hash`, `hash` and, for a signed journal,
  `signature` (the station's Ed25519 signature of the hash: `JournalMessage`). The
  publisher sends every row with `Nats-Expected-Last-Subject-Sequence` (the stream
  sequence of the table's previous row), so a second writer or a retry can never put a
  row twice or out of order.
- `floor.<site>.<table>.heartbeat` (core NATS, not stored): every `HEARTBEAT_INTERVAL`
  seconds, the station's last committed row and what the table is doing (`Heartbeat`).
  A table without one for `OFFLINE_AFTER` seconds is offline.
- `floor.<site>.<table>.alert` (core NATS, not stored): something the floor must see now
  (`Alert`), e.g. the publisher refused because another journal claims this table. The
  same is journaled as a notice (and so published too, once the conflict is resolved).

The hash of a row can be checked from the message alone (`JournalMessage.computed_hash`):
the journal stores the event and the verdict as sorted-key JSON, which orjson rebuilds
byte for byte from the parsed values, so the floor checks each table's chain itself.

Who sent a message is another matter: a table's broker login lets anyone publish on its
subjects. So a station with a key signs what it says: each row carries its signature, and
heartbeats and alerts carry a `signature` of their body (`signing.canonical`: every key
but `signature`). The floor checks them with the table's public key; a message kept from
the wire (`body`) is checked as it came, keys this module does not know included.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import orjson

from station.shared.rows import VERDICT_KEYS, Row, row_hash
from station.shared.signing import PublicKey, SigningKey

if TYPE_CHECKING:  # nats is imported only by what talks to the broker (the config is not)
    from nats.js.api import StreamConfig

#: The first token of every floor subject.
PREFIX = "floor"
#: The JetStream stream holding every table's journal rows (all sites).
STREAM = "FLOOR"
#: The stream's subjects: journal rows only (heartbeats and alerts are not stored).
STREAM_SUBJECTS = (f"{PREFIX}.*.*.journal",)
#: Seconds between two heartbeats of a station.
HEARTBEAT_INTERVAL = 5.0
#: A table whose last heartbeat is older than this is shown offline.
OFFLINE_AFTER = 15.0
#: The header each journal message is published with (JetStream's optimistic lock).
EXPECTED_LAST_SUBJECT_SEQUENCE = "Nats-Expected-Last-Subject-Sequence"
#: JetStream's error code for "wrong last sequence" (the header above did not hold).
WRONG_LAST_SEQUENCE = 10071
#: The largest message the stream and a table's broker account take (bytes): a journal row
#: is at most an event body of 64 KiB (the API's limit) with its verdict, hashes and
#: signature. A bigger one is refused by the broker, so one login cannot send 1 MiB rows.
ROW_BYTES = 128 * 1024
#: Rows of one table the stream keeps, the table's oldest dropped first (`stream_config`):
#: a table's share, so that one login flooding its subject evicts only its own rows. Size
#: it to cover the longest floor outage (docs/floor-publishing.md, "Sizing the broker").
TABLE_ROWS = 100_000
#: Bytes the whole stream keeps, the oldest rows dropped first: below the broker's
#: `max_file_store` (20 GB shipped), so the stream never runs out of room and no table's
#: publish fails with "insufficient resources".
STREAM_BYTES = 16 * 1024**3
#: Connections one table's login may hold open at once (a station needs one; a restarted
#: publisher briefly two).
TABLE_CONNECTIONS = 4
#: Subscriptions one table's login may hold at once: a station's publisher has one (its
#: inbox, for every reply); so that a login cannot make the broker keep millions.
TABLE_SUBSCRIPTIONS = 64
#: The broker account holding the stream: the floor service's. Each table has an account
#: of its own that imports only its own subjects from it (`station_imports`).
FLOOR_ACCOUNT = "FLOOR"
#: The JetStream request a table's account must import from the floor's, though its login
#: may not send it: without it the broker answers the account's JetStream requests itself
#: ("JetStream not enabled for account").
JS_ACCOUNT_INFO = "$JS.API.INFO"
#: A subject token: what `site` and `[table] id` must be for the floor.
TOKEN = re.compile(r"[A-Za-z0-9_-]{1,64}")
KINDS = ("journal", "heartbeat", "alert")


class BadMessage(ValueError):
    """A floor message that is not what this module writes (the text says what is wrong)."""


def check_token(value: str, what: str) -> str:
    """`value` if it can be one token of a NATS subject (letters, digits, - and _)."""
    if not TOKEN.fullmatch(value):
        raise ValueError(
            f"{what} {value!r} cannot be part of a floor subject: use 1 to 64 letters, "
            "digits, '-' or '_' (no dots, spaces or wildcards)"
        )
    return value


def subject(site: str, table: str, kind: str) -> str:
    """`floor.<site>.<table>.<kind>` (kind: journal, heartbeat or alert)."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    return f"{PREFIX}.{check_token(site, 'site')}.{check_token(table, 'table')}.{kind}"


def journal_subject(site: str, table: str) -> str:
    return subject(site, table, "journal")


def heartbeat_subject(site: str, table: str) -> str:
    return subject(site, table, "heartbeat")


def alert_subject(site: str, table: str) -> str:
    return subject(site, table, "alert")


def wildcard(kind: str, site: str = "*") -> str:
    """What a floor service subscribes to: `floor.<site>.*.<kind>` (site "*": all)."""
    if site != "*":
        check_token(site, "site")
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    return f"{PREFIX}.{site}.*.{kind}"


def parse_subject(text: str) -> tuple[str, str, str]:
    """(site, table, kind) of a floor subject; `BadMessage` for any other subject."""
    parts = text.split(".")
    if len(parts) != 4 or parts[0] != PREFIX or parts[3] not in KINDS:
        raise BadMessage(f"{text!r} is not a floor subject (floor.<site>.<table>.<kind>)")
    if not (TOKEN.fullmatch(parts[1]) and TOKEN.fullmatch(parts[2])):
        raise BadMessage(f"{text!r}: the site and table must be subject tokens")
    return parts[1], parts[2], parts[3]


def stream_config(
    name: str = STREAM,
    *,
    max_age: float = 0.0,
    max_bytes: int = STREAM_BYTES,
    max_msgs_per_subject: int = TABLE_ROWS,
    max_msg_size: int = ROW_BYTES,
    deny_delete: bool = False,
    replicas: int = 1,
) -> StreamConfig:
    """The stream a station expects (the floor service or the operator creates it; see
    docs/floor-publishing.md): file storage, every row kept until `max_age`
    seconds (0: for ever), at most `max_bytes` in all and `max_msgs_per_subject` rows of
    one table (-1: no limit), the oldest dropped first (a table flooding its subject
    drops its own rows, not another table's, and never fills the broker), no message
    over `max_msg_size` bytes, direct gets allowed
    (a station reads its table's last row with one request its permissions can name),
    atomic batches allowed (a station's backlog goes in batches: one disk sync each), on
    `replicas` brokers of a cluster (a row is acknowledged once most of them hold it)."""
    from nats.js.api import DiscardPolicy, RetentionPolicy, StorageType, StreamConfig

    return StreamConfig(
        name=name,
        subjects=list(STREAM_SUBJECTS),
        retention=RetentionPolicy.LIMITS,
        storage=StorageType.FILE,
        discard=DiscardPolicy.OLD,
        max_age=max_age,
        max_bytes=max_bytes,
        max_msgs_per_subject=max_msgs_per_subject,
        max_msg_size=max_msg_size,
        num_replicas=replicas,
        allow_direct=True,
        allow_atomic=True,
        deny_delete=deny_delete,
    )


def _dumps(obj: object) -> bytes:
    return orjson.dumps(obj, option=orjson.OPT_SORT_KEYS)


def _loads(data: bytes, what: str) -> dict[str, Any]:
    try:
        body = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise BadMessage(f"{what}: not JSON: {exc}") from None
    if not isinstance(body, dict):
        raise BadMessage(f"{what}: expected a JSON object, got {type(body).__name__}")
    return body


def _field(body: dict[str, Any], key: str, kind: type | tuple[type, ...], what: str) -> Any:
    value = body.get(key)
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
        raise BadMessage(f"{what}: field {key!r} is missing or of the wrong type: {value!r}")
    return value


def _signature_of(body: Mapping[str, Any], what: str) -> str | None:
    signature = body.get("signature")
    if signature is not None and not isinstance(signature, str):
        raise BadMessage(f"{what}: field 'signature' must be a string or null: {signature!r}")
    return signature


@dataclass(frozen=True, slots=True)
class JournalMessage:
    """One journal row on `floor.<site>.<table>.journal`."""

    table: str
    seq: int
    ts: str
    source: str
    actor: str
    event: dict[str, Any]
    #: The verdict as `/api/journal` shows it (`seq` first), None for a notice.
    verdict: dict[str, Any] | None
    prev_hash: str
    hash: str
    #: The station's signature of `hash` (base64), None for an unsigned journal's row.
    signature: str | None = None

    @classmethod
    def of(cls, table: str, row: Row) -> JournalMessage:
        api = row.to_api()
        return cls(
            table,
            row.seq,
            row.ts,
            row.source,
            row.actor,
            row.event,
            api["verdict"],
            row.prev_hash,
            row.hash,
            row.signature,
        )

    @property
    def kind(self) -> str:
        """The journal's kind of row: "notice" (no verdict) or "event"."""
        return "notice" if self.verdict is None else "event"

    def to_dict(self) -> dict[str, Any]:
        return {
            "table": self.table,
            "seq": self.seq,
            "ts": self.ts,
            "source": self.source,
            "actor": self.actor,
            "event": self.event,
            "verdict": self.verdict,
            "prev_hash": self.prev_hash,
            "hash": self.hash,
            **({} if self.signature is None else {"signature": self.signature}),
        }

    def encode(self) -> bytes:
        return orjson.dumps(self.to_dict())

    def signed_by(self, key: PublicKey) -> bool:
        """Whether `key` signed this row (its hash: check `computed_hash` too)."""
        return key.verify_row(self.hash, self.signature)

    @classmethod
    def decode(cls, data: bytes) -> JournalMessage:
        """The message in `data`, its fields checked (not its hash: `chain_ok`)."""
        what = "journal message"
        body = _loads(data, what)
        verdict = body.get("verdict")
        if verdict is not None and (
            not isinstance(verdict, dict) or any(k not in verdict for k in VERDICT_KEYS)
        ):
            raise BadMessage(
                f"{what}: the verdict must be null or an object with "
                f"{', '.join(VERDICT_KEYS)}: {verdict!r}"
            )
        seq = _field(body, "seq", int, what)
        if seq < 1:
            raise BadMessage(f"{what}: seq must be 1 or more, got {seq}")
        return cls(
            _field(body, "table", str, what),
            seq,
            _field(body, "ts", str, what),
            _field(body, "source", str, what),
            _field(body, "actor", str, what),
            _field(body, "event", dict, what),
            verdict,
            _field(body, "prev_hash", str, what),
            _field(body, "hash", str, what),
            _signature_of(body, what),
        )

    def computed_hash(self) -> str:
        """The row's hash recomputed from the message, as the journal computed it."""
        verdict = None
        if self.verdict is not None:
            verdict = _dumps({k: self.verdict[k] for k in VERDICT_KEYS}).decode()
        return row_hash(
            self.seq,
            self.ts,
            self.source,
            self.actor,
            self.kind,
            _dumps(self.event).decode(),
            verdict,
            self.prev_hash,
        )

    def chain_ok(self, prev_hash: str) -> bool:
        """True if this row follows a row whose hash is `prev_hash` and is unedited."""
        return self.prev_hash == prev_hash and self.computed_hash() == self.hash


class _Signed:
    """What a heartbeat and an alert share: a body, signed by the station's key, that the
    floor checks as it came off the wire (`body`: keys this version does not know
    included, so a newer station's signature still verifies)."""

    __slots__ = ()
    signature: str | None
    body: Mapping[str, Any] | None

    def fields(self) -> dict[str, Any]:
        raise NotImplementedError

    def encode(self) -> bytes:
        sign = {} if self.signature is None else {"signature": self.signature}
        return orjson.dumps({**self.fields(), **sign})

    def signed_by(self, key: PublicKey) -> bool:
        """Whether `key` signed this message (as received, else as made here)."""
        body = self.body if self.body is not None else self.fields()
        return key.verify_message(body, self.signature)


@dataclass(frozen=True, slots=True)
class Heartbeat(_Signed):
    """A station's `floor.<site>.<table>.heartbeat`: alive, how far its journal is, how
    far the stream has it, and what the table is doing."""

    site: str
    table: str
    ts: str
    #: The journal's last committed row and its hash.
    seq: int
    hash: str
    #: The last row the publisher knows the stream holds (0: none yet).
    published: int
    #: The publisher's state: "connecting", "publishing", "refused" (see `Alert`).
    floor: str
    game: str
    #: Shoes started so far (1 is the first shoe).
    shoe: int
    #: The round being dealt or last dealt (None before the first of the shoe).
    round: int | None
    suspended: bool
    #: The suspension's code (e.g. "unreadable_card"), None when not suspended.
    code: str | None
    interval: float = HEARTBEAT_INTERVAL
    #: Why the station's journal cannot be written now (None: it can, or a station from
    #: before this field): every event is refused there until it can.
    journal: str | None = None
    #: The station's signature of the body (None: unsigned, a station without a key).
    signature: str | None = None
    #: The body as received (what the signature covers); None for one made here.
    body: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)

    def fields(self) -> dict[str, Any]:
        return {
            "site": self.site,
            "table": self.table,
            "ts": self.ts,
            "seq": self.seq,
            "hash": self.hash,
            "published": self.published,
            "floor": self.floor,
            "game": self.game,
            "shoe": self.shoe,
            "round": self.round,
            "suspended": self.suspended,
            "code": self.code,
            "interval": self.interval,
            "journal": self.journal,
        }

    def signed(self, key: SigningKey) -> Heartbeat:
        """This heartbeat with `key`'s signature."""
        return replace(self, signature=key.sign_message(self.fields()), body=None)

    @classmethod
    def decode(cls, data: bytes) -> Heartbeat:
        what = "heartbeat"
        body = _loads(data, what)
        rnd = body.get("round")
        code = body.get("code")
        interval = body.get("interval", HEARTBEAT_INTERVAL)
        journal = body.get("journal")
        if rnd is not None and (not isinstance(rnd, int) or isinstance(rnd, bool)):
            raise BadMessage(f"{what}: field 'round' must be an integer or null: {rnd!r}")
        if code is not None and not isinstance(code, str):
            raise BadMessage(f"{what}: field 'code' must be a string or null: {code!r}")
        if not isinstance(interval, int | float) or isinstance(interval, bool) or interval <= 0:
            raise BadMessage(f"{what}: field 'interval' must be a positive number: {interval!r}")
        if journal is not None and not isinstance(journal, str):
            raise BadMessage(f"{what}: field 'journal' must be a string or null: {journal!r}")
        return cls(
            _field(body, "site", str, what),
            _field(body, "table", str, what),
            _field(body, "ts", str, what),
            _field(body, "seq", int, what),
            _field(body, "hash", str, what),
            _field(body, "published", int, what),
            _field(body, "floor", str, what),
            _field(body, "game", str, what),
            _field(body, "shoe", int, what),
            rnd,
            _field(body, "suspended", bool, what),
            code,
            float(interval),
            journal,
            _signature_of(body, what),
            body,
        )


@dataclass(frozen=True, slots=True)
class Alert(_Signed):
    """A station's `floor.<site>.<table>.alert`: what the floor must see at once."""

    site: str
    table: str
    ts: str
    #: What happened, e.g. "conflict" (another journal claims this table) or "foreign"
    #: (a message at its subject that it did not sign).
    code: str
    message: str
    #: The station's signature of the body (None: unsigned, a station without a key).
    signature: str | None = None
    #: The body as received (what the signature covers); None for one made here.
    body: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)
    #: The figures a screen says `message` with in its own words (by `code`); sent and
    #: signed only when there are some, so an alert without is the one older stations sent.
    params: Mapping[str, Any] = field(default_factory=dict)

    def fields(self) -> dict[str, Any]:
        said = {
            "site": self.site,
            "table": self.table,
            "ts": self.ts,
            "code": self.code,
            "message": self.message,
        }
        return {**said, "params": dict(self.params)} if self.params else said

    def signed(self, key: SigningKey) -> Alert:
        """This alert with `key`'s signature."""
        return replace(self, signature=key.sign_message(self.fields()), body=None)

    @classmethod
    def decode(cls, data: bytes) -> Alert:
        what = "alert"
        body = _loads(data, what)
        return cls(
            _field(body, "site", str, what),
            _field(body, "table", str, what),
            _field(body, "ts", str, what),
            _field(body, "code", str, what),
            _field(body, "message", str, what),
            _signature_of(body, what),
            body,
            params if isinstance(params := body.get("params"), dict) else {},
        )


def inbox_prefix(site: str, table: str) -> str:
    """The reply subjects a station's connection uses (`_INBOX.<site>.<table>.*`), so its
    permissions can let it hear its own replies (publish acks, its last row) and no other
    station's."""
    return f"_INBOX.{check_token(site, 'site')}.{check_token(table, 'table')}"


def station_permissions(site: str, table: str, stream: str = STREAM) -> dict[str, list[str]]:
    """What one station may do on the broker: publish its own table's subjects, read its
    own table's last row of `stream` (a direct get) and the stream's settings, and hear
    replies on its own inbox. Nothing else: not another table, not a delete."""
    journal = journal_subject(site, table)
    return {
        "publish": [
            f"{PREFIX}.{site}.{table}.*",
            f"$JS.API.STREAM.INFO.{stream}",
            f"$JS.API.DIRECT.GET.{stream}.{journal}",
        ],
        "subscribe": [f"{inbox_prefix(site, table)}.>"],
    }


def floor_exports(stream: str = STREAM) -> list[dict[str, str]]:
    """What the floor's broker account (the stream's, `FLOOR_ACCOUNT`) offers the tables'
    accounts, as services: each table's account imports only its own share of it
    (`station_imports`), so nothing a table's login publishes reaches another table."""
    subjects = (
        wildcard("journal"),
        wildcard("heartbeat"),
        wildcard("alert"),
        f"$JS.API.STREAM.INFO.{stream}",
        f"$JS.API.DIRECT.GET.{stream}.{wildcard('journal')}",
        JS_ACCOUNT_INFO,
    )
    return [{"service": s} for s in subjects]


def station_imports(
    site: str, table: str, stream: str = STREAM, account: str = FLOOR_ACCOUNT
) -> list[dict[str, dict[str, str]]]:
    """What one table's broker account imports from the floor's: its own journal,
    heartbeat and alert subjects, the stream's settings and its own last row.

    Why an account per table and not only permissions: permissions check the subject a
    login publishes to, never the reply subject it names, and JetStream sends its publish
    acknowledgement to that reply subject. In one account, a reply naming another table's
    journal subject put the acknowledgement into the stream as that table's row (issue
    32, attack 5). Through a service import the broker hands the acknowledgement back to
    the reply subject *in the table's own account*, which imports nothing of any other
    table's."""
    journal = journal_subject(site, table)
    subjects = (
        journal,
        heartbeat_subject(site, table),
        alert_subject(site, table),
        f"$JS.API.STREAM.INFO.{stream}",
        f"$JS.API.DIRECT.GET.{stream}.{journal}",
        JS_ACCOUNT_INFO,
    )
    return [{"service": {"account": account, "subject": s}} for s in subjects]


def table_limits() -> dict[str, int]:
    """A table's broker account's limits: the connections and subscriptions its login may
    hold and the largest message it may send (a row, `ROW_BYTES`)."""
    return {
        "max_connections": TABLE_CONNECTIONS,
        "max_subscriptions": TABLE_SUBSCRIPTIONS,
        "max_payload": ROW_BYTES,
    }

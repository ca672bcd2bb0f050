"""The durable journal: every event and its verdict, hash-chained, in SQLite.

Rows are `seq, ts, source, actor, kind, event, verdict, prev_hash, hash` (the row and its
chain: `station.shared.rows`), and the station's `signature` of the hash in a signed
journal. Two kinds of rows:
- `event`: a table event (replay format) and the core's verdict on it.
- `notice`: something the journal must say that is not a table event (reader port
  opened, a webhook given up, the table settings the journal was started with). Its
  `event` is `{"type": "notice", "message": ..., **details}` and its verdict is null. The
  core's replay skips notices and `export` leaves them out, so an export is exactly the
  table's event stream, which `station replay` accepts line for line.

One module per job:
- `store`: the `Journal`, the one writer's file (open, start, adopt, append, the webhook
  outbox, the head anchor, waiting out a failed disk);
- `schema`: the file format, its stamps and migrations;
- `table`: the table a journal records (its settings, its replay);
- `keys`: which key signs the rows (the key in force, a key's hand-over to the next; the
  chain of keys and every signature checked: `station.shared.keychain`);
- `epoch`: the journal's identity and epoch, which every id the station hands out carries;
- `anchor`: the head anchor, the station's signed word of the last row it committed;
- `integrity`: the chain, the signatures and the anchor checked at start, before anything
  new is signed (a discontinuity begins a new epoch);
- `owed`: the webhook events owed, sealed to their rows and checked before they are sent
  again;
- `verify`: the chain, the head anchor and every verdict checked (`station journal verify`);
- `reading`: rows read out, the export and the backup copy;
- `restore`: a backup checked and put in place in a new epoch (`station journal restore`);
- `disk`: what a failed disk means for the operator;
- `errors`: what the journal raises.
"""

from station.live.journal.errors import JournalError, JournalUnavailable, JournalUnopenable
from station.live.journal.schema import OutboxEntry
from station.live.journal.store import Journal

__all__ = ["Journal", "JournalError", "JournalUnavailable", "JournalUnopenable", "OutboxEntry"]

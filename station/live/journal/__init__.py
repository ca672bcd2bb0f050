"""The durable journal: every event and its verdict, hash-chained, in SQLite.

Rows are `seq, ts, source, actor, kind, event, verdict, prev_hash, hash` (the row and its
chain: `station.shared.rows`). Two kinds of rows:
- `event`: a table event (replay format) and the core's verdict on it.
- `notice`: something the journal must say that is not a table event (reader port
  opened, a webhook given up, the table settings the journal was started with). Its
  `event` is `{"type": "notice", "message": ..., **details}` and its verdict is null. The
  core's replay skips notices and `export` leaves them out, so an export is exactly the
  table's event stream, which `station replay` accepts line for line.

One module per job:
- `store`: the `Journal`, the one writer's file (open, start, append, the webhook outbox,
  the head anchor, waiting out a failed disk);
- `schema`: the file format, its stamps and migrations;
- `table`: the table a journal records (its settings, its replay);
- `verify`: the chain, the head anchor and every verdict checked (`station journal verify`);
- `reading`: rows read out, the export and the backup copy;
- `disk`: what a failed disk means for the operator;
- `errors`: what the journal raises.
"""

from station.live.journal.errors import JournalError, JournalUnavailable, JournalUnopenable
from station.live.journal.schema import OutboxEntry
from station.live.journal.store import Journal

__all__ = ["Journal", "JournalError", "JournalUnavailable", "JournalUnopenable", "OutboxEntry"]

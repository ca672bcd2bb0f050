"""`station journal verify|export|backup`: check the hash chain, write replay JSON Lines, or
copy the journal while the station runs."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, BinaryIO

from station.commands.common import add_config_option, load_config
from station.commands.options import EXIT_OK, EXIT_USAGE


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "journal",
        help="verify, export or back up the station's journal",
        description="Work on the durable journal of `station run`.",
    )
    jsub = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    v = jsub.add_parser(
        "verify",
        help="check every row's hash chain and verdict",
        description="Exit 0 if no row was edited, deleted or reordered and "
        "the rules still decide every stored verdict; else 1, "
        "listing the problems.",
    )
    e = jsub.add_parser(
        "export",
        help="write the table events as replay JSON Lines",
        description="One line per table event (notices are left out): the "
        "event, its 'verdict' and a 'journal' object (seq, ts, "
        "source, actor; the first line's also has 'table', the journal's table settings). "
        "`station replay` accepts the file, and plays it at that table.",
    )
    e.add_argument(
        "--after",
        type=int,
        default=0,
        metavar="SEQ",
        help="only rows after this journal seq (default 0: every row)",
    )
    e.add_argument(
        "-o",
        "--output",
        type=Path,
        default=None,
        metavar="FILE",
        help="write here, a new file (default: standard output)",
    )
    b = jsub.add_parser(
        "backup",
        help="copy the journal and its head anchor, safely while the station runs",
        description="A consistent copy of the journal (SQLite's online backup, so the "
        "station can keep dealing) and of its head anchor, then checked like `verify`. "
        "Restore by stopping the station and copying both files back.",
    )
    b.add_argument(
        "dest",
        type=Path,
        metavar="DEST",
        help="the new file for the copy (DEST.head is written beside it); must not exist",
    )
    for q in (v, e, b):
        add_config_option(q)
        q.add_argument(
            "--journal",
            type=Path,
            default=None,
            metavar="PATH",
            help="the journal file (default: [journal] path of the config)",
        )
        q.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from station.live.journal import Journal, JournalError

    prog = f"journal {args.action}"
    path = args.journal
    if path is None:
        config = load_config(args, prog)
        if config is None:
            return EXIT_USAGE
        path = config.journal.path
    if not Path(path).is_file():
        print(
            f"station {prog}: no journal at {path} (check --journal or [journal] path)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    try:
        journal = Journal(path)
    except JournalError as exc:
        print(f"station {prog}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    with journal:
        if args.action == "verify":
            return _verify(journal, path)
        if args.action == "backup":
            return _backup(journal, args.dest)
        return _export(journal, args)


def _backup(journal: Any, dest: Path) -> int:
    from station.live.journal import Journal, JournalError

    try:
        rows = journal.backup(dest)
    except (OSError, JournalError) as exc:
        print(f"station journal backup: {exc}", file=sys.stderr)
        return EXIT_USAGE
    with Journal(dest) as copy:
        report = copy.verify()
    if not report.ok:
        for problem in report.problems:
            print(f"{dest}: {problem}", file=sys.stderr)
        return 1
    print(f"{dest}: {rows} rows backed up (and {dest.name}.head); verified: hash chain intact")
    return EXIT_OK


def _verify(journal: Any, path: Path) -> int:
    report = journal.verify()
    for warning in report.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if report.ok:
        print(
            f"{path}: ok: {report.rows} rows ({report.events} table events), hash chain "
            f"intact up to row {report.last_seq}, every verdict as the rules decide"
        )
        return EXIT_OK
    for problem in report.problems:
        print(f"{path}: {problem}", file=sys.stderr)
    print(
        f"{path}: FAILED: {len(report.problems)} problem(s) in {report.rows} rows", file=sys.stderr
    )
    return 1


def _export(journal: Any, args: argparse.Namespace) -> int:
    if args.output is None:
        try:
            _write_export(journal, sys.stdout.buffer, args.after)
            sys.stdout.flush()
        except BrokenPipeError:
            pass
        return EXIT_OK
    try:
        # A new file only, as `backup` does: an export never replaces what is there.
        with open(args.output, "xb") as f:
            count = _write_export(journal, f, args.after)
    except FileExistsError:
        print(
            f"station journal export: {args.output} exists already; give a new file for the export",
            file=sys.stderr,
        )
        return EXIT_USAGE
    except OSError as exc:
        print(
            f"station journal export: cannot write {args.output}: {exc.strerror}", file=sys.stderr
        )
        return EXIT_USAGE
    print(f"{count} events written to {args.output}", file=sys.stderr)
    return EXIT_OK


def _write_export(journal: Any, sink: BinaryIO, after: int) -> int:
    """The table events as replay JSON Lines (`Journal.export`), the first also saying the
    table the journal is the record of, as the journal's first row does (`journal.table`:
    its game, decks, burn, cut policy, gating), so `station replay` plays the stream at
    its own game. Returns how many events were written."""
    import orjson

    from station.live.journal.reading import export_line

    settings = journal.settings()
    count = 0
    for row in journal.rows(after=after):
        if row.kind != "event":
            continue
        line = export_line(row)
        if count == 0 and settings is not None:
            first = orjson.loads(line)
            first["journal"]["table"] = settings
            line = orjson.dumps(first) + b"\n"
        sink.write(line)
        count += 1
    return count

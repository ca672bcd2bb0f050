"""`station journal verify|export|backup|restore|adopt`: check the hash chain (and with a
public key every signature, with a floor the rows it archived), write replay JSON Lines,
copy the journal while the station runs, restore a backup (completed from the floor
archive, or in a new epoch: `station.live.journal.restore`), or adopt an unsigned journal
under the station's key, explicitly."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any, BinaryIO

from station.commands.common import add_config_option, load_config
from station.commands.options import EXIT_OK, EXIT_USAGE


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "journal",
        help="verify, export, back up or restore the station's journal",
        description="Work on the durable journal of `station run`.",
    )
    jsub = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    v = jsub.add_parser(
        "verify",
        help="check every row's hash chain and verdict",
        description="Exit 0 if no row was edited, deleted or reordered and "
        "the rules still decide every stored verdict (and, with --public-key, every row's "
        "signature verifies; with --against-floor, every row the floor archive holds is "
        "the journal's); else 1, listing the problems.",
    )
    v.add_argument(
        "--against-floor",
        default=None,
        metavar="URL",
        help="compare the journal with the floor archive's copy of its rows (the floor "
        "service, http://HOST:PORT) and name the first row that differs",
    )
    v.add_argument(
        "--accept-unsigned-before",
        type=int,
        default=1,
        metavar="SEQ",
        help="with --public-key: accept rows before SEQ that no key signed (written before "
        "the journal had a key, adopted by `station journal adopt`); default 1: any such "
        "row fails",
    )
    a = jsub.add_parser(
        "adopt",
        help="sign an unsigned journal's continuation with the station's key, explicitly",
        description="With the station stopped: check the unsigned journal (hash chain, "
        "head anchor, verdicts) and journal a `journal signed` notice, signed by the "
        "station's key ([journal] signing_key), that names the key and says what it "
        "adopted (rows 1..N, their head hash, who, when). A station with a key refuses to "
        "start on an unsigned journal until then. Check the rows first (`station journal "
        "verify`, --against-floor): the key vouches for what it adopts.",
    )
    a.add_argument(
        "--by",
        default=None,
        metavar="NAME",
        help="who adopts it, journaled (default: the user running the command)",
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
        "Restore it with `station journal restore`.",
    )
    b.add_argument(
        "dest",
        type=Path,
        metavar="DEST",
        help="the new file for the copy (DEST.head is written beside it); must not exist",
    )
    r = jsub.add_parser(
        "restore",
        help="put a backup in place of the journal, in a new epoch",
        description="With the station stopped: check the backup (hash chain, head anchor, "
        "verdicts; signatures with the station's key or --public-key); with --from-floor, "
        "take every row after it that the floor archive holds (each checked) so that the "
        "journal is whole again and continues as it was; else (or if rows are still "
        "missing) journal a new epoch at its end (so no id the station hands out is used "
        "twice). Then move the journal in place aside (<path>.replaced-TIME, never "
        "deleted) and put the restored one in its place. The station comes back suspended "
        "if its shoe was in play; a supervisor checks the shoe.",
    )
    r.add_argument("backup", type=Path, metavar="BACKUP", help="the backup (BACKUP.head beside it)")
    r.add_argument(
        "--from-floor",
        default=None,
        metavar="URL",
        help="the floor service (http://HOST:PORT) whose archive holds the table's rows "
        "after the backup: they are taken, hashes and signatures checked",
    )
    for q in (v, r):
        q.add_argument(
            "--floor-token",
            default=None,
            metavar="TOKEN",
            help="a viewer's token for the floor service (default: $STATION_FLOOR_TOKEN; "
            "the variable keeps it out of the process list)",
        )
    for q in (v, r):
        q.add_argument(
            "--public-key",
            default=None,
            metavar="KEY|FILE",
            help="check every row's signature with this public key (ed25519:..., as "
            "`station key show` prints it, or a file holding it); verify: without it the "
            "signatures are not checked; restore: default the station's own key",
        )
    for q in (v, e, b, r, a):
        add_config_option(q)
        q.add_argument(
            "--journal",
            type=Path,
            default=None,
            metavar="FILE",
            help="the journal file (default: [journal] path of the config)",
        )
        q.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from station.live.journal import Journal, JournalError

    prog = f"journal {args.action}"
    if args.action == "restore":
        return _restore(args)
    if args.action == "adopt":
        return _adopt(args)
    trusted = None
    if args.action == "verify" and args.public_key is not None:
        trusted = _public_key(args.public_key, prog)
        if trusted is None:
            return EXIT_USAGE
    path = args.journal
    if path is None:
        config = load_config(args, prog, secrets=False)
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
            verified = _verify(journal, path, trusted, args.accept_unsigned_before)
            if args.against_floor is None:
                return verified
            return max(verified, _against_floor(journal, path, args))
        if args.action == "backup":
            return _backup(journal, args.dest)
        return _export(journal, args)


def _backup(journal: Any, dest: Path) -> int:
    import sqlite3

    from station.live.journal import Journal, JournalError

    try:
        rows = journal.backup(dest)
    except (OSError, JournalError) as exc:
        print(f"station journal backup: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except sqlite3.Error as exc:  # the copy could not be written (permissions, disk full)
        print(f"station journal backup: cannot write {dest}: {exc}", file=sys.stderr)
        return 1
    with Journal(dest) as copy:
        report = copy.verify()
    if not report.ok:
        for problem in report.problems:
            print(f"{dest}: {problem}", file=sys.stderr)
        return 1
    print(f"{dest}: {rows} rows backed up (and {dest.name}.head); verified: hash chain intact")
    return EXIT_OK


def _verify(journal: Any, path: Path, trusted: Any, accept_unsigned_before: int = 1) -> int:
    report = journal.verify(trusted, accept_unsigned_before)
    for warning in report.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if report.ok:
        print(
            f"{path}: ok: {report.rows} rows ({report.events} table events), hash chain "
            f"intact up to row {report.last_seq}, every verdict as the rules decide; "
            f"{_signatures(report)}"
        )
        return EXIT_OK
    for problem in report.problems:
        print(f"{path}: {problem}", file=sys.stderr)
    print(
        f"{path}: FAILED: {len(report.problems)} problem(s) in {report.rows} rows", file=sys.stderr
    )
    return 1


def _floor(url: str, args: argparse.Namespace) -> Any:
    """The floor archive at `url`, read with the token given or in the environment."""
    from station.live.journal.witness import TOKEN_ENV, FloorArchive

    return FloorArchive(url, args.floor_token or os.environ.get(TOKEN_ENV))


def _against_floor(journal: Any, path: Path, args: argparse.Namespace) -> int:
    """Compare the journal with the floor archive's copy of it: 0 if every row the floor
    holds is the journal's, else 1 naming the first that differs (2: no floor to ask)."""
    from station.live.journal.witness import WitnessError, compare

    settings = journal.settings() or {}
    table = str(settings.get("id", ""))
    floor = _floor(args.against_floor, args)
    try:
        found = compare(((r.seq, r.hash) for r in journal.rows()), floor.rows(table))
    except WitnessError as exc:
        print(f"station journal verify: --against-floor: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if not found.ok:
        print(f"{path}: against the floor archive: {found.problem}", file=sys.stderr)
        print(f"{path}: FAILED against the floor archive ({args.against_floor})", file=sys.stderr)
        return 1
    behind = ""
    if found.floor_last < found.journal_last:
        rows = f"{found.floor_last + 1}-{found.journal_last}"
        behind = f"; rows {rows} are not on the floor yet (published later, or never)"
    print(
        f"{path}: ok against the floor archive: rows 1-{found.floor_last} of table {table} "
        f"are the journal's, hash for hash ({found.compared} compared){behind}"
    )
    return EXIT_OK


def _signatures(report: Any) -> str:
    """What a verify says of the signatures: checked with which key, or not checked."""
    checked = report.signatures
    if checked is None:
        what = f"{report.signed_rows} of them signed" if report.signed_rows else "none signed"
        return (
            f"signatures NOT checked ({what}): the chain alone does not show who wrote the "
            "rows; give --public-key"
        )
    given = checked.trusted.fingerprint
    if checked.keys == [given]:
        signed = (
            f"every signature verified: {checked.signed} rows signed by the key given ({given})"
        )
    else:
        signed = (
            f"every signature verified: {checked.signed} rows signed by keys "
            f"{' then '.join(checked.keys)} (each endorsed by the one before), the key given "
            f"({given}) among them"
        )
    if checked.unsigned:
        signed += (
            f"; {checked.unsigned} row(s) accepted unsigned (rows 1-{checked.unsigned}, "
            "--accept-unsigned-before: signed by no key, the key given does not vouch for "
            "them)"
        )
    return signed


def _adopt(args: argparse.Namespace) -> int:
    """`station journal adopt`: the unsigned journal's continuation signed by the
    station's key, with a notice saying what was adopted (`Journal.adopt`)."""
    import getpass

    from station.live.journal import Journal, JournalError, JournalUnavailable
    from station.shared.signing import SigningError

    prog = "journal adopt"
    config = load_config(args, prog, secrets=False)
    if config is None:
        return EXIT_USAGE
    path: Path = args.journal or config.journal.path
    try:
        key = config.journal.load_key(config=str(config.source or "FILE"))
    except SigningError as exc:
        print(f"station {prog}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if key is None:
        print(
            f"station {prog}: [journal] signing_key is empty: give it the station's key "
            f"(`station key init --config {config.source or 'FILE'}`) first",
            file=sys.stderr,
        )
        return EXIT_USAGE
    if not Path(path).is_file():
        print(f"station {prog}: no journal at {path}", file=sys.stderr)
        return EXIT_USAGE
    try:
        by = args.by or getpass.getuser()
    except (KeyError, OSError):
        by = f"uid {os.getuid()}"
    try:
        with Journal(path) as journal:
            row = journal.adopt(config.table.id, config.table.new_table(), key, by)
    except (JournalError, JournalUnavailable) as exc:
        print(f"station {prog}: {exc}", file=sys.stderr)
        return 1
    adopted = row.event["adopted"]
    first, last = adopted["rows"]
    print(
        f"{path}: rows {first}-{last} (head hash {adopted['head_hash'][:16]}…) adopted by "
        f"{by} under key {key.public.fingerprint}, journaled as row {row.seq}; every row "
        f"from here is signed. `station journal verify --public-key` accepts the adopted "
        f"rows with --accept-unsigned-before {last + 1}"
    )
    return EXIT_OK


def _public_key(given: str, prog: str) -> Any:
    """The public key `--public-key` gives (its text, or a file holding it), or None after
    saying why it cannot be read."""
    from station.shared.signing import PREFIX, PublicKey, SigningError

    try:
        if given.strip().startswith(PREFIX):
            return PublicKey.from_text(given)
        return PublicKey.read(given)
    except SigningError as exc:
        print(f"station {prog}: --public-key: {exc}", file=sys.stderr)
        return None


def _restore(args: argparse.Namespace) -> int:
    """`station journal restore`: the steps of `station.live.journal.restore`, in order."""
    from station.live.journal import JournalError, JournalUnavailable
    from station.live.journal import restore as steps
    from station.live.journal.keys import read_endorsements
    from station.shared.signing import SigningError

    prog = "journal restore"
    config = load_config(args, prog, secrets=False)
    if config is None:
        return EXIT_USAGE
    path: Path = args.journal or config.journal.path
    try:
        key = config.journal.load_key(config=config.source)
        rotations = config.journal.rotations
        endorsements = [] if rotations is None else read_endorsements(rotations)
    except SigningError as exc:
        print(f"station {prog}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    trusted = key.public if key is not None else None
    if args.public_key is not None:
        trusted = _public_key(args.public_key, prog)
        if trusted is None:
            return EXIT_USAGE
    taken = None
    try:
        with steps.no_station(path):
            staged = steps.stage(args.backup, path, trusted)
            backup_rows = staged.rows
            before = steps.replaced(path)
            aside = steps.aside_of(path) if path.exists() else None
            table = config.table
            if args.from_floor is not None:
                floor = _floor(args.from_floor, args)
                taken = steps.from_floor(staged, floor, table.id, trusted, before)
            try:
                carried = steps.carry_owed(staged, path)
                if taken is not None and taken.complete:
                    steps.continue_as_is(
                        staged, table.id, table.new_table(), key, endorsements, rotations
                    )
                    epoch = None
                else:
                    epoch = steps.begin_epoch(
                        staged, before, aside, table.id, table.new_table(), key, endorsements,
                        rotations,
                    )  # fmt: skip
            except (JournalError, JournalUnavailable):
                staged.discard()
                raise
            steps.put_in_place(staged, path, aside)
    except steps.RestoreRefused as exc:
        print(f"station {prog}: {exc}", file=sys.stderr)
        for problem in exc.problems:
            print(f"{args.backup}: {problem}", file=sys.stderr)
        return 1 if exc.problems else EXIT_USAGE
    except (JournalError, JournalUnavailable, OSError) as exc:
        print(f"station {prog}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    checked = (
        f"signatures verified with key {staged.signatures.trusted.fingerprint}"
        if staged.signatures is not None
        else "signatures not checked (no key known: give --public-key)"
    )
    print(
        f"{args.backup}: rows 1-{backup_rows} checked: hash chain, head anchor, verdicts; {checked}"
    )
    if taken is not None:
        print(
            f"{args.from_floor}: rows {backup_rows + 1}-{taken.last} taken from the floor "
            f"archive ({taken.rows} rows: each follows the one before, hashes and every "
            "verdict checked, signatures as above)"
            if taken.rows
            else f"{args.from_floor}: the floor archive holds no row after row {backup_rows}"
        )
        if taken.missing is not None:
            print(
                f"rows {taken.last + 1}-{taken.missing} were the station's (the journal "
                "replaced, or its last heartbeat, says so) but the floor never had them: "
                "the restored journal is not complete"
            )
    if epoch is None:
        print(
            f"{path}: restored whole, rows 1-{staged.rows}: it continues where it stopped, in "
            "its epoch (no new epoch: every id it hands out is the one it had)"
        )
    else:
        print(
            f"{path}: restored; epoch {epoch.number} begins at row {epoch.since} (ids now name "
            f"journal {epoch.journal}, epoch {epoch.mark}: none is used twice)"
        )
    if carried:
        print(f"{carried} webhook event(s) the journal replaced still owed are sent at start")
    if aside is not None:
        lost = ""
        if before is not None and before.last_seq > staged.rows and epoch is not None:
            rows = f"{staged.rows + 1}-{before.last_seq}"
            lost = f"; its rows {rows} are not in the restored journal (they stay there)"
        print(f"the journal replaced is kept at {aside}{lost}")
    print(
        "start the station: it comes back suspended (STATION_RESTART) if its shoe was in "
        "play, and a supervisor checks the shoe before resuming"
    )
    return EXIT_OK


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
    from station.live.journal.reading import export_line
    from station.live.replay import saying_table

    settings = journal.settings()
    count = 0
    for row in journal.rows(after=after):
        if row.kind != "event":
            continue
        line = export_line(row)
        sink.write(saying_table(line, settings) if count == 0 and settings else line)
        count += 1
    return count

"""`station replay`'s I/O contract of the spec: bytes in, verdict lines and an exit status
out (through `station.cli.main`), and as a process, a pipe answered line by line."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_station, spawn_station


def replay(data: bytes, *args: str) -> tuple[int, list[dict[str, Any]], str]:
    out = run_station("replay", *args, stdin=data)
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    return out.returncode, rows, out.stderr.decode()


def test_seq_is_the_line_number_and_blank_lines_are_skipped() -> None:
    data = b'{"type": "shoe"}\n\n   \n{"type":"card","card":"5H"}\r\n{"type": "cut"}'
    code, rows, _ = replay(data)
    assert code == 0
    assert [r["seq"] for r in rows] == [1, 4, 5]
    assert rows[1]["role"] == "burn_reveal"
    assert rows[2]["ok"] and rows[2]["error"] is None


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (
            b"not json",
            "line 1 is not JSON: unexpected 'n' at column 1; an event is one JSON object, "
            'e.g. {"type": "close_bets"}',
        ),
        (b"[1, 2]", 'an event must be one JSON object, e.g. {"type": "close_bets"}; got an array'),
        (
            b'"shoe"',
            'must be one JSON object, e.g. {"type": "close_bets"}; got a string (\'shoe\')',
        ),
        (b"null", 'must be one JSON object, e.g. {"type": "close_bets"}; got null'),
        (b'{"type": "shoe", "x": NaN}', "NaN and Infinity are not JSON numbers (column 23)"),
        (b'{"type": "card", "card": Infinity}', "NaN and Infinity are not JSON numbers"),
        (b'{"type": "card", "card": -Infinity}', "NaN and Infinity are not JSON numbers"),
        (
            b'{"type": "dance"}',
            "'type' must be one of shoe, card, cut, close_bets, resume, void, end_shoe, "
            "fault, restart, decision; got 'dance'",
        ),
        (b'{"card": "AS"}', "'type' must be one of shoe, card, cut,"),
        (b'{"type": 7}', "'type' must be one of shoe, card, cut,"),
        (b'{"type": "card"}', 'a card event needs a "card" key (a card code, or null'),
        (b"\xff\xfe{}", "line 1 is not JSON: it is not UTF-8 text"),
        (b'{"type": "shoe"', "line 1 is not JSON: it ends before its JSON value does (column 16)"),
        (b"{'type': 'shoe'}", 'unexpected "\'" at column 2 (JSON strings take double quotes)'),
    ],
)
def test_lines_that_are_not_events_are_bad_input_and_the_run_goes_on(
    line: bytes, reason: str
) -> None:
    code, rows, _ = replay(line + b'\n{"type": "shoe"}\n')
    assert code == 0
    assert reason in rows[0].pop("reason")
    assert rows[0] == {
        "seq": 1,
        "ok": False,
        "error": "BAD_INPUT",
        "role": None,
        "round": None,
        "result": None,
        "voided_round": None,
    }
    assert rows[1]["ok"] and rows[1]["seq"] == 2 and "reason" not in rows[1]


def test_only_bad_input_rows_have_a_reason() -> None:
    """A card value that is not a card code is an unreadable card (the spec), not bad
    input: its row has the table's verdict and no reason."""
    data = b'{"type": "card", "card": "AS"}\n{"type": "shoe"}\n{"type": "card", "card": 7}\n'
    _, rows, _ = replay(data + b'{"type": "shoe"}\n[]\n')
    assert [(r["error"], "reason" in r) for r in rows] == [
        ("NO_ACTIVE_SHOE", False),
        (None, False),
        ("UNREADABLE_CARD", False),
        ("SHOE_ACTIVE", False),
        ("BAD_INPUT", True),
    ]


def test_extra_keys_are_ignored_and_codes_are_canonical() -> None:
    burns = "".join(f'{{"type":"card","card":"{r}d"}}\n' for r in "23456789tj").encode()
    deal = "".join(f'{{"type":"card","card":"{c}"}}\n' for c in ["9S", "KD", "10c", "2c"]).encode()
    data = b'{"type":"shoe","ts":1}\n{"type":"card","card":" 10h ","raw":"3130"}\n'
    _, rows, _ = replay(data + burns + b'{"type":"close_bets","actor":"x"}\n' + deal)
    assert rows[1]["role"] == "burn_reveal" and rows[11]["role"] == "burn"
    result = rows[-1]["result"]
    assert result["player"] == ["9S", "TC"] and result["banker"] == ["KD", "2C"]


def test_reads_a_file_and_options(tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    events.write_text('{"type":"shoe"}\n{"type":"card","card":"AS"}\n{"type":"card","card":"AS"}\n')
    code, rows, _ = replay(
        b"", "--decks", "1", "--ungated", "--cut-policy", "last_round", str(events)
    )
    assert code == 0 and rows[2]["error"] == "EXCESS_COPIES"


@pytest.mark.parametrize(
    "args",
    [
        ["--decks", "0"],
        ["--decks", "eight"],
        ["--cut-policy", "never"],
        ["--bogus"],
        ["/nonexistent/events.jsonl"],
        ["a.jsonl", "b.jsonl"],
        ["--paytable", "nosuch"],
        ["--odds", "--paytable", "nosuch"],
        ["--config", "/nonexistent/station.toml"],
    ],
)
def test_bad_arguments_and_unreadable_files_exit_2(args: list[str]) -> None:
    code, rows, err = replay(b'{"type": "shoe"}\n', *args)
    assert code == 2 and rows == [] and err


def test_a_paytable_without_odds_is_checked_and_changes_nothing() -> None:
    data = b'{"type": "shoe"}\n{"type": "card", "card": "5H"}\n'
    plain = run_station("replay", stdin=data)
    checked = run_station("replay", "--paytable", "no_commission", stdin=data)
    assert (checked.returncode, checked.stdout, checked.stderr) == (0, plain.stdout, b"")
    refused = run_station("replay", "--paytable", "nosuch", stdin=data)
    assert refused.returncode == 2 and refused.stdout == b""
    assert refused.stderr.startswith(b"station replay: --paytable: no paytable 'nosuch'")


def test_a_pipe_is_answered_line_by_line() -> None:
    """A rig can talk to replay interactively: each verdict comes before the next event."""
    proc = spawn_station("replay", stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        for line, role in [
            (b'{"type":"shoe"}\n', None),
            (b'{"type":"card","card":"3H"}\n', "burn_reveal"),
        ]:
            proc.stdin.write(line)
            proc.stdin.flush()
            assert json.loads(proc.stdout.readline())["role"] == role
    finally:
        proc.stdin.close()
        assert proc.wait(timeout=10) == 0


@pytest.mark.parametrize(
    ("args", "data"),
    [
        (["replay", "--decks", "1"], b'{"type":"shoe"}\n{"type":"card","card":"AS"}\nnot json\n'),
        (["replay", "--decks", "0"], b""),  # a usage error: argparse exits 2
        (["odds", "--remaining", "-", "--json"], b'{"6S": 20, "TD": 20}\n'),
    ],
)
def test_in_process_runs_give_what_the_process_gives(args: list[str], data: bytes) -> None:
    """`run_station` (the tests' in-process runner) is the command as a user runs it:
    the same output bytes and exit status as `station ARGS` in a process of its own."""
    here = run_station(*args, stdin=data)
    proc = spawn_station(
        *args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    out, err = proc.communicate(data, timeout=60)
    assert (here.returncode, here.stdout, here.stderr) == (proc.returncode, out, err)


def _distinct(lines: list[bytes]) -> bytes:
    """The same events, each line made unlike any other by trailing spaces (JSON that
    decodes alike, bytes that differ): no line is looked up as one decoded before."""
    return b"".join(line + b" " * i + b"\n" for i, line in enumerate(lines))


@pytest.mark.parametrize("args", [[], ["--odds"], ["--decks", "1"]])
def test_repeated_lines_are_decided_as_if_each_were_read_afresh(args: list[str]) -> None:
    """`station replay` decodes a line seen before once (`DECODED_LINES`): the verdicts,
    seqs and reasons (BAD_INPUT, not JSON, a card while suspended) are those of the same
    stream whose lines are all different, with more distinct lines than are kept."""
    deal = [b'{"type":"card","card":"%s","actor":"reader"}' % c.encode() for c in ("5H", "9S")]
    shoe = [b'{"type":"shoe"}', deal[0], *([b'{"type":"close_bets"}', *deal * 2] * 30)]
    hostile = [b"not json", b'{"type":"card"}', b'{"type":"dance"}', b"not json"]
    many = [b'{"type":"cut","n":%d}' % i for i in range(5000)]  # more than are kept
    lines = [*shoe, *hostile, *shoe[1:], *many, *hostile, b'{"type":"resume"}', *shoe]
    repeated = b"".join(line + b"\n" for line in lines)
    code, rows, _ = replay(repeated, *args)
    assert code == 0 and len(rows) == len(lines)
    assert (code, rows) == replay(_distinct(lines), *args)[:2]
    assert sum(1 for r in rows if r["error"] == "BAD_INPUT") >= 2 * len(hostile)

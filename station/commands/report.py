"""`station report [--config FILE | --journal FILE...] [--from T] [--to T] [--table T]
[--format html|json] [--language L] [-o FILE]`: game pace and dealer performance over a
shift.

Per table, per dealer (the token that closed betting) and per shoe: rounds per hour,
seconds per round, bets closed to result, suspensions per 100 rounds by code, the time
to resolve them, voided rounds (`station.core.protection.pace`). JSON for other systems;
HTML a manager prints: one self-contained page, charts as inline SVG, no script, no CDN,
in the language asked for (the screens' catalogues: `station.shared.catalogue`); the JSON
stays language-free (codes and figures).
The journals are read on read-only connections: a running station is not disturbed.
"""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime
from html import escape
from pathlib import Path
from typing import Any

from station.commands.options import EXIT_OK, EXIT_USAGE
from station.shared.catalogue import LANGUAGES, words_of


def moment(text: str) -> datetime:
    """`2026-12-01` or `2026-12-01T06:00[:00][+01:00]`; without a zone, UTC."""
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a date or time (e.g. 2026-12-01 or 2026-12-01T06:00)"
        ) from None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "report",
        help="game pace and dealer performance over a shift (HTML or JSON)",
        description="Rounds per hour, seconds per round, bets closed to result, "
        "suspensions per 100 rounds by code and their resolution time, voided rounds: per "
        "table, per dealer and per shoe, from the journal(s).",
    )
    p.add_argument(
        "--config",
        metavar="FILE",
        default=None,
        help="the station's TOML config: its [journal] path (default: none; give --journal)",
    )
    p.add_argument(
        "--journal",
        metavar="FILE",
        action="append",
        default=[],
        help="a journal file; repeat it for several tables (default: the --config's)",
    )
    p.add_argument(
        "--from",
        dest="start",
        type=moment,
        default=None,
        metavar="T",
        help="count rows from this time on (a date or time, UTC unless it says) "
        "(default: the journal's start)",
    )
    p.add_argument(
        "--to",
        dest="end",
        type=moment,
        default=None,
        metavar="T",
        help="count rows before this time (default: the journal's end)",
    )
    p.add_argument(
        "--table", default=None, metavar="T", help="only this table id (default: every one)"
    )
    p.add_argument(
        "--format",
        choices=("html", "json"),
        default="html",
        help="html: a page to print; json: for other systems (default: html)",
    )
    p.add_argument(
        "--language",
        choices=LANGUAGES,
        default="en",
        help="the HTML page's language: its words, numbers and dates (default: en)",
    )
    p.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        default="-",
        help="where to write it; - is standard output (default -)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import orjson

    paths = [Path(p) for p in args.journal]
    if args.config is not None:
        from station.commands.common import load_config

        config = load_config(args, "report")
        if config is None:
            return EXIT_USAGE
        paths.append(config.journal.path)
    if not paths:
        print("station report: give --journal FILE or --config FILE", file=sys.stderr)
        return EXIT_USAGE
    if args.start and args.end and args.end <= args.start:
        print("station report: --to must be after --from", file=sys.stderr)
        return EXIT_USAGE
    reports = []
    for path in paths:
        try:
            report = table_report(path, args.start, args.end, args.table)
        except ReportError as exc:
            print(f"station report: {exc}", file=sys.stderr)
            return EXIT_USAGE
        if report is not None:
            reports.append(report)
    if not reports:
        print(f"station report: no journal is of table {args.table!r}", file=sys.stderr)
        return EXIT_USAGE
    made = now()
    if args.format == "json":
        body = (
            orjson.dumps({"generated": made, "tables": reports}, option=orjson.OPT_INDENT_2) + b"\n"
        )
    else:
        body = html_report(reports, made, args.language).encode()
    if args.output == "-":
        sys.stdout.buffer.write(body)
        sys.stdout.flush()
    else:
        try:
            Path(args.output).write_bytes(body)
        except OSError as exc:
            print(f"station report: cannot write {args.output}: {exc.strerror}", file=sys.stderr)
            return EXIT_USAGE
    return EXIT_OK


class ReportError(Exception):
    """A journal that cannot be read; the message says which and why."""


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def table_report(
    path: Path, start: datetime | None, end: datetime | None, only: str | None
) -> dict[str, Any] | None:
    """The report of one journal; None when it is not table `only`'s."""
    import sqlite3

    import orjson

    from station.core.protection.pace import Pace
    from station.core.table import Table

    if not path.is_file():
        raise ReportError(f"{path}: no such journal")
    try:
        db = sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True)
        try:
            rows = db.execute("SELECT ts, actor, kind, event FROM journal ORDER BY seq").fetchall()
        finally:
            db.close()
    except sqlite3.Error as exc:
        raise ReportError(f"{path}: cannot read the journal ({exc})") from None
    if not rows or rows[0][2] != "notice":
        raise ReportError(f"{path}: not a station journal (no 'journal created' row)")
    settings = orjson.loads(rows[0][3]).get("table") or {}
    table_id = str(settings.get("id", path.stem))
    if only is not None and table_id != only:
        return None
    keys = ("game", "decks", "gated", "burn", "cut_policy")  # what the journal records
    options = {k: settings[k] for k in keys if k in settings}
    pace = Pace(Table(**options), table_id, start, end)
    for ts, actor, kind, event in rows:
        if kind == "event":
            pace.row(ts, actor, orjson.loads(event))
    return {"journal": str(path), **pace.report()}


# -- the HTML page ----------------------------------------------------------------------
#
# A page a manager reads on paper, a desktop or a phone: times in the station's own time
# zone to the second (the journal's are UTC to the microsecond), the dashboard's words for
# the figures, wide tables scrolled within their box on a phone, charts that scale.

CSS = """
body { font: 11pt/1.35 system-ui, sans-serif; color: #111; margin: 1.5em; }
h1 { font-size: 1.5em; margin: 0 0 .2em; } h2 { font-size: 1.2em; margin: 1.4em 0 .4em; }
h3 { font-size: 1em; margin: 1em 0 .3em; }
.wide { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; margin: .4em 0; } th, td { border: 1px solid #999;
padding: .2em .5em; text-align: right; vertical-align: bottom; }
th:first-child, td:first-child { text-align: left; } td { white-space: nowrap; }
thead th { background: #eee; font-weight: 600; } .meta { color: #444; }
svg { display: block; margin: .3em 0; width: 100%; height: auto; }
section { page-break-inside: avoid; }
@media (max-width: 600px) { body { margin: .8em; font-size: 10pt; } th { white-space: nowrap; } }
@media print { body { margin: 0; } .wide { overflow: visible; } }
"""

#: The figures of every row; their words are the catalogue's `report.col.<figure>`.
COLUMNS = (
    "rounds",
    "voided_rounds",
    "rounds_per_hour",
    "seconds_per_round",
    "close_to_result_seconds",
    "suspensions",
    "suspensions_per_100_rounds",
    "resolve_seconds",
    "resolve_seconds_max",
)

#: How each language writes a number: its thousands separator and decimal mark (what
#: the browser's Intl writes for the dashboard's locales: "1,234.5", "1 234,5").
NUMBER_MARKS = {
    "en": (",", "."),
    "fr": ("\u202f", ","),
    "zh-Hant": (",", "."),
    "zh-Hans": (",", "."),
}
#: How each language writes a day and a time to the second.
DATE_FORMATS = {
    "en": ("%Y-%m-%d %H:%M:%S", "%H:%M:%S"),
    "fr": ("%d/%m/%Y %H:%M:%S", "%H:%M:%S"),
    "zh-Hant": ("%Y年%m月%d日 %H:%M:%S", "%H:%M:%S"),
    "zh-Hans": ("%Y年%m月%d日 %H:%M:%S", "%H:%M:%S"),
}


def number(value: Any, language: str = "en") -> str:
    """A figure as `language` writes it: `1,234.5`, `1 234,5` (an integer stays one)."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return str(value)
    thousands, decimal = NUMBER_MARKS[language]
    text = f"{value:,}" if isinstance(value, int) else f"{value:,.10g}"
    if "e" in text:  # a figure too large or small for plain digits stays as Python wrote it
        return text
    return text.replace(",", "\0").replace(".", decimal).replace("\0", thousands)


def local_time(text: str | None) -> datetime | None:
    """A journal's or the report's time (ISO, `Z` or `+00:00`) in this machine's zone."""
    if not text:
        return None
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone()


def clock(when: datetime | None, day: bool = True, language: str = "en") -> str:
    """`2026-12-02 08:38:53` (to the second), or `08:38:53` without the day; the day as
    `language` writes it (`02/12/2026`, `2026年12月02日`)."""
    if when is None:
        return "–"
    with_day, alone = DATE_FORMATS[language]
    return when.strftime(with_day if day else alone)


def span_words(first: str | None, last: str | None, language: str = "en") -> str:
    """`2026-12-02 08:38:53 to 12:42:56` (the day said once when both are on it)."""
    start, end = local_time(first), local_time(last)
    same_day = start is not None and end is not None and start.date() == end.date()
    t = words_of(language)
    return t(
        "report.span",
        start=clock(start, language=language),
        end=clock(end, day=not same_day, language=language),
    )


def zone_words(when: datetime) -> str:
    """The zone the page's times are in: `UTC`, `CET (UTC+01:00)`."""
    name = when.strftime("%Z")
    offset = when.strftime("%z")
    offset = f"UTC{offset[:3]}:{offset[3:]}" if offset else ""
    return name if offset in ("", "UTC+00:00") and name else f"{name} ({offset})".strip()


def code_words(code: str, language: str = "en") -> str:
    """A suspension code as a manager reads it: `UNREADABLE_CARD` -> `unreadable card`,
    `carte illisible`, `無法辨認的牌` (a code the catalogue does not know, spaced)."""
    from station.shared.catalogue import catalogue

    return catalogue(language).get(f"cause.{code}") or code.replace("_", " ").lower()


def _cell(value: Any, language: str) -> str:
    return "–" if value is None else escape(number(value, language))


def _table(head: list[str], rows: list[list[Any]], language: str = "en") -> str:
    th = "".join(f"<th scope='col'>{escape(h)}</th>" for h in head)
    body = "".join(
        "<tr>" + "".join(f"<td>{_cell(v, language)}</td>" for v in r) + "</tr>" for r in rows
    )
    return (
        f"<div class='wide'><table><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table></div>"
    )


def text_width(text: str, size: float = 12) -> float:
    """About how wide `text` is drawn in a sans-serif at `size` px (a generous guess, so a
    label is never cut): a Chinese character is a full em, a Latin letter about 0.62."""
    import unicodedata

    return sum(size * (1.0 if unicodedata.east_asian_width(c) in "WF" else 0.62) for c in text)


def bar_chart(title: str, bars: list[tuple[str, float]], language: str = "en") -> str:
    """A horizontal bar chart as inline SVG (prints as drawn, no script), as wide as the
    longest name and value need, scaled down to the page on a phone. The title says the
    unit: each bar ends with its figure alone."""
    if not bars:
        return f"<p class='meta'>{escape(words_of(language)('report.nothing', title=title))}</p>"
    top = max(v for _, v in bars) or 1.0
    row, bar_w = 22, 280
    label_w = max(text_width(name) for name, _ in bars) + 12
    value_w = max(text_width(number(value, language)) for _, value in bars) + 12
    width = label_w + bar_w + value_w
    height = row * len(bars) + 8
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width:.0f} {height}" '
        f'style="max-width: {width:.0f}px" role="img" aria-label="{escape(title)}">'
    ]
    for i, (name, value) in enumerate(bars):
        y = 4 + i * row
        bar = bar_w * value / top
        parts.append(
            f'<text x="{label_w - 6:.0f}" y="{y + 15}" text-anchor="end" font-size="12">'
            f"{escape(name)}</text>"
            f'<rect x="{label_w:.0f}" y="{y + 2}" width="{bar:.1f}" height="{row - 6}" '
            f'fill="#37474f"/><text x="{label_w + bar + 5:.1f}" y="{y + 15}" '
            f'font-size="12">{escape(number(value, language))}</text>'
        )
    parts.append("</svg>")
    return f"<h3>{escape(title)}</h3>" + "".join(parts)


def html_report(reports: list[dict[str, Any]], generated: str, language: str = "en") -> str:
    made = local_time(generated)
    assert made is not None
    t = words_of(language)
    columns = [t(f"report.col.{k}") for k in COLUMNS]
    sections = []
    for r in reports:
        totals = r["totals"]
        span = span_words(r["from"] or r["first_row"], r["to"] or r["last_row"], language)
        dealers = r["dealers"]
        dealer_rows = [[name, *(d[k] for k in COLUMNS)] for name, d in dealers.items()]
        shoe_rows = [
            [
                s["shoe"],
                clock(local_time(s["started"]), language=language),
                ", ".join(s["dealers"]),
                *(s[k] for k in COLUMNS),
            ]
            for s in r["shoes"]
        ]
        codes = totals["suspensions_per_100_rounds_by_code"]
        sections.append(
            f"<section><h2>{escape(t('report.table', name=r['table']))}</h2>"
            f"<p class='meta'>{escape(t('report.meta', span=span, path=r['journal']))}</p>"
            + _table(
                [t("report.th_table"), *columns],
                [[r["table"], *(totals[k] for k in COLUMNS)]],
                language,
            )
            + bar_chart(
                t("report.chart_rph"),
                [(n, d["rounds_per_hour"]) for n, d in dealers.items() if d["rounds_per_hour"]],
                language,
            )
            + bar_chart(
                t("report.chart_causes"),
                [(code_words(c, language), v) for c, v in codes.items()],
                language,
            )
            + f"<h3>{escape(t('report.dealers'))}</h3>"
            + _table([t("report.dealer"), *columns], dealer_rows, language)
            + f"<h3>{escape(t('report.shoes'))}</h3>"
            + _table(
                [t("report.shoe"), t("report.started"), t("report.dealers"), *columns],
                shoe_rows,
                language,
            )
            + "</section>"
        )
    title = escape(t("report.title"))
    made_words = t("report.made", time=clock(made, language=language), zone=zone_words(made))
    return (
        f"<!DOCTYPE html><html lang='{language}'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{title}</title>"
        f"<style>{CSS}</style></head><body>"
        f"<h1>{title}</h1>"
        f"<p class='meta'>{escape(made_words)}</p>" + "".join(sections) + "</body></html>\n"
    )

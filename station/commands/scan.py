"""`station scan --source SRC --model MODEL`: one JSON line per card passage, for
checking a camera at a test rig without starting the station."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from station.commands.options import EXIT_USAGE


def add_parser(sub: Any) -> None:
    p = sub.add_parser("scan", help="print the cards a camera sees, one JSON line each",
                       description="Read a camera, video file or image sequence and print "
                                   '{"card": "AS" | null, "frame": n, "confidence": c} per '
                                   "card passage.")  # fmt: skip
    p.add_argument("--source", required=True,
                   help="device index (0), video file, image pattern or stream URL")
    p.add_argument("--model", help="a rank-suit model (station calibrate camera)")
    p.add_argument("--barcode", metavar="CODEC", default=None,
                   help="read printed barcodes instead, decoded by this codec "
                        "(text, suit-rank-4, index52, table:FILE)")  # fmt: skip
    p.add_argument("--roi", default=None, metavar="X,Y,W,H")
    p.add_argument("--level", type=int, default=None, help="card-stock level (0-255)")
    p.add_argument("--min-confidence", type=float, default=None)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import dataclasses

    import orjson

    from drivers.camera import CameraSettings, make_recogniser
    from drivers.config import ConfigError
    from drivers.recognition.scanner import Scanner, event
    from drivers.recognition.source import SourceError, frames, open_source, parse_roi

    if (args.model is None) == (args.barcode is None):
        print("station scan: give --model MODEL (rank-suit) or --barcode CODEC",
              file=sys.stderr)  # fmt: skip
        return EXIT_USAGE
    try:
        settings = CameraSettings(
            source=args.source, recogniser="barcode" if args.barcode else "rank-suit",
            model=args.model or "", roi=parse_roi(args.roi, "--roi"),
            min_confidence=args.min_confidence,
        )  # fmt: skip
        if args.level is not None:
            settings = dataclasses.replace(
                settings, passage=dataclasses.replace(settings.passage, level=args.level))
        recogniser = make_recogniser(settings, args.barcode or "text")
        capture = open_source(args.source)
    except (ConfigError, SourceError, ValueError) as exc:
        print(f"station scan: {exc}", file=sys.stderr)
        return EXIT_USAGE
    scanner = Scanner(recogniser, settings.passage, settings.roi)
    out = sys.stdout.buffer
    try:
        for passage in scanner.scan(frames(capture)):
            row = {k: v for k, v in event(passage).items() if k != "type"}
            out.write(orjson.dumps(row) + b"\n")
            out.flush()
    except SourceError as exc:
        print(f"station scan: {exc}", file=sys.stderr)
        return EXIT_USAGE
    finally:
        capture.release()
    return 0

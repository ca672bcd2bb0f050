"""`station scan --source SRC --model MODEL`: one JSON line per card passage, for
checking a camera at a test rig without starting the station.

With `--config FILE` the station's `[reader.camera]` settings (and its `[reader] codec`
for the barcode recogniser) are the defaults of the options not given, so
`station scan --config /etc/baccarat-station/station.toml` checks a configured camera."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from station.commands.common import add_config_option
from station.commands.options import EXIT_USAGE, fraction

if TYPE_CHECKING:
    from drivers.config import CameraSettings


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "scan",
        help="print the cards a camera sees, one JSON line each",
        description="Read a camera, video file or image sequence and print "
        '{"card": "AS" | null, "frame": n, "confidence": c} per '
        "card passage. Options not given come from --config's "
        "[reader.camera].",
    )
    add_config_option(p)
    p.add_argument(
        "--source",
        default=None,
        metavar="SRC",
        help="device index (0), video file, image pattern or stream URL "
        "(default: [reader.camera] source)",
    )
    p.add_argument(
        "--model",
        metavar="MODEL",
        help="a rank-suit model file (.npz, made by `station calibrate camera`) "
        "(default: [reader.camera] model)",
    )
    p.add_argument(
        "--barcode",
        metavar="CODEC",
        default=None,
        help="read printed barcodes instead, decoded by this codec "
        "(text, suit-rank-4, index52, table:FILE) (default: [reader.camera] recogniser "
        "and [reader] codec)",
    )
    p.add_argument(
        "--roi",
        default=None,
        metavar="X,Y,W,H",
        help="the region of the frame to watch, in pixels: left, top, width, height "
        "(default: [reader.camera] roi, else the whole frame)",
    )
    p.add_argument(
        "--level",
        type=int,
        default=None,
        metavar="0-255",
        help="darkest-channel level of card stock, 0-255 (default: [reader.camera] level, "
        "else 110)",
    )
    p.add_argument(
        "--min-confidence",
        type=fraction,
        default=None,
        metavar="0-1",
        help="below this match score (0 to 1) a card is reported unreadable (null) "
        "(default: [reader.camera] min_confidence, else the model's own threshold)",
    )
    p.set_defaults(func=run)


def configured_camera(path: Path | None) -> tuple[CameraSettings, str] | None:
    """The `[reader.camera]` settings and the `[reader] codec` of the station config at
    `path` (None for no --config), checked as `station run` checks them. Raises
    `ConfigError` naming the file and the key if they cannot be used."""
    from station.live.config import load
    from station.shared.sections import ConfigError

    if path is None:
        return None
    reader = load(path).reader
    if reader is None or reader.camera is None:
        raise ConfigError(
            f"{path}: [reader.camera]: no such table, the config has no camera "
            "reader (see `station config example`); give the options instead"
        )
    return reader.camera, reader.codec


def missing(option: str, key: str) -> str:
    """Why a command cannot run without `option` (or the config `key`)."""
    return f"give {option}, or --config FILE with [reader.camera] {key}"


def run(args: argparse.Namespace) -> int:
    import orjson
    from pydantic import ValidationError

    from drivers.camera import make_recogniser
    from drivers.config import CameraSettings, parse_roi
    from drivers.recognition.scanner import Scanner, event
    from drivers.recognition.source import SourceError, frame_rate, frames, open_source
    from station.shared.sections import ConfigError, describe

    if args.model is not None and args.barcode is not None:
        print(
            "station scan: give --model MODEL (rank-suit) or --barcode CODEC, not both",
            file=sys.stderr,
        )
        return EXIT_USAGE
    try:
        configured = configured_camera(args.config)
        values: dict[str, Any] = configured[0].model_dump() if configured else {}
        codec = configured[1] if configured else "text"
        if args.model is not None:
            values.update(recogniser="rank-suit", model=args.model)
        elif args.barcode is not None:
            values["recogniser"], codec = "barcode", args.barcode
        elif configured is None:
            raise ConfigError(
                "give --model MODEL (rank-suit) or --barcode CODEC, or --config "
                "FILE with a [reader.camera] table"
            )
        if args.source is not None:
            values["source"] = args.source
        if not values.get("source"):
            raise ConfigError(missing("--source SRC", "source"))
        if args.roi is not None:
            values["roi"] = parse_roi(args.roi, "--roi")
        if args.min_confidence is not None:
            values["min_confidence"] = args.min_confidence
        if args.level is not None:
            values["level"] = args.level
        try:
            settings = CameraSettings.model_validate(values)
        except ValidationError as exc:
            raise ConfigError(describe(exc, CameraSettings, ("reader", "camera"))) from None
        recogniser = make_recogniser(settings, codec)
        capture = open_source(settings.source)
    except (ConfigError, SourceError, ValueError) as exc:
        print(f"station scan: {exc}", file=sys.stderr)
        return EXIT_USAGE
    scanner = Scanner(recogniser, settings.passage, settings.roi)
    scanner.pace(frame_rate(capture))
    out = sys.stdout.buffer
    try:
        for passage in scanner.scan(frames(capture)):
            row = {k: v for k, v in event(passage).items() if k != "type"}
            out.write(orjson.dumps(row) + b"\n")
            out.flush()
    except SourceError as exc:
        print(f"station scan: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:  # how a camera (which never ends) is stopped
        return 130
    except BrokenPipeError:  # the reader went away (e.g. `| head`): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    finally:
        capture.release()
    return 0

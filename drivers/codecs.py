"""Barcode codecs: what a shoe reader sends for a card, turned into a card code.

They belong to the readers (serial shoes, the camera's barcode recogniser, the rigs that
play a shoe into a pty), not to the rules: the core only ever sees canonical card codes.
A payload that names no card decodes to None (an unreadable card), never an exception.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Protocol

from station.core.cards import ALL_CARDS, RANKS, parse_card


class CodecError(ValueError):
    """A codec could not be set up (bad name, bad mapping file): a configuration error."""


class Codec(Protocol):
    """Turns what a shoe reader sends for a card into a card code, and back for simulators."""

    name: str

    def decode(self, payload: str) -> str | None:
        """The card for a reader payload, or None when it names no card (never raises)."""
        ...

    def encode(self, card: str) -> str:
        """The payload a reader using this codec sends for `card`."""
        ...


class TextCodec:
    """Payloads that spell the card: `AS`, `10H`, `td` (what `parse_card` accepts)."""

    name = "text"

    def decode(self, payload: str) -> str | None:
        return parse_card(payload)

    def encode(self, card: str) -> str:
        return card


# suit-rank-4: suit digit (1=S 2=H 3=C 4=D) then rank * 10 on three digits (010=A ... 130=K).
_SR4_SUITS = "SHCD"


class SuitRank4Codec:
    """Four digits: suit (1=S 2=H 3=C 4=D) then rank 010=A, 020=2 ... 100=T, 110=J ... 130=K."""

    name = "suit-rank-4"

    def __init__(self) -> None:
        self._decode = {self.encode(c): c for c in ALL_CARDS}

    def decode(self, payload: str) -> str | None:
        return self._decode.get(payload.strip()) if isinstance(payload, str) else None

    def encode(self, card: str) -> str:
        return f"{_SR4_SUITS.index(card[1]) + 1}{(RANKS.index(card[0]) + 1) * 10:03d}"


class Index52Codec:
    """A number 0..51: suits in the order S H D C, ranks A..K within a suit (0 = AS, 51 = KC).

    Leading zeros are accepted (`07` is 8S), as some readers pad to a fixed width.
    """

    name = "index52"

    def decode(self, payload: str) -> str | None:
        if not isinstance(payload, str):
            return None
        text = payload.strip()
        if not (text.isascii() and text.isdigit()) or len(text) > 3:
            return None
        index = int(text)
        return ALL_CARDS[index] if index < 52 else None

    def encode(self, card: str) -> str:
        return str(ALL_CARDS.index(card))


class TableCodec:
    """A vendor's barcodes mapped to cards by a CSV file of `barcode,card` rows.

    Blank lines and lines starting with `#` are ignored, and so is a first row
    `barcode,card`. Several barcodes may name the same card (decks from different
    print runs); one barcode naming two cards is refused.
    """

    def __init__(self, mapping: Mapping[str, str], source: str = "table") -> None:
        self.name = f"table:{source}"
        self._decode = dict(mapping)
        self._encode: dict[str, str] = {}
        for barcode, card in self._decode.items():
            self._encode.setdefault(card, barcode)

    @classmethod
    def from_csv(cls, path: str | Path) -> TableCodec:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise CodecError(f"cannot read the barcode table {path}: {exc.strerror}") from exc
        except UnicodeDecodeError as exc:
            raise CodecError(f"cannot read the barcode table {path}: not UTF-8 ({exc})") from exc
        mapping: dict[str, str] = {}
        for lineno, row in _csv_rows(text):
            if len(row) != 2:
                raise CodecError(f"{path}:{lineno}: expected 'barcode,card', got {row!r}")
            barcode, card_text = row[0].strip(), row[1].strip()
            if lineno == 1 and (barcode.lower(), card_text.lower()) == ("barcode", "card"):
                continue
            card = parse_card(card_text)
            if card is None:
                raise CodecError(f"{path}:{lineno}: {card_text!r} is not a card code (e.g. AS, TD)")
            if mapping.get(barcode, card) != card:
                other = mapping[barcode]
                raise CodecError(f"{path}:{lineno}: barcode {barcode!r} maps to {other} and {card}")
            mapping[barcode] = card
        if not mapping:
            raise CodecError(f"{path}: the barcode table is empty")
        return cls(mapping, source=str(path))

    def decode(self, payload: str) -> str | None:
        return self._decode.get(payload.strip()) if isinstance(payload, str) else None

    def encode(self, card: str) -> str:
        try:
            return self._encode[card]
        except KeyError:
            raise CodecError(f"the barcode table {self.name} has no barcode for {card}") from None


def _csv_rows(text: str) -> Iterator[tuple[int, list[str]]]:
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        yield lineno, next(csv.reader([line]))


CODEC_NAMES = ("text", "suit-rank-4", "index52", "table:FILE")


def make_codec(spec: str) -> Codec:
    """The codec named in configuration: `text`, `suit-rank-4`, `index52` or `table:FILE`."""
    if spec == "text":
        return TextCodec()
    if spec == "suit-rank-4":
        return SuitRank4Codec()
    if spec == "index52":
        return Index52Codec()
    if spec.startswith("table:") and len(spec) > len("table:"):
        return TableCodec.from_csv(spec[len("table:") :])
    raise CodecError(f"unknown codec {spec!r}; choose one of {', '.join(CODEC_NAMES)}")

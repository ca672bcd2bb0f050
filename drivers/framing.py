"""Byte-stream framers of shoe readers: bytes in, frames out, no port and no clock.

They are pure so they can be fuzzed without a serial port: whatever bytes arrive, every
byte ends up in exactly one `Frame`, and a frame that is not well formed is `garbled`
(the driver turns it into an unreadable card, so the table suspends). Nothing a reader
sent is dropped, except the empty lines between line terminators (`CR LF` is a line
ended by CR followed by an empty line ended by LF).

Framings:
- `line`: the payload ended by CR, LF or CR LF.
- `stx-etx`: STX payload ETX BCC, with BCC the XOR of the bytes after STX up to and
  including ETX. Bytes between frames are line noise.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

STX = 0x02
ETX = 0x03
CR = 0x0D
LF = 0x0A

FRAMINGS = ("line", "stx-etx")

#: `frame`: well formed, `payload` is set. `garbled`: a frame that failed its check, was
#: cut short, was over-long, or line noise (an unreadable card). `tail`: more bytes of an
#: over-long line already reported as garbled (journaled, not a second card).
FrameKind = Literal["frame", "garbled", "tail"]


@dataclass(frozen=True, slots=True)
class Frame:
    """One unit the reader sent: a payload, or bytes that could not be one and why."""

    kind: FrameKind
    raw: bytes
    payload: bytes = b""
    problem: str = ""


class Framer(Protocol):
    """Cuts a byte stream into frames. `feed` keeps any incomplete frame for the next call."""

    name: str

    def feed(self, data: bytes) -> list[Frame]:
        """The frames that `data` completes, in order."""
        ...

    def flush(self, why: str) -> list[Frame]:
        """Whatever is pending (a frame cut short, noise) as a garbled frame, saying `why`:
        the line went quiet or the port was lost. Empty if nothing is pending."""
        ...

    @property
    def pending(self) -> bool:
        """True when bytes are held back waiting for the rest of a frame."""
        ...


def bcc(body: bytes) -> int:
    """The block check character: XOR of the bytes after STX up to and including ETX."""
    check = 0
    for byte in body:
        check ^= byte
    return check


def encode_frame(framing: str, payload: bytes, prefix: bytes = b"", suffix: bytes = b"") -> bytes:
    """The bytes a reader using `framing` sends for `payload` (for simulators and tests)."""
    body = prefix + payload + suffix
    if framing == "line":
        return body + b"\r\n"
    if framing == "stx-etx":
        return bytes([STX]) + body + bytes([ETX, bcc(body + bytes([ETX]))])
    raise ValueError(f"unknown framing {framing!r}; choose one of {', '.join(FRAMINGS)}")


class LineFramer:
    """Lines ended by CR, LF or CR LF; a line longer than `max_frame` bytes is cut.

    An over-long line is reported once as a garbled frame (its first `max_frame` bytes)
    and the rest of it, up to its terminator, as `tail` frames of at most `max_frame`
    bytes: one suspension per bad line, every byte still journaled, bounded memory.
    """

    name = "line"

    def __init__(self, max_frame: int = 64) -> None:
        if max_frame < 1:
            raise ValueError(f"max_frame must be at least 1, got {max_frame}")
        self.max_frame = max_frame
        self._buffer = bytearray()
        self._overlong = False  # inside a line already reported as over-long

    @property
    def pending(self) -> bool:
        return bool(self._buffer)

    def feed(self, data: bytes) -> list[Frame]:
        frames: list[Frame] = []
        start = 0
        size = len(data)
        while start < size:
            end = _next_terminator(data, start)
            piece = data[start:end]
            if len(self._buffer) + len(piece) > self.max_frame or self._overlong:
                self._spill(piece, frames)
            else:
                self._buffer += piece
            if end == size:
                break
            self._end_line(frames)
            start = end + 1
        return frames

    def flush(self, why: str) -> list[Frame]:
        frames: list[Frame] = []
        if self._buffer:
            raw = bytes(self._buffer)
            if self._overlong:
                frames.append(Frame("tail", raw, problem=f"rest of an over-long line ({why})"))
            else:
                frames.append(Frame("garbled", raw, problem=f"line without terminator ({why})"))
        self._buffer.clear()
        self._overlong = False
        return frames

    def _spill(self, piece: bytes, frames: list[Frame]) -> None:
        """Add to an over-long line: report each `max_frame` bytes as soon as they are in."""
        self._buffer += piece
        while len(self._buffer) > self.max_frame or (
            self._overlong and len(self._buffer) >= self.max_frame
        ):
            cut = bytes(self._buffer[: self.max_frame])
            del self._buffer[: self.max_frame]
            if self._overlong:
                frames.append(Frame("tail", cut, problem="rest of an over-long line"))
            else:
                problem = f"line longer than {self.max_frame} bytes: cut"
                frames.append(Frame("garbled", cut, problem=problem))
                self._overlong = True

    def _end_line(self, frames: list[Frame]) -> None:
        raw = bytes(self._buffer)
        self._buffer.clear()
        if self._overlong:
            if raw:
                frames.append(Frame("tail", raw, problem="end of an over-long line"))
            self._overlong = False
        elif raw:
            frames.append(Frame("frame", raw, payload=raw))


def _next_terminator(data: bytes, start: int) -> int:
    """Index of the first CR or LF at or after `start`, or len(data)."""
    cr = data.find(b"\r", start)
    lf = data.find(b"\n", start)
    if cr < 0:
        return lf if lf >= 0 else len(data)
    return cr if lf < 0 else min(cr, lf)


class StxEtxFramer:
    """STX payload ETX BCC. Bytes outside a frame are noise, reported as a garbled frame
    when the next STX arrives, when they reach `max_frame` bytes, or when flushed."""

    name = "stx-etx"

    def __init__(self, max_frame: int = 64) -> None:
        if max_frame < 1:
            raise ValueError(f"max_frame must be at least 1, got {max_frame}")
        self.max_frame = max_frame
        self._noise = bytearray()
        self._frame = bytearray()  # from STX on, while inside a frame
        self._await_bcc = False

    @property
    def pending(self) -> bool:
        return bool(self._noise or self._frame)

    def feed(self, data: bytes) -> list[Frame]:
        frames: list[Frame] = []
        for byte in data:
            if self._await_bcc:
                self._frame.append(byte)
                self._close_frame(byte, frames)
            elif self._frame:
                if byte == STX:  # a new frame starts inside this one: this one was cut short
                    self._garble(frames, "frame cut short by a new STX")
                    self._frame.append(byte)
                else:
                    self._frame.append(byte)
                    if byte == ETX:
                        self._await_bcc = True
                    elif len(self._frame) > self.max_frame + 1:  # STX + payload
                        self._garble(frames, f"frame longer than {self.max_frame} bytes: cut")
            elif byte == STX:
                self._report_noise(frames)
                self._frame.append(byte)
            else:
                self._noise.append(byte)
                if len(self._noise) >= self.max_frame:
                    self._report_noise(frames)
        return frames

    def flush(self, why: str) -> list[Frame]:
        frames: list[Frame] = []
        self._report_noise(frames, why)
        if self._frame:
            self._garble(frames, f"frame cut short ({why})")
        return frames

    def _close_frame(self, check: int, frames: list[Frame]) -> None:
        raw = bytes(self._frame)
        self._frame.clear()
        self._await_bcc = False
        body = raw[1:-1]  # payload + ETX
        expected = bcc(body)
        if check != expected:
            problem = f"block check {check:#04x} does not match {expected:#04x}"
            frames.append(Frame("garbled", raw, problem=problem))
        else:
            frames.append(Frame("frame", raw, payload=body[:-1]))

    def _garble(self, frames: list[Frame], problem: str) -> None:
        frames.append(Frame("garbled", bytes(self._frame), problem=problem))
        self._frame.clear()
        self._await_bcc = False

    def _report_noise(self, frames: list[Frame], why: str = "") -> None:
        if self._noise:
            problem = "bytes outside a frame" + (f" ({why})" if why else "")
            frames.append(Frame("garbled", bytes(self._noise), problem=problem))
            self._noise.clear()


def make_framer(name: str, max_frame: int = 64) -> Framer:
    """The framer named in configuration: `line` or `stx-etx`."""
    if name == "line":
        return LineFramer(max_frame)
    if name == "stx-etx":
        return StxEtxFramer(max_frame)
    raise ValueError(f"unknown framing {name!r}; choose one of {', '.join(FRAMINGS)}")

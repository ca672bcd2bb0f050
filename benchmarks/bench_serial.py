"""Serial reader speed: framing + decoding throughput, and the driver's latency on a pty.

Latency is measured from the moment the last byte of a frame is written into the pty's
master to the moment the driver hands the event to its sink (the station's budget from
the last byte of a frame to the verdict at a WebSocket client is 5 ms at p99; this is
the reader's share). A real 9600-baud line adds about 1 ms per byte of transmission
before that last byte arrives; that is the line's, not ours.
"""

from __future__ import annotations

import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from drivers.config import ReaderConfig
from drivers.decoding import FrameDecoder
from drivers.framing import encode_frame, make_framer
from drivers.serial_reader import SerialReader
from drivers.sim.pty import PtyPort
from station.core.cards import ALL_CARDS

FRAMES = 200_000
CHUNK = 4096
LATENCY_FRAMES = 1000
GAP = 0.003  # between frames: one frame at a time, as a shoe sends them


def throughput(framing: str) -> float:
    """Frames a second through framer and decoder, fed in 4 KiB reads."""
    stream = b"".join(encode_frame(framing, ALL_CARDS[i % 52].encode()) for i in range(FRAMES))
    decoder = FrameDecoder(ReaderConfig(framing=framing))
    framer = make_framer(framing)
    started = time.perf_counter()
    events = 0
    for offset in range(0, len(stream), CHUNK):
        for frame in framer.feed(stream[offset : offset + CHUNK]):
            events += decoder.event(frame) is not None
    elapsed = time.perf_counter() - started
    assert events == FRAMES
    return FRAMES / elapsed


class TimingSink:
    def __init__(self) -> None:
        self.arrived: list[float] = []
        self.got = threading.Semaphore(0)

    def event(self, event: dict[str, Any]) -> None:
        self.arrived.append(time.perf_counter())
        self.got.release()

    def notice(self, message: str, **details: Any) -> None:
        pass


def latency(framing: str) -> list[float]:
    """Milliseconds from the last byte written to the event at the sink, per frame."""
    with tempfile.TemporaryDirectory() as tmp:
        port = PtyPort(Path(tmp) / "shoe")
        reader = SerialReader(ReaderConfig(url=str(port.link), framing=framing))
        sink = TimingSink()
        stop = threading.Event()
        thread = threading.Thread(target=reader.run, args=(sink, stop), daemon=True)
        thread.start()
        port.wait_reader(timeout=10)
        sent: list[float] = []
        try:
            for i in range(LATENCY_FRAMES):
                frame = encode_frame(framing, ALL_CARDS[i % 52].encode())
                port.write(frame)
                sent.append(time.perf_counter())
                if not sink.got.acquire(timeout=5):
                    raise RuntimeError("the reader stopped passing frames on")
                time.sleep(GAP)
        finally:
            stop.set()
            thread.join(timeout=5)
            port.close()
    return [(a - s) * 1000 for s, a in zip(sent, sink.arrived, strict=True)]


def main() -> None:
    for framing in ("line", "stx-etx"):
        rate = throughput(framing)
        print(f"{framing:>7} framing + text codec: {rate:,.0f} frames/s ({FRAMES} frames)")
    for framing in ("line", "stx-etx"):
        ms = sorted(latency(framing))
        p50 = statistics.median(ms)
        p99 = ms[int(len(ms) * 0.99) - 1]
        print(
            f"{framing:>7} pty latency, last byte -> sink: p50 {p50:.3f} ms, "
            f"p99 {p99:.3f} ms, max {ms[-1]:.3f} ms ({len(ms)} frames)"
        )


if __name__ == "__main__":
    main()
